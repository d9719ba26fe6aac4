"""A full page of ``/hitl pending``, for the Slack and Teams renderers to show what fits."""

from __future__ import annotations

from collections.abc import Callable

from bot.admin import results
from bot.stores.records import OpenQuestion


def pending_page(
    count: int,
    question: str,
    *,
    surface: str,
    scope: str,
    requester: str,
    message_ref: Callable[[int], dict[str, str]],
) -> results.PendingPage:
    """``count`` open ask_user questions of ``question`` asked by ``requester`` on ``surface``
    (the n-th posted at ``message_ref(n)``), each answerable by its requester and the admins;
    the page continues after the last."""
    items = tuple(
        results.PendingItem(
            OpenQuestion(
                interrupt_id=f"int_{n:04d}",
                run_id=f"run_{n}",
                scope=scope,
                name="ask_user",
                payload={"questions": [{"question": question}]},
                issued_at=1000.0,
                expires_at=90_000.0,
                requester=requester,
                surface=surface,
                message_ref=message_ref(n),
                cursor=str(n + 1),
            ),
            (requester, "admins"),
        )
        for n in range(count)
    )
    return results.PendingPage(at=2000.0, items=items, next_after=str(count))
