"""The one base error; every error of ours says what to do next."""

from __future__ import annotations

# Defined in the contract, whose errors (and so the client's) derive from it too.
from bot.contract.errors import BotError as BotError


def install_extra(extra: str) -> str:
    """The one way the docs and every message say to install an optional extra.

    The package is not on an index, so it is installed from the checkout.
    """
    return f"pip install -e '.[{extra}]' from the checkout's root"


class MissingExtra(BotError, ModuleNotFoundError):
    """An adapter was imported without the extra that brings its framework.

    A ModuleNotFoundError too (``name`` is the missing module), so code that
    tries an import and falls back still can.
    """

    def __init__(self, adapter: str, extra: str, missing: str) -> None:
        super().__init__(
            f"{adapter} needs the {extra} extra, which is not installed (no module "
            f"{missing!r}): {install_extra(extra)}",
            name=missing,
        )
        self.adapter = adapter
        self.extra = extra
