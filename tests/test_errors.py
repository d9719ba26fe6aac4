"""Every error the project raises to a caller derives from BotError, the one root
(bot/contract/errors.py, re-exported by bot/errors.py).

The agents API client and the contract it shares with the server raise
BridgeError, the client's branch of that root, which the framework adapters
built on the client (adapters/langgraph) share.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from types import ModuleType

import adapters
import bot
from bot.client.errors import BridgeError
from bot.errors import BotError


def modules(package: ModuleType) -> list[ModuleType]:
    """The package and every module under it, imported."""
    names = [info.name for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}.")]
    return [package, *(importlib.import_module(name) for name in names)]


def public_errors() -> list[type[BaseException]]:
    """Exception classes defined in bot/ and adapters/, bar private ones (``_Name``).

    A private exception is control flow, raised and caught in its own module.
    """
    found: list[type[BaseException]] = []
    for module in [*modules(bot), *modules(adapters)]:
        for name, value in vars(module).items():
            if (
                inspect.isclass(value)
                and issubclass(value, BaseException)
                and value.__module__ == module.__name__
                and not name.startswith("_")
            ):
                found.append(value)
    return found


# Clients of /v1: the client itself, the contract it validates with, and the
# framework adapters built on it, whose errors join the client's so an agent
# catches them all in one place.
_CLIENT_SIDE = ("bot.client", "bot.contract", "adapters.langgraph")


def _base_for(error: type[BaseException]) -> type[BaseException]:
    # BridgeError, the client's branch of the one root; the root itself sits beside it.
    if error.__module__.startswith(_CLIENT_SIDE) and error is not BotError:
        return BridgeError
    return BotError


def test_every_public_error_class_derives_from_bot_error() -> None:
    """Walk the modules: any public exception class not under its base error is named."""
    errors = public_errors()
    assert BotError in errors  # the walk reached bot/contract/errors.py
    assert issubclass(BridgeError, BotError)  # one root for the server and the client
    strays = sorted(
        f"{error.__module__}.{error.__qualname__}"
        for error in errors
        if not issubclass(error, _base_for(error))
    )
    assert strays == []


def test_errors_keep_the_builtin_bases_callers_catch() -> None:
    """Deriving from BotError took away no base an ``except`` clause relies on."""
    from adapters.teams._sdk import BadActivity
    from bot.service.running.resume import CheckpointMissingError
    from bot.serving import JsonRejected

    assert issubclass(CheckpointMissingError, LookupError)
    assert issubclass(JsonRejected, ValueError)
    assert issubclass(BadActivity, ValueError)
