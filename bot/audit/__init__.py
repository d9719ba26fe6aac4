"""The tamper-evident audit: hash chains of events, signed checkpoints, and their verifier.

Pure: no store, no settings. ``bot.stores`` links events and keeps
checkpoints with these functions; ``python -m bot audit`` exports and
verifies (``bot.cli.audit``). What a verified export proves: docs/audit.md.
"""

from bot.audit._chain import (
    BRIDGE_CHAIN,
    GENESIS_PREFIX,
    Linker,
    canonical,
    chain_of,
    event_digest,
    genesis,
    link,
    stored_event,
)
from bot.audit._checkpoints import (
    AuditKeyError,
    CheckpointKey,
    checkpoint_hash,
    checkpoint_keys,
    parse_public_keys,
    public_keys,
    sign_checkpoint,
    signature_problem,
)
from bot.audit._verify import Broken, Intact, Verdict, Verifier, verify
from bot.audit.settings import AuditSettings

__all__ = [
    "BRIDGE_CHAIN",
    "GENESIS_PREFIX",
    "AuditKeyError",
    "AuditSettings",
    "Broken",
    "CheckpointKey",
    "Intact",
    "Linker",
    "Verdict",
    "Verifier",
    "canonical",
    "chain_of",
    "checkpoint_hash",
    "checkpoint_keys",
    "event_digest",
    "genesis",
    "link",
    "parse_public_keys",
    "public_keys",
    "sign_checkpoint",
    "signature_problem",
    "stored_event",
    "verify",
]
