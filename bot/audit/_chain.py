"""The audit's hash chains: each event's digest, and the link that ties it to the one before.

An event's digest is the SHA-256 of its canonical JSON (its time, kind,
question, actor and detail). Events belong to one chain per run (the
run's id), or to ``BRIDGE_CHAIN`` when they concern no run (an admin
command, an API key): so writes about different runs never wait on each
other, on any replica. Within a chain each event's hash is
``sha256(previous hash + digest)``, starting from the chain's genesis,
which is derived from the chain's name so an event cannot be moved to
another chain. The stores compute links in SQL (PostgreSQL's ``sha256``,
SQLite through the functions ``sqlite_functions`` names); the verifier
recomputes them here, with the same three functions.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from json.encoder import encode_basestring
from typing import Any

from bot.contract.json_values import compiled

BRIDGE_CHAIN = "(bridge)"
GENESIS_PREFIX = "audit chain "


# One encoder: json.dumps with options builds a new encoder per call.
_CANONICAL = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
)


_canonical_text = compiled(_CANONICAL)


def canonical(value: Any) -> bytes:
    """One spelling per JSON value: keys sorted, no spaces, UTF-8, no NaN."""
    return _canonical_text(value).encode()


def chain_of(run_id: str) -> str:
    return run_id or BRIDGE_CHAIN


def event_digest(at: float, kind: str, interrupt_id: str, actor: str, detail: Any) -> str:
    """The digest of an event's content; the run is bound by its chain, not here."""
    content = {"at": at, "kind": kind, "interrupt_id": interrupt_id, "actor": actor}
    content["detail"] = detail
    return hashlib.sha256(canonical(content)).hexdigest()


def stored_event(
    at: float, kind: str, interrupt_id: str, actor: str, detail: Mapping[str, Any]
) -> tuple[str, str] | None:
    """The detail's canonical JSON, to be stored, and the event's digest, the detail
    encoded once: that text reads back as a value whose canonical JSON is the text itself,
    so the digest's content holds it as it is. None when it would not read back so (a
    key that is not a string: JSON turns it into one, sorted otherwise), or when the
    content is not plain strings and a float (the encoder's own spelling decides those)."""
    if type(at) is not float or not math.isfinite(at) or not _text_keys(detail):
        return None
    if not (type(kind) is str and type(interrupt_id) is str and type(actor) is str):
        return None
    text = _canonical_text(detail)
    # The content's keys in sorted order, each value spelt as the canonical encoder
    # spells it: a string by ``encode_basestring``, a finite float by its repr.
    whole = (
        f'{{"actor":{_string(actor)},"at":{at!r},"detail":{text},'
        f'"interrupt_id":{_string(interrupt_id)},"kind":{_string(kind)}}}'
    )
    return text, hashlib.sha256(whole.encode()).hexdigest()


_string = encode_basestring
_SCALARS = frozenset({str, int, float, bool, type(None)})
_STR = frozenset({str})


def _text_keys(value: Any) -> bool:
    """Every object in ``value``, however deep, is a dict with only string keys (lists and
    tuples holding them, or plain values, besides)."""
    # Most details are one flat object: its key and value types, each set built in C.
    if (
        type(value) is dict
        and {*map(type, value)} <= _STR
        and {*map(type, value.values())} <= _SCALARS
    ):
        return True
    pending = [value]
    while pending:
        item = pending.pop()
        kind = type(item)
        if kind is dict:
            if any(type(key) is not str for key in item):
                return False
            pending.extend(item.values())
        elif kind is list or kind is tuple:
            pending.extend(item)
        elif kind not in _SCALARS:
            return False  # anything else: the encoder's own path decides
    return True


def genesis(chain: str) -> str:
    """What the first event of ``chain`` links to."""
    return hashlib.sha256(f"{GENESIS_PREFIX}{chain}".encode()).hexdigest()


def link(previous: str, digest: str) -> str:
    """The hash of an event whose digest is ``digest``, after an event hashed ``previous``."""
    return hashlib.sha256(f"{previous}{digest}".encode()).hexdigest()


class Linker:
    """Links events in the order given, keeping each chain's head (to carry old rows)."""

    def __init__(self) -> None:
        self.heads: dict[str, tuple[int, str]] = {}

    def next(self, chain: str, digest: str) -> tuple[int, str]:
        """The event's number in its chain and its hash."""
        seq, previous = self.heads.get(chain, (0, genesis(chain)))
        linked = (seq + 1, link(previous, digest))
        self.heads[chain] = linked
        return linked
