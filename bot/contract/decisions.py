"""Which decisions an approval allows, and how large its arguments may be.

An approval's answer is ``approve``, ``reject``, ``edit`` (the full edited
``arguments``) or ``respond`` (a ``message`` the model reads in place of the
tool's result); a question's ``allow`` lists the ones it takes, ``approve``
and ``reject`` by default (``bot.contract.payloads.allowed``). The wire models
check these with plain ``ValueError``s; what an edit may be is ``bot/contract/edits.py``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Literal

from bot.contract.json_values import FINITE, depth, first_unkept_number

Decision = Literal["approve", "reject", "edit", "respond"]
DECISIONS: tuple[Decision, ...] = ("approve", "reject", "edit", "respond")
# What a caller that can only act on a yes or a no asks with (a LangGraph node's
# or a Temporal workflow's approval); also the default, today's behaviour.
APPROVE_OR_REJECT: tuple[Decision, ...] = ("approve", "reject")
DEFAULT_ALLOW = APPROVE_OR_REJECT
# The decisions that let the action run: counted as approvals under a quorum.
APPROVING = ("approve", "edit")

MAX_ARGUMENTS_BYTES = 256 * 1024
MAX_ARGUMENTS_DEPTH = 32
MAX_MESSAGE = 2000


def check_allow(allow: Sequence[str]) -> list[Decision]:
    """An ``allow`` list, checked: known decisions, each once, ``approve`` and ``reject`` among
    them (a person can always say yes or no; edit and respond are extra ways)."""
    unknown = [d for d in allow if d not in DECISIONS]
    if unknown:
        raise ValueError(f"allow may list only {', '.join(DECISIONS)}; {unknown[0]!r} is none")
    if len(set(allow)) != len(allow):
        raise ValueError("allow names a decision twice")
    if not {"approve", "reject"} <= set(allow):
        raise ValueError("allow must include approve and reject")
    return [d for d in DECISIONS if d in allow]


def check_arguments(arguments: Any, *, what: str = "arguments") -> None:
    """Refuse arguments past the size or depth a question may carry, or holding a number
    JSON cannot carry (``bot/contract/json_values.py``)."""
    if depth(arguments) > MAX_ARGUMENTS_DEPTH:
        raise ValueError(f"{what} may nest at most {MAX_ARGUMENTS_DEPTH} levels deep")
    unkept = first_unkept_number(arguments)
    if unkept is not None:
        raise ValueError(f"{unkept} in {what} {FINITE}; NaN and Infinity are not JSON")
    size = len(json.dumps(arguments, separators=(",", ":"), ensure_ascii=False).encode())
    if size > MAX_ARGUMENTS_BYTES:
        raise ValueError(f"{what} must be at most {MAX_ARGUMENTS_BYTES} bytes as JSON")
