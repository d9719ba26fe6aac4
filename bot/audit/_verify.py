"""Checking an export: every event's digest and link, every checkpoint's signature and chain.

The export lists the checkpoints first, then the events by chain and number
(``bot.stores`` writes it so). The verifier reads it once, front to back,
keeping one chain's state at a time and the heads the checkpoints signed;
the first line that does not hold is named, with what it found.

What passes proves: every event in the file is as written when its chain
was linked, in its order, none missing between two that are present, and
every chain reaches at least the head each checkpoint signed. It cannot
prove anything about events written after the last checkpoint of their
chain and then removed from the end (see docs/audit.md).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from bot.audit._chain import chain_of, event_digest, genesis, link
from bot.audit._checkpoints import checkpoint_hash, signature_problem


@dataclass(frozen=True, slots=True)
class Intact:
    events: int
    checkpoints: int

    def sentence(self) -> str:
        return f"{self.events} events, {self.checkpoints} checkpoints, intact"


@dataclass(frozen=True, slots=True)
class Broken:
    reason: str

    def sentence(self) -> str:
        return f"not intact: {self.reason}"


Verdict = Intact | Broken


class _Fault(Exception):
    pass


_EVENT_FIELDS: dict[str, type | tuple[type, ...]] = {
    "chain": str,
    "seq": int,
    "at": (int, float),
    "kind": str,
    "run_id": str,
    "interrupt_id": str,
    "actor": str,
    "digest": str,
    "hash": str,
}


@dataclass
class _Chain:
    name: str
    line: int
    seq: int = 0
    hash: str = ""


@dataclass
class _State:
    keys: Mapping[str, Ed25519PublicKey]
    partial: bool
    events: int = 0
    checkpoints: int = 0
    last_checkpoint: tuple[int, str] | None = None
    # chain -> {seq: (hash, checkpoint seq)}: every head a checkpoint signed.
    signed: dict[str, dict[int, tuple[str, int]]] = field(default_factory=dict)
    chain: _Chain | None = None


class Verifier:
    """Fed one line at a time (a file, or the store's export), so memory holds one chain."""

    def __init__(self, keys: Mapping[str, Ed25519PublicKey], *, partial: bool = False) -> None:
        self._state = _State(keys, partial)
        self._number = 0
        self._broken: Broken | None = None

    def feed(self, text: str) -> None:
        self._number += 1
        if self._broken is not None or not text.strip():
            return
        try:
            _line(self._state, self._number, text)
        except _Fault as fault:
            self._broken = Broken(str(fault))

    def verdict(self) -> Verdict:
        if self._broken is not None:
            return self._broken
        state = self._state
        try:
            _end_chain(state)
            if not state.partial:
                for chain, heads in state.signed.items():
                    top = max(heads)
                    raise _Fault(
                        f"chain {chain} is missing: checkpoint {heads[top][1]} signed it up to "
                        f"event #{top}, and the file has none of its events"
                    )
        except _Fault as fault:
            return Broken(str(fault))
        return Intact(state.events, state.checkpoints)


def verify(
    lines: Iterable[str], keys: Mapping[str, Ed25519PublicKey], *, partial: bool = False
) -> Verdict:
    """Check an export line by line; ``partial``: it was filtered (chains may be absent)."""
    verifier = Verifier(keys, partial=partial)
    for text in lines:
        verifier.feed(text)
    return verifier.verdict()


def _line(state: _State, number: int, text: str) -> None:
    try:
        value = json.loads(text)
    except ValueError:
        raise _Fault(f"line {number} is not JSON") from None
    kind = value.get("type") if isinstance(value, dict) else None
    if kind == "checkpoint":
        if state.events:
            raise _Fault(f"line {number}: a checkpoint after the events (checkpoints come first)")
        _checkpoint(state, number, value)
    elif kind == "event":
        _event(state, number, value)
    else:
        raise _Fault(f"line {number} is neither an event nor a checkpoint")


def _checkpoint(state: _State, number: int, value: dict[str, Any]) -> None:
    seq, heads = value.get("seq"), value.get("heads")
    if not isinstance(seq, int) or not isinstance(heads, list):
        raise _Fault(f"line {number}: checkpoint without a number or heads")
    problem = signature_problem(value, state.keys)
    if problem is not None:
        raise _Fault(f"line {number}: checkpoint {seq} was changed or forged: {problem}")
    last = state.last_checkpoint
    if last is None:
        if seq != 1 and not state.partial:
            raise _Fault(f"line {number}: checkpoints 1 to {seq - 1} are missing")
        if seq == 1 and value.get("prev") != "":
            raise _Fault(f"line {number}: checkpoint 1 names a previous one")
    elif seq != last[0] + 1:
        raise _Fault(f"line {number}: checkpoint {seq} follows checkpoint {last[0]}")
    elif value.get("prev") != last[1]:
        raise _Fault(f"line {number}: checkpoint {seq} does not name checkpoint {last[0]}")
    for head in heads:
        if not (len(head) == 3 and isinstance(head[0], str) and isinstance(head[1], int)):
            raise _Fault(f"line {number}: checkpoint {seq} has a malformed head")
        state.signed.setdefault(head[0], {})[head[1]] = (str(head[2]), seq)
    state.last_checkpoint = (seq, checkpoint_hash(value))
    state.checkpoints += 1


def _event(state: _State, number: int, value: dict[str, Any]) -> None:
    for name, kind in _EVENT_FIELDS.items():
        if not isinstance(value.get(name), kind):
            raise _Fault(f"line {number}: an event without a valid {name!r}")
    chain, seq = value["chain"], value["seq"]
    named = f"line {number}: event {chain} #{seq}"
    if chain_of(value["run_id"]) != chain:
        raise _Fault(f"{named} was changed: its run is not its chain's")
    if not value.get("purged"):
        digest = event_digest(
            value["at"], value["kind"], value["interrupt_id"], value["actor"], value.get("detail")
        )
        if digest != value["digest"]:
            raise _Fault(f"{named} was changed: its content does not match its digest")
    current = state.chain
    if current is None or current.name != chain:
        if current is not None and chain <= current.name:
            raise _Fault(f"{named} is out of order: chain {chain} came before line {current.line}")
        _end_chain(state)
        current = state.chain = _Chain(chain, number, 0, genesis(chain))
    if seq == current.seq:
        raise _Fault(
            f"{named} and line {current.line} are both #{seq} of {chain}: one of them was inserted"
        )
    if seq != current.seq + 1:
        raise _Fault(
            f"{named} comes where #{current.seq + 1} should: an event was removed, "
            "reordered or inserted here"
        )
    if link(current.hash, value["digest"]) != value["hash"]:
        raise _Fault(
            f"{named} does not follow from the one before it: changed, reordered or inserted"
        )
    signed = state.signed.get(chain, {}).get(seq)
    if signed is not None and signed[0] != value["hash"]:
        raise _Fault(
            f"{named} differs from what checkpoint {signed[1]} signed: it, or an earlier "
            "event of its chain, was changed, removed or inserted"
        )
    current.seq, current.hash, current.line = seq, value["hash"], number
    state.events += 1


def _end_chain(state: _State) -> None:
    current = state.chain
    if current is None:
        return
    heads = state.signed.pop(current.name, {})
    beyond = [seq for seq in heads if seq > current.seq]
    if beyond:
        top = max(beyond)
        raise _Fault(
            f"chain {current.name} ends at #{current.seq}, but checkpoint {heads[top][1]} "
            f"signed it up to #{top}: event #{current.seq + 1} and after were removed"
        )
