"""``Resumer``: wait for a parked thread's questions and resume it, matched by interrupt id.

The resumer reads the thread's pending interrupts from the graph's own
checkpointer (``aget_state``), so it works as well in a process that started
after the graph parked. For each interrupt it knows (an ``ask_human`` /
``request_approval`` question, or a ``HumanInTheLoopMiddleware`` review, whose
approvals it asks), it waits for the questions to close (long-poll, or a
verified webhook) and resumes with ``Command(resume={interrupt_id: value})``:
every value is keyed by the id of the interrupt it answers, never by position.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from langchain_core.runnables import RunnableConfig
from langgraph.types import Command

from adapters.langgraph import _hitl
from adapters.langgraph._ask import BRIDGE_INTERRUPT
from adapters.langgraph._keys import thread_of, with_origin
from adapters.langgraph._outcomes import approval_result_of
from adapters.langgraph.errors import ForeignInterrupt, LangGraphError
from bot.client import (
    ApprovalPayload,
    AskOptions,
    Bridge,
    Question,
    QuestionObject,
    RouteLike,
    verify_webhook,
)


class ResumableGraph(Protocol):
    """What the resumer needs of a compiled graph (``CompiledStateGraph`` is one)."""

    async def aget_state(self, config: RunnableConfig) -> Any: ...

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None) -> Any: ...


@dataclass(frozen=True)
class Resumption:
    """How one interrupt of a thread resumes: the bridge's questions it waits on, and how
    their answers make the resume value (the questions are the client's handles, not copies)."""

    interrupt_id: str
    questions: tuple[Question[QuestionObject], ...]
    value_of: Callable[[Sequence[QuestionObject]], Any]

    @property
    def closed(self) -> bool:
        return all(q.object.closed for q in self.questions)


class Resumer:
    """Resumes threads of ``graph`` when the bridge's questions close.

    ``route``, ``answerers``, ``risk``, ``ttl_seconds`` and ``callback_url``
    are used only for ``HumanInTheLoopMiddleware`` reviews, whose approvals the
    resumer asks itself (a node's own ``ask_human`` carries its own).
    """

    def __init__(
        self,
        graph: ResumableGraph,
        bridge: Bridge,
        *,
        route: RouteLike | None = None,
        answerers: Sequence[str] | None = None,
        risk: str = "medium",
        ttl_seconds: int | None = None,
        callback_url: str | None = None,
    ) -> None:
        self._graph = graph
        self._bridge = bridge
        self._risk = risk
        # What every review's approvals are asked with; None: the reviews cannot be asked.
        self._review_options = (
            None
            if route is None or answerers is None
            else AskOptions.of(
                route=route,
                answerers=answerers,
                ttl_seconds=ttl_seconds,
                callback_url=callback_url,
            )
        )
        # Weak: a thread's lock lives while someone holds or waits on it, no longer.
        self._locks: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()

    async def run(
        self,
        input: Any,
        config: RunnableConfig,
        *,
        timeout: float | None = None,  # noqa: ASYNC109 (a deadline for each wait, as Question.wait)
    ) -> Any:
        """Invoke the graph, then resume it each time it parks, until it finishes."""
        result = await self._graph.ainvoke(input, config)
        while (resumed := await self.resume(config, timeout=timeout)) is not None:
            result = resumed
        return result

    async def resume(
        self,
        config: RunnableConfig,
        *,
        timeout: float | None = None,  # noqa: ASYNC109 (a deadline for each wait)
    ) -> Any | None:
        """Wait until every question of the thread's pending interrupts closes, then resume once.

        Returns what ``ainvoke`` returns, or None when the thread has no
        pending interrupt. ``ForeignInterrupt`` when every pending interrupt
        is someone else's; ``WaitTimeout`` after ``timeout`` seconds of waiting.
        """
        async with self._lock(config):
            pending = await self._pending(config)
            if not pending:
                return None
            waits = [q.wait(timeout) for p in pending for q in p.questions]
            await asyncio.gather(*waits)
            return await self._resume(pending, config)

    async def on_webhook(
        self,
        secret: str,
        headers: Mapping[str, str],
        body: bytes | str,
        *,
        config_of: Callable[[str], RunnableConfig] | None = None,
    ) -> Any | None:
        """Resume the thread a verified webhook's question belongs to, once all it waits on closed.

        Returns what ``ainvoke`` returns, or None when there is nothing to do
        yet (another question of the thread is still open, the question is
        not one of ours, or its thread already resumed). ``InvalidWebhook``
        when the signature or timestamp does not verify. ``config_of`` makes
        a thread id into the graph's config (default: just the thread id).
        """
        event = verify_webhook(secret, headers, body)
        thread_id = thread_of(event.data.metadata)
        if thread_id is None:
            return None
        config = (config_of or _thread_config)(thread_id)
        async with self._lock(config):
            pending = await self._pending(config)
            asked = {q.id for p in pending for q in p.questions}
            if event.data.id not in asked or not all(p.closed for p in pending):
                return None
            return await self._resume(pending, config)

    async def pending(self, config: RunnableConfig) -> list[Resumption]:
        """The thread's interrupts the resumer can answer; a middleware review's approvals asked."""
        async with self._lock(config):
            return await self._pending(config)

    async def _resume(self, pending: list[Resumption], config: RunnableConfig) -> Any:
        values = {p.interrupt_id: p.value_of([q.object for q in p.questions]) for p in pending}
        return await self._graph.ainvoke(Command(resume=values), config)

    async def _pending(self, config: RunnableConfig) -> list[Resumption]:
        state = await self._graph.aget_state(config)
        interrupts = tuple(getattr(state, "interrupts", ()) or ())
        thread_id = str((config.get("configurable") or {}).get("thread_id", ""))
        found: list[Resumption] = []
        for pending_interrupt in interrupts:
            made = await self._known(thread_id, pending_interrupt.id, pending_interrupt.value)
            if made is not None:
                found.append(made)
        if interrupts and not found:
            ids = ", ".join(i.id for i in interrupts)
            raise ForeignInterrupt(
                f"The thread waits on interrupts the bridge did not raise ({ids}): "
                "resume them with Command(resume={interrupt_id: value})."
            )
        return found

    async def _known(self, thread_id: str, interrupt_id: str, value: Any) -> Resumption | None:
        if isinstance(value, dict) and value.get("type") == BRIDGE_INTERRUPT:
            question = await self._bridge.question(str(value["question_id"]))
            return Resumption(interrupt_id, (question,), _first_as_json)
        if _hitl.shape_of(value) is None:
            return None
        reviews = _hitl.reviews_of(thread_id, interrupt_id, value)
        questions = tuple(
            await asyncio.gather(*(self._ask_review(thread_id, interrupt_id, r) for r in reviews))
        )

        def value_of(closed: Sequence[QuestionObject]) -> Any:
            decisions = [
                _hitl.answer_json(question, review, approval_result_of(question))
                for review, question in zip(reviews, closed, strict=True)
            ]
            return _hitl.resume_value(value, decisions)

        return Resumption(interrupt_id, questions, value_of)

    def _ask_review(
        self, thread_id: str, interrupt_id: str, review: _hitl.Review
    ) -> Awaitable[Question[QuestionObject]]:
        if self._review_options is None:
            raise LangGraphError(
                "A HumanInTheLoopMiddleware review is pending: give Resumer route= and "
                "answerers= so it can ask for the approvals."
            )
        origin = {"thread_id": thread_id, "interrupt_id": interrupt_id, "position": review.position}
        payload = ApprovalPayload(
            action=review.action,
            summary=review.summary,
            arguments=dict(review.arguments),
            risk=self._risk,
        )
        options = replace(
            self._review_options,
            metadata=with_origin(None, origin),
            allow=tuple(review.allow),
        )
        return self._bridge.create(payload, options, idempotency_key=review.key)

    def _lock(self, config: RunnableConfig) -> asyncio.Lock:
        thread_id = str((config.get("configurable") or {}).get("thread_id", ""))
        lock = self._locks.get(thread_id)
        if lock is None:
            lock = self._locks[thread_id] = asyncio.Lock()
        return lock


def _first_as_json(closed: Sequence[QuestionObject]) -> Any:
    return closed[0].model_dump(mode="json")


def _thread_config(thread_id: str) -> RunnableConfig:
    return {"configurable": {"thread_id": thread_id}}
