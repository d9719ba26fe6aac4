"""The serving process's retention sweep: closed questions past ``BOT_RETENTION_DAYS`` purged."""

from __future__ import annotations

import asyncio
import logging
import time

from bot.stores.ports import Retention

log = logging.getLogger(__name__)

# Often enough that content outlives its days by an hour at most; each pass is batches.
SWEEP_SECONDS = 3600.0


async def purge_forever(retention: Retention, days: float) -> None:
    """Purge what is due now, then every ``SWEEP_SECONDS``; a failure waits for the next."""
    while True:
        now = time.time()
        try:
            purged = await retention.purge_all(now - days * 86400, at=now)
        except Exception:
            log.exception("retention sweep failed; retrying at the next")
        else:
            if purged:
                log.info("retention: purged the content of %d closed questions", purged)
        await asyncio.sleep(SWEEP_SECONDS)
