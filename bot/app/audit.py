"""The serving process's checkpoints of the audit: every few minutes, and at a clean stop."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from bot.audit import CheckpointKey, checkpoint_keys
from bot.human.signing import SigningSettings, keys_from
from bot.stores.ports import AuditChain

log = logging.getLogger(__name__)


def audit_keys(signing: SigningSettings, *, shared_store: bool) -> tuple[CheckpointKey, ...]:
    """The checkpoint keys of the bridge's signing keys (the ones tokens use), in order."""
    keys = keys_from(signing, shared_store=shared_store)
    return checkpoint_keys([(key.kid, str(key.signing)) for key in keys])


async def checkpoint(chain: AuditChain, key: CheckpointKey) -> dict[str, Any] | None:
    """One checkpoint, or None; a failure is logged, never raised (the next one covers the
    same heads), and a checkpoint another process wrote at the same moment is its."""
    try:
        signed = await chain.checkpoint(key, at=time.time())
    except Exception:
        log.exception("audit checkpoint failed; the next one signs the same heads")
        return None
    if signed is None:
        log.info("audit checkpoint: another process signed this one")
    else:
        log.info("audit checkpoint %d signed %d chains", signed["seq"], len(signed["heads"]))
    return signed


async def checkpoint_forever(chain: AuditChain, key: CheckpointKey, minutes: float) -> None:
    while True:
        await asyncio.sleep(minutes * 60)
        await checkpoint(chain, key)
