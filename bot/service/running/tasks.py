"""The background tasks a process starts: owned, awaited at drain, their failures logged."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any

log = logging.getLogger("bot.service.running.runs")


class OwnedTasks:
    """Every task started here is kept until it ends, so none is fire-and-forget."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[None]] = set()

    def spawn(self, work: Coroutine[Any, Any, None], name: str) -> None:
        task = asyncio.get_running_loop().create_task(work, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._forget)

    async def wait_idle(self) -> None:
        """Wait until no owned task is left (tasks may start more tasks)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def drain(self, grace_seconds: float) -> None:
        """Let owned tasks finish within the grace period, then cancel the rest."""
        if self._tasks:
            _, pending = await asyncio.wait(list(self._tasks), timeout=grace_seconds)
            for task in pending:
                task.cancel()
            if pending:
                log.warning("cancelled %d tasks at shutdown; recovery resumes them", len(pending))
                await asyncio.gather(*pending, return_exceptions=True)

    def _forget(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("background task %s failed", task.get_name(), exc_info=task.exception())
