"""bot.client stands alone: importing it loads nothing of bot but itself and the contract."""

from __future__ import annotations

import importlib
import inspect

import pytest

import bot.client
from tests.support import modules_loaded_by


def test_importing_the_client_loads_no_other_bot_module() -> None:
    """A fresh interpreter that imports bot.client has no bot.* outside it and bot.contract,
    nor aiohttp.web."""
    loaded = modules_loaded_by("bot.client")
    outside = [
        name
        for name in loaded
        if name.startswith("bot.") and not name.startswith(("bot.client", "bot.contract"))
    ]
    assert outside == []
    assert "bot.contract.models" in loaded
    assert "aiohttp.web" not in loaded
    assert not any(name.startswith(("asyncpg", "slack_", "botbuilder")) for name in loaded)


def test_public_names_are_sorted_and_exported() -> None:
    """__all__ is sorted and every name in it resolves."""
    assert list(bot.client.__all__) == sorted(bot.client.__all__)
    for name in bot.client.__all__:
        assert getattr(bot.client, name) is not None


_MOVED = ("decisions", "edits", "form_schema", "identity", "json_values", "models", "payloads")


def test_the_clients_old_module_paths_name_the_contracts_objects() -> None:
    """Code importing ``bot.client.models`` (and the other moved modules) gets the very
    objects ``bot.contract`` defines, so no user import broke with the move."""
    for name in (*_MOVED, "routes"):
        old = importlib.import_module(f"bot.client.{name}")
        new = importlib.import_module(f"bot.contract.{name}")
        public = [
            attr
            for attr, value in vars(new).items()
            if not attr.startswith("_") and not inspect.ismodule(value)
        ]
        assert public, name
        assert [attr for attr in public if getattr(old, attr, None) is not vars(new)[attr]] == []


def test_the_contracts_errors_share_the_servers_root() -> None:
    """An identity or form answer refused on a server path is a project error (BotError)
    and still the client's BridgeError, with its name and message unchanged."""
    from bot.contract.errors import BotError as ContractRoot
    from bot.contract.errors import FormAnswerError
    from bot.contract.identity import IdentityError, canonical
    from bot.errors import BotError

    assert BotError is ContractRoot
    with pytest.raises(IdentityError) as refused:
        canonical("nobody")
    assert isinstance(refused.value, BotError) and isinstance(refused.value, bot.client.BridgeError)
    error = FormAnswerError({"size": "is required"})
    assert isinstance(error, BotError) and str(error) == "property 'size' is required."
