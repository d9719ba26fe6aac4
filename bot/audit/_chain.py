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
from typing import Any

BRIDGE_CHAIN = "(bridge)"
GENESIS_PREFIX = "audit chain "


def canonical(value: Any) -> bytes:
    """One spelling per JSON value: keys sorted, no spaces, UTF-8, no NaN."""
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode()


def chain_of(run_id: str) -> str:
    return run_id or BRIDGE_CHAIN


def event_digest(at: float, kind: str, interrupt_id: str, actor: str, detail: Any) -> str:
    """The digest of an event's content; the run is bound by its chain, not here."""
    content = {"at": at, "kind": kind, "interrupt_id": interrupt_id, "actor": actor}
    content["detail"] = detail
    return hashlib.sha256(canonical(content)).hexdigest()


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
