"""What the gateway does with one call: forward it, refuse it, or ask a person first.

The first rule whose glob matches ``upstream__tool`` decides. A tool no rule
names follows its annotations, which are the upstream's own hints and not a
promise: a tool marked read-only (and not destructive) is forwarded, any other
is asked about, so an unmarked tool is never run unasked.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass

from mcp.types import ToolAnnotations

from adapters.mcp_gateway._config import Rule

DENIED = "The gateway's rules do not let this tool run."


@dataclass(frozen=True, slots=True)
class Forward:
    """Call the upstream at once; ``rule`` (None by the annotations' default) says where an
    elicitation during the call is asked."""

    rule: Rule | None


@dataclass(frozen=True, slots=True)
class Refuse:
    """Answer with a tool error saying ``sentence``; the upstream is never called."""

    sentence: str


@dataclass(frozen=True, slots=True)
class Ask:
    """Ask a person first; ``rule`` is None for a tool no rule names (the defaults apply)."""

    rule: Rule | None


Verdict = Forward | Refuse | Ask


def verdict(rules: list[Rule], tool: str, annotations: ToolAnnotations | None) -> Verdict:
    """What the rules say of ``tool`` (its offered name), or its annotations if none matches."""
    for rule in rules:
        if fnmatch.fnmatchcase(tool, rule.tools):
            match rule.action:
                case "allow":
                    return Forward(rule)
                case "deny":
                    return Refuse(rule.reason or DENIED)
                case "approve":
                    return Ask(rule)
    return Forward(None) if read_only(annotations) else Ask(None)


def read_only(annotations: ToolAnnotations | None) -> bool:
    """Marked ``readOnlyHint: true`` and not ``destructiveHint: true``."""
    if annotations is None:
        return False
    return annotations.read_only_hint is True and annotations.destructive_hint is not True
