"""A question posted on several routes (an API question's ``routes``): its further posts.

The first route is the question's own: its run's surface and conversation,
its ``scope`` and its ``message_ref``, exactly as a question with one route.
Each further route is a post kept on the question (``Question.posts``, in
route order): the route as given, the surface, the scope an answer from
there carries, the conversation to post in, and the posted message's
reference once delivered. The posts never change after the ask, so any copy
of the question knows them.

What concerns the posted message (the post, the close's edit, a redraw, a
reminder) is owed once per post, in the write that owes it for the first
route (``fanned``), each its own outbox row with its own retries; the row
names its post (``body["post"]``, the index), and is delivered to that post
as if the question lived there alone (``on_post``). A repost points each
message that stood posted to its new one (``moves``), each its own row too.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from bot.questions.records import DeliveryKind, Post, Question, RunRecord
from bot.questions.write import Owe

# What is owed once per posted message; the outcome and the webhook are the question's.
PER_POST = frozenset(
    {DeliveryKind.PUBLISH, DeliveryKind.CLOSED, DeliveryKind.REFRESH, DeliveryKind.NUDGE}
)
POST = "post"


def post_of(route: str, surface: str, scope: str, conversation: Mapping[str, Any]) -> Post:
    """A further post as the question keeps it, not yet delivered."""
    return Post(route, surface, scope, dict(conversation))


def scopes_of(question: Question) -> set[str]:
    """Every scope an answer may come from: the question's, and each post's."""
    return {question.scope, *(p.scope for p in question.posts)}


def fanned(owe: Sequence[Owe], question: Question | None) -> tuple[Owe, ...]:
    """``owe``, with each row about the posted message owed again for every further post."""
    if question is None or not question.posts:
        return tuple(owe)
    rows: list[Owe] = []
    for row in owe:
        rows.append(row)
        if row.kind in PER_POST:
            rows += [
                Owe(row.kind, row.interrupt_id, {**row.body, POST: i}, p.surface)
                for i, p in enumerate(question.posts)
            ]
    return tuple(rows)


def moves(question: Question) -> tuple[Owe, ...]:
    """The edit of every message the question stands posted as, to point at its repost:
    the first route's, then each further post's, each carrying its own previous reference."""
    rows = (
        [Owe(DeliveryKind.MOVED, question.interrupt_id, {"previous_ref": question.message_ref})]
        if question.message_ref is not None
        else []
    )
    rows += [
        Owe(
            DeliveryKind.MOVED,
            question.interrupt_id,
            {"previous_ref": p.message_ref, POST: i},
            p.surface,
        )
        for i, p in enumerate(question.posts)
        if p.message_ref
    ]
    return tuple(rows)


def post_index(body: Mapping[str, Any]) -> int | None:
    """The post an outbox row is for (None: the question's own, first route)."""
    index = body.get(POST)
    return index if isinstance(index, int) else None


def on_post(run: RunRecord, question: Question, index: int) -> tuple[RunRecord, Question] | None:
    """The run and the question as the post's surface sees them (its conversation, its
    message); None if the question has no such post."""
    if not 0 <= index < len(question.posts):
        return None
    post = question.posts[index]
    there = dataclasses.replace(
        run, surface=post.surface, scope=post.scope, conversation=dict(post.conversation)
    )
    return there, dataclasses.replace(question, scope=post.scope, message_ref=post.message_ref)


def posted_anywhere(question: Question) -> bool:
    """The question stands posted on at least one route."""
    return question.message_ref is not None or any(p.message_ref for p in question.posts)
