"""Readiness waits, written once: for what another process does, which sends no event here.

A test that waits on its own process awaits an event or drives a fake clock.
When the change happens in another process (the bot, a replica, dockerd, the
loopback Slack a bot process calls), the only way to see it is to look again:
these look every ``every`` seconds and give up after ``seconds``, failing with
``what`` and the last thing seen, so a slow machine makes a test slower, never
wrong.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

import aiohttp

T = TypeVar("T")


async def eventually(
    check: Callable[[], Awaitable[T | None]] | Callable[[], T | None],
    *,
    what: str,
    seconds: float = 15.0,
    every: float = 0.02,
    errors: tuple[type[BaseException], ...] = (),
) -> T:
    """The first truthy ``check()`` (awaited if it is a coroutine); ``errors`` count as not yet."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            found = check()
            if inspect.isawaitable(found):
                found = await found
        except errors:
            found = None
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {seconds:.0f} s")
        await asyncio.sleep(every)


def eventually_blocking(
    check: Callable[[], T | None], *, what: str, seconds: float = 30.0, every: float = 0.05
) -> T:
    """``eventually`` for code with no event loop (fixtures that start processes)."""
    deadline = time.monotonic() + seconds
    while True:
        found = check()
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {seconds:.0f} s")
        time.sleep(every)


async def healthy(url: str, *, alive: Callable[[], bool], seconds: float = 30.0) -> None:
    """``url``'s ``/healthz`` answers 200; fails at once if ``alive()`` says the server exited."""
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=2)) as session:

        async def answers() -> bool:
            assert alive(), f"the server behind {url} exited before it was ready"
            async with session.get(f"{url}/healthz") as response:
                return response.status == 200

        ready: bool = await eventually(
            answers,
            what=f"{url}/healthz answering 200",
            seconds=seconds,
            every=0.05,
            errors=(aiohttp.ClientError, TimeoutError),
        )
        assert ready


async def release(children: list[asyncio.subprocess.Process]) -> None:
    """Start children that wait for a line on their stdin together: all writes, then the flushes."""
    for child in children:
        assert child.stdin is not None
        child.stdin.write(b"go\n")
    for child in children:
        assert child.stdin is not None
        await child.stdin.drain()
