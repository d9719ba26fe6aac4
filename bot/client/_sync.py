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
import functools
import inspect
import threading
from collections.abc import Callable, Coroutine
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar

from bot.client._bridge import Bridge
from bot.client._question import Question
from bot.contract.models import QuestionObject

T = TypeVar("T")
R = TypeVar("R")
P = ParamSpec("P")
# The async object a blocking twin runs its calls on: a Bridge, or a Question.
A = TypeVar("A")


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


class _Twin(Generic[A]):
    """A blocking twin of an async object: its calls run on ``_loop`` and block."""

    _loop: _Loop
    _async: A


def _blocking(
    method: Callable[Concatenate[A, P], Coroutine[Any, Any, R]],
) -> Callable[Concatenate[_Twin[A], P], R]:
    """The blocking twin's method of the async ``method`` of the same name.

    ``get = _blocking(Bridge.get)`` in ``SyncBridge``: a function, so it binds
    as any method does, with the async method's parameters, return type and
    docstring, so mypy and ``help()`` read it as written once on the async
    class; calling it runs the coroutine on the twin's loop and blocks.
    """

    def blocking(twin: _Twin[A], /, *args: P.args, **kwargs: P.kwargs) -> R:
        return twin._loop.run(method(twin._async, *args, **kwargs))

    return _like(blocking, method)


def _asking(
    method: Callable[Concatenate[Bridge, P], Coroutine[Any, Any, Question[T]]],
) -> Callable[Concatenate[SyncBridge, P], SyncQuestion[T]]:
    """As ``_blocking``, for a ``Bridge`` method that gives a ``Question``: its twin
    gives the question's blocking twin, a ``SyncQuestion``."""

    def asking(twin: SyncBridge, /, *args: P.args, **kwargs: P.kwargs) -> SyncQuestion[T]:
        return SyncQuestion(twin._loop, twin._loop.run(method(twin._async, *args, **kwargs)))

    made = _like(asking, method)
    signature = inspect.signature(made)
    made.__signature__ = signature.replace(  # type: ignore[attr-defined]
        return_annotation=f"Sync{signature.return_annotation}"
    )
    return made


F = TypeVar("F", bound=Callable[..., Any])


def _like(twin: F, method: Callable[..., Any]) -> F:
    # The async method's name and docstring; its parameters as ``__signature__``,
    # which ``inspect`` reads before it would follow ``__wrapped__`` to the coroutine.
    functools.update_wrapper(twin, method)
    twin.__signature__ = inspect.signature(method)  # type: ignore[attr-defined]
    return twin


class SyncQuestion(_Twin[Question[T]]):
    """A question asked through a ``SyncBridge``; ``wait`` returns as ``Question.wait`` does."""

    def __init__(self, loop: _Loop, question: Question[T]) -> None:
        self._loop = loop
        self._async = question

    def __repr__(self) -> str:
        return f"Sync{self._async!r}"

    @property
    def id(self) -> str:
        return self._async.id

    @property
    def object(self) -> QuestionObject:
        return self._async.object

    refresh = _blocking(Question[T].refresh)
    cancel = _blocking(Question[T].cancel)
    wait = _blocking(Question[T].wait)


class SyncBridge(_Twin[Bridge]):
    """``Bridge``'s blocking twin: ``with SyncBridge(url, key) as bridge: ...``.

    Each method is ``Bridge``'s of the same name (its parameters and
    docstring), blocking; one that gives a ``Question`` gives a ``SyncQuestion``.
    """

    def __init__(self, url: str, api_key: str, *, request_timeout: float = 30.0) -> None:
        self._loop = _Loop()
        self._async = Bridge(url, api_key, request_timeout=request_timeout)

    def __repr__(self) -> str:
        return f"Sync{self._async!r}"

    def __enter__(self) -> SyncBridge:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the HTTP session, then stop the private loop and its thread."""
        if not self._loop.closed:
            self._loop.run(self._async.close())
        self._loop.close()

    ask = _asking(Bridge.ask)
    approve = _asking(Bridge.approve)
    form = _asking(Bridge.form)
    create = _asking(Bridge.create)
    question = _asking(Bridge.question)
    get = _blocking(Bridge.get)
    cancel = _blocking(Bridge.cancel)
    list = _blocking(Bridge.list)
