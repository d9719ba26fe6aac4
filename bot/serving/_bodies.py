"""Requests that may carry more than the app's body limit: which, and how much more.

Every request's body is read before any handler can tell who sent it (a
Slack signature covers the whole body; a Teams token is checked against the
activity), so the app-wide limit stays small, and a door whose platform
sends larger bodies names them here: a path, the largest body, and a check
of the request line and headers that must pass first. A request that fails
the check keeps the app's limit.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from aiohttp import web

HeadersCheck = Callable[[web.Request], bool]


@dataclass(frozen=True, slots=True)
class _Allowance:
    limit: int
    when: HeadersCheck


class LargerBodies:
    """Per path, the larger bodies a door accepts and the headers they must come with."""

    def __init__(self) -> None:
        self._by_path: dict[str, _Allowance] = {}

    def allow(self, path: str, limit: int, *, when: HeadersCheck) -> None:
        self._by_path[path] = _Allowance(limit, when)

    def limit_for(self, request: web.Request) -> int | None:
        """The larger limit ``request`` may use, or None for the app's own."""
        allowance = self._by_path.get(request.path)
        if allowance is None or request.method != "POST" or not allowance.when(request):
            return None
        return allowance.limit


LARGER_BODIES = web.AppKey("larger_bodies", LargerBodies)


def allow_larger_bodies(app: web.Application, path: str, limit: int, *, when: HeadersCheck) -> None:
    """Let POSTs to ``path`` whose headers pass ``when`` carry up to ``limit`` bytes."""
    found = app.get(LARGER_BODIES)
    if found is None:
        found = app[LARGER_BODIES] = LargerBodies()
    found.allow(path, limit, when=when)
