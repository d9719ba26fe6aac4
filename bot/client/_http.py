"""One HTTP exchange with ``/v1``: the bearer key out, typed errors back."""

from __future__ import annotations

import json
import math
import time
from collections.abc import Mapping
from email.utils import parsedate_to_datetime
from typing import Any

import aiohttp
from pydantic import ValidationError

from bot.client.errors import BY_CODE, ApiError, RateLimited, TransportError, UnexpectedStatus
from bot.contract.models import ErrorEnvelope

# Any of these means the bridge is (for now) out of reach: restarting, or a
# proxy in front of it that has no upstream yet.
TRANSIENT_STATUSES = frozenset({502, 503, 504})


class Http:
    """The client's one aiohttp session, opened in the loop that first uses it."""

    def __init__(self, url: str, api_key: str, *, user_agent: str) -> None:
        self._base = url.rstrip("/")
        # Kept out of repr and logs: only the header carries it.
        self._headers = {"Authorization": f"Bearer {api_key}", "User-Agent": user_agent}
        self._session: aiohttp.ClientSession | None = None

    def __repr__(self) -> str:
        return f"Http({self._base!r})"

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def request(
        self,
        method: str,
        path: str,
        *,
        body: Mapping[str, Any] | None = None,
        params: Mapping[str, str] | None = None,
        seconds: float,
    ) -> tuple[int, Any]:
        """The status and parsed JSON of a 2xx; raises a ``BridgeError`` otherwise."""
        if self._session is None:
            self._session = aiohttp.ClientSession(headers=self._headers)
        try:
            async with self._session.request(
                method,
                f"{self._base}{path}",
                json=body,
                params=params,
                timeout=aiohttp.ClientTimeout(total=seconds),
                allow_redirects=False,
            ) as response:
                text = await response.text()
                status = response.status
                retry_after = response.headers.get("Retry-After")
        except (TimeoutError, aiohttp.ClientError, OSError) as exc:
            raise TransportError(
                f"The bridge at {self._base} could not be reached ({type(exc).__name__})."
            ) from exc
        try:
            parsed = json.loads(text) if text else None
        except ValueError:
            parsed = None
        if 200 <= status < 300:
            if parsed is None:
                raise TransportError(f"The bridge answered {status} without a JSON body.")
            return status, parsed
        error = _error(status, parsed)
        if isinstance(error, RateLimited):
            error.retry_after = _seconds(retry_after)
        raise error


def _seconds(retry_after: str | None) -> float | None:
    """``Retry-After`` as seconds from now: delay-seconds, or an HTTP date (a proxy's)."""
    if retry_after is None:
        return None
    text = retry_after.strip()
    if text.isascii() and text.isdigit():
        return float(text)
    try:
        at = parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    seconds = at.timestamp() - time.time()
    return max(0.0, seconds) if math.isfinite(seconds) else None


def _error(status: int, parsed: Any) -> ApiError:
    try:
        envelope = ErrorEnvelope.model_validate(parsed)
    except ValidationError:
        return UnexpectedStatus(
            f"The bridge answered {status} without an error body.", status=status
        )
    kind = BY_CODE.get(envelope.error.code)
    if kind is None:  # pragma: no cover - the envelope's code is a closed Literal
        return UnexpectedStatus(envelope.error.message, status=status)
    return kind(envelope.error.message, question=envelope.question)
