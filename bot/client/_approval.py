"""``require_approval``: a function that runs only once a person approves the call."""

from __future__ import annotations

import functools
import inspect
import json
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, ParamSpec, TypeVar, cast

from bot.client._bridge import Bridge, RoutesLike
from bot.client._question import outcome_error
from bot.client._sync import SyncBridge
from bot.client.errors import Rejected
from bot.contract.answers import ApprovalDecision
from bot.contract.asking import AskOptions
from bot.contract.models import ApprovalPayload, QuestionObject

P = ParamSpec("P")
R = TypeVar("R")


def require_approval(
    *,
    route: RoutesLike,
    answerers: Sequence[str],
    bridge: Bridge | SyncBridge | None = None,
    url: str | None = None,
    api_key: str | None = None,
    action: str | None = None,
    summary: str | None = None,
    risk: str = "medium",
    ttl_seconds: int | None = None,
    run_ref: str | None = None,
    timeout: float | None = None,
) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Ask ``answerers`` before each call of the decorated function; run it only on approve.

    The approval shows ``action`` (the function's name by default), ``summary``
    and the call's arguments. A rejection raises ``Rejected`` with the
    approver's comment; a question that expired or was cancelled raises
    ``Expired`` or ``Cancelled``. In none of those cases does the function run.
    Async functions take a ``Bridge``, plain ones a ``SyncBridge``; with
    ``url`` and ``api_key`` instead, each call opens and closes its own.
    """
    if bridge is None and (url is None or api_key is None):
        raise ValueError("require_approval needs bridge=, or url= and api_key=")

    options = AskOptions.of(
        route=route, answerers=answerers, ttl_seconds=ttl_seconds, run_ref=run_ref
    )

    def decorate(function: Callable[P, R]) -> Callable[P, R]:
        name = action or function.__qualname__
        signature = inspect.signature(function)

        def approval_of(args: tuple[Any, ...], kwargs: dict[str, Any]) -> ApprovalPayload:
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            return ApprovalPayload.model_validate(
                {
                    "action": name,
                    "summary": summary or f"Run {name} with the arguments shown.",
                    "arguments": _json_safe(dict(bound.arguments)),
                    "risk": risk,
                }
            )

        if inspect.iscoroutinefunction(function):
            if isinstance(bridge, SyncBridge):
                raise TypeError(f"{name} is async: pass bridge=Bridge(...), not a SyncBridge")
            run_async = cast(Callable[P, Awaitable[Any]], function)

            @functools.wraps(function)
            async def guarded_async(*args: P.args, **kwargs: P.kwargs) -> Any:
                asked = approval_of(args, kwargs)
                if isinstance(bridge, Bridge):
                    closed = await (await bridge.create(asked, options)).wait(timeout)
                else:
                    async with Bridge(cast(str, url), cast(str, api_key)) as own:
                        closed = await (await own.create(asked, options)).wait(timeout)
                _require_approved(closed)
                return await run_async(*args, **kwargs)

            return cast(Callable[P, R], guarded_async)

        if isinstance(bridge, Bridge):
            raise TypeError(f"{name} is not async: pass bridge=SyncBridge(...), not a Bridge")

        @functools.wraps(function)
        def guarded(*args: P.args, **kwargs: P.kwargs) -> R:
            asked = approval_of(args, kwargs)
            if isinstance(bridge, SyncBridge):
                closed = bridge.create(asked, options).wait(timeout)
            else:
                with SyncBridge(cast(str, url), cast(str, api_key)) as own:
                    closed = own.create(asked, options).wait(timeout)
            _require_approved(closed)
            return function(*args, **kwargs)

        return guarded

    return decorate


def _require_approved(question: QuestionObject) -> None:
    if question.status != "answered":
        raise outcome_error(question)
    match question.typed_answer:
        case ApprovalDecision(decision="approve"):
            return
        case ApprovalDecision(comment=comment):
            raise Rejected(comment, question=question)
        case _:
            raise Rejected("", question=question)


def _json_safe(value: dict[str, Any]) -> dict[str, Any]:
    """The call's arguments as JSON; what JSON cannot hold is shown by its repr."""
    return cast(dict[str, Any], json.loads(json.dumps(value, default=repr)))
