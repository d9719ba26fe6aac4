"""Public names an adapter renamed: the old name still imports, with a warning naming the new.

A name changed so it means one thing across the project (``Rejected`` is the
client's exception; LangGraph's value is ``HumanRejected``); code written
against the old name keeps working until its authors move.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable, Mapping
from typing import Any


def old_names(module: str, renamed: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` that answers each old name in ``renamed`` with its new one."""

    def __getattr__(name: str) -> Any:
        new = renamed.get(name)
        if new is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        warnings.warn(
            f"{module}.{name} is now {module}.{new}; the old name will go",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(sys.modules[module], new)

    return __getattr__
