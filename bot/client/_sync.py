"""``SyncBridge``: the same calls for scripts that have no event loop.

It runs a ``Bridge`` on a private event loop in a daemon thread and blocks
on each call. That works where ``asyncio.run`` per call would not: inside a
program that already runs a loop (a notebook, a sync callback of an async
framework), and with one HTTP session kept open across calls instead of one
per call.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Coroutine, Mapping, Sequence
from typing import Any, Generic, TypeVar, overload

from pydantic import BaseModel

from bot.client._bridge import Bridge, QuestionsLike, RoutesLike
from bot.client._question import Question
from bot.contract.models import QuestionObject, QuestionPage

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)


class _Loop:
    """An event loop of our own, running in a thread until closed."""

    def __init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="bot-client-loop", daemon=True
        )
        self._thread.start()

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        if threading.current_thread() is self._thread:
            coroutine.close()
            raise RuntimeError("a SyncBridge call cannot be made from its own loop's thread")
        future = asyncio.run_coroutine_threadsafe(coroutine, self._loop)
        try:
            return future.result()
        except (KeyboardInterrupt, concurrent.futures.CancelledError):
            future.cancel()
            raise

    @property
    def closed(self) -> bool:
        return self._loop.is_closed()

    def close(self) -> None:
        if self._loop.is_closed():
            return
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()


class SyncQuestion(Generic[T]):
    """A question asked through a ``SyncBridge``; ``wait`` returns as ``Question.wait`` does."""

    def __init__(self, loop: _Loop, question: Question[T]) -> None:
        self._loop = loop
        self._question = question

    def __repr__(self) -> str:
        return f"Sync{self._question!r}"

    @property
    def id(self) -> str:
        return self._question.id

    @property
    def object(self) -> QuestionObject:
        return self._question.object

    def refresh(self) -> QuestionObject:
        return self._loop.run(self._question.refresh())

    def cancel(self, reason: str = "") -> QuestionObject:
        return self._loop.run(self._question.cancel(reason))

    def wait(self, timeout: float | None = None) -> T:
        return self._loop.run(self._question.wait(timeout))


class SyncBridge:
    """``Bridge``'s blocking twin: ``with SyncBridge(url, key) as bridge: ...``."""

    def __init__(self, url: str, api_key: str, *, request_timeout: float = 30.0) -> None:
        self._loop = _Loop()
        self._bridge = Bridge(url, api_key, request_timeout=request_timeout)

    def __repr__(self) -> str:
        return f"Sync{self._bridge!r}"

    def __enter__(self) -> SyncBridge:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the HTTP session, then stop the private loop and its thread."""
        if not self._loop.closed:
            self._loop.run(self._bridge.close())
        self._loop.close()

    def ask(
        self, questions: QuestionsLike, *, route: RoutesLike, **options: Any
    ) -> SyncQuestion[QuestionObject]:
        """As ``Bridge.ask``; the options are the same keywords."""
        return SyncQuestion(
            self._loop, self._loop.run(self._bridge.ask(questions, route=route, **options))
        )

    def approve(
        self,
        action: str,
        summary: str,
        *,
        arguments: Mapping[str, Any],
        risk: str,
        route: RoutesLike,
        answerers: Sequence[str],
        **options: Any,
    ) -> SyncQuestion[QuestionObject]:
        """As ``Bridge.approve``."""
        asked = self._bridge.approve(
            action,
            summary,
            arguments=arguments,
            risk=risk,
            route=route,
            answerers=answerers,
            **options,
        )
        return SyncQuestion(self._loop, self._loop.run(asked))

    @overload
    def form(
        self, title: str, message: str, *, model: type[M], route: RoutesLike, **options: Any
    ) -> SyncQuestion[M]: ...

    @overload
    def form(
        self,
        title: str,
        message: str,
        *,
        schema: Mapping[str, Any],
        route: RoutesLike,
        **options: Any,
    ) -> SyncQuestion[QuestionObject]: ...

    def form(
        self, title: str, message: str, *, route: RoutesLike, **options: Any
    ) -> SyncQuestion[Any]:
        """As ``Bridge.form``: ``schema=`` or ``model=``."""
        asked = self._bridge.form(title, message, route=route, **options)
        return SyncQuestion(self._loop, self._loop.run(asked))

    def question(self, interrupt_id: str, *, model: type[M] | None = None) -> SyncQuestion[Any]:
        return SyncQuestion(
            self._loop, self._loop.run(self._bridge.question(interrupt_id, model=model))
        )

    def get(self, interrupt_id: str) -> QuestionObject:
        return self._loop.run(self._bridge.get(interrupt_id))

    def cancel(self, interrupt_id: str, reason: str = "") -> QuestionObject:
        return self._loop.run(self._bridge.cancel(interrupt_id, reason))

    def list(
        self,
        *,
        status: str | None = None,
        run_ref: str | None = None,
        limit: int = 50,
        cursor: str | None = None,
    ) -> QuestionPage:
        return self._loop.run(
            self._bridge.list(status=status, run_ref=run_ref, limit=limit, cursor=cursor)
        )
