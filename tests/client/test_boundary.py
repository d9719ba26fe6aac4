"""bot.client stands alone: importing it loads nothing else of bot, and no server."""

from __future__ import annotations

import bot.client
from tests.support import modules_loaded_by


def test_importing_the_client_loads_no_other_bot_module() -> None:
    """A fresh interpreter that imports bot.client has no bot.* outside it, nor aiohttp.web."""
    loaded = modules_loaded_by("bot.client")
    outside = [
        name for name in loaded if name.startswith("bot.") and not name.startswith("bot.client")
    ]
    assert outside == []
    assert "bot.client.models" in loaded
    assert "aiohttp.web" not in loaded
    assert not any(name.startswith(("asyncpg", "slack_", "botbuilder")) for name in loaded)


def test_public_names_are_sorted_and_exported() -> None:
    """__all__ is sorted and every name in it resolves."""
    assert list(bot.client.__all__) == sorted(bot.client.__all__)
    for name in bot.client.__all__:
        assert getattr(bot.client, name) is not None
