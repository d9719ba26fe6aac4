"""An adapter imported without its extra: one sentence naming the extra, not a bare
ModuleNotFoundError from deep inside the framework's import."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from bot.errors import MissingExtra


@contextmanager
def needs_extra(adapter: str, extra: str, *packages: str) -> Iterator[None]:
    """Turn a missing ``packages`` (the extra's frameworks) inside the block into MissingExtra.

    Any other missing module is a fault of its own and passes through unchanged.
    """
    try:
        yield
    except ModuleNotFoundError as missing:
        root = (missing.name or "").partition(".")[0]
        if root not in packages:
            raise
        raise MissingExtra(adapter, extra, root) from None
