"""Every error the project raises to a caller derives from BotError (bot/errors.py)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from types import ModuleType

import adapters
import bot
from bot.errors import BotError


def modules(package: ModuleType) -> list[ModuleType]:
    """The package and every module under it, imported."""
    names = [info.name for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}.")]
    return [package, *(importlib.import_module(name) for name in names)]


def public_errors() -> list[type[BaseException]]:
    """Exception classes defined in bot/ and adapters/, bar private ones (``_Name``).

    A private exception is control flow, raised and caught in its own module.
    The client (``bot.client``) imports nothing of the server, so its errors
    have their own base.
    """
    found: list[type[BaseException]] = []
    for module in [*modules(bot), *modules(adapters)]:
        if module.__name__.startswith("bot.client"):
            continue  # the client stands alone: one hierarchy of its own (BridgeError)
        for name, value in vars(module).items():
            if (
                inspect.isclass(value)
                and issubclass(value, BaseException)
                and value.__module__ == module.__name__
                and not name.startswith("_")
            ):
                found.append(value)
    return found


def test_every_public_error_class_derives_from_bot_error() -> None:
    """Walk the modules: any public exception class not under BotError is named."""
    errors = public_errors()
    assert BotError in errors  # the walk reached bot/errors.py
    strays = sorted(
        f"{error.__module__}.{error.__qualname__}"
        for error in errors
        if not issubclass(error, BotError)
    )
    assert strays == []


def test_errors_keep_the_builtin_bases_callers_catch() -> None:
    """Deriving from BotError took away no base an ``except`` clause relies on."""
    from adapters.teams._sdk import BadActivity
    from bot.service.resume import CheckpointMissingError
    from bot.serving import JsonRejected

    assert issubclass(CheckpointMissingError, LookupError)
    assert issubclass(JsonRejected, ValueError)
    assert issubclass(BadActivity, ValueError)
