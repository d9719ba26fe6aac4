"""/hitl details the end-to-end tests cannot force: a slow command, mentions, group admins."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from adapters.slack import _listeners
from adapters.slack._listeners import Listeners
from adapters.slack._who import ids_in
from bot.admin import results
from bot.questions.records import QuestionStats
from bot.service.answering.outcomes import Responder

STATS = QuestionStats(1, 0, 1, 0, 0, {}, 5.0, 5.0, 0, 0)


class Replies:
    """Records what the listener acked and responded, in order."""

    def __init__(self) -> None:
        self.log: list[tuple[str, dict[str, Any]]] = []

    async def ack(self, **kwargs: Any) -> None:
        self.log.append(("ack", kwargs))

    async def respond(self, **kwargs: Any) -> None:
        self.log.append(("respond", kwargs))


class Admin:
    """An AdminService stand-in that answers only when released."""

    def __init__(self, *, admins: frozenset[str] = frozenset()) -> None:
        self.release = asyncio.Event()
        self.release.set()
        self.admins = admins
        self.seen: list[tuple[str, Responder]] = []

    def is_admin(self, who: Responder) -> bool:
        return who.is_admin or who.id in self.admins

    async def handle(self, words: str, *, who: Responder, key: str = "") -> results.AdminResult:
        del key  # the stand-in applies nothing, so it needs no idempotency
        self.seen.append((words, who))
        await self.release.wait()
        return results.StatsShown(1.0, STATS) if self.is_admin(who) else results.AdminsOnly("stats")


class Directory:
    def __init__(self, members: dict[str, set[str]]) -> None:
        self.members = members

    async def is_member(self, group: str, who: Responder) -> bool:
        return who.id in self.members.get(group, set())


def command(text: str, user: str = "U1") -> dict[str, Any]:
    return {"command": "/hitl", "text": text, "team_id": "T1", "user_id": user, "channel_id": "C1"}


async def test_a_slow_command_is_acked_at_once_and_answered_through_response_url(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Past the ack budget: "working on it" first, then the result, both ephemeral."""
    monkeypatch.setattr(_listeners, "ACK_BUDGET_SECONDS", 0.01)
    admin, replies = Admin(admins=frozenset({"slack:T1:U1"})), Replies()
    admin.release.clear()
    listeners = Listeners(None, admin=lambda: admin)  # type: ignore[arg-type]
    await listeners.command(replies.ack, command("stats"), replies.respond)  # type: ignore[arg-type]
    assert [(kind, body["text"]) for kind, body in replies.log] == [
        ("ack", "Working on it; the answer follows here in a moment.")
    ]
    admin.release.set()
    await listeners.close()
    kind, body = replies.log[1]
    assert kind == "respond" and body["response_type"] == "ephemeral"
    assert body["replace_original"] is False and body["text"] == "Questions"


async def test_mentions_become_ids_and_a_group_member_acts_as_an_admin() -> None:
    """<@U2|bo> and <#C9|ops> reach the filters as ids; S1's members are admins, others not."""
    assert ids_in("T1", "pending user=<@U2|bo> channel=<#C9|ops>") == (
        "pending user=slack:T1:U2 channel=T1:C9"
    )
    admin = Admin()
    directory = Directory({"S1": {"slack:T1:U2"}})
    listeners = Listeners(
        None,  # type: ignore[arg-type]
        admin=lambda: admin,  # type: ignore[arg-type,return-value]
        admin_groups=["S1"],
        directory=directory,
    )
    member, stranger = Replies(), Replies()
    await listeners.command(member.ack, command("stats", "U2"), member.respond)  # type: ignore[arg-type]
    await listeners.command(stranger.ack, command("stats", "U3"), stranger.respond)  # type: ignore[arg-type]
    assert member.log[0][1]["text"] == "Questions"
    assert stranger.log[0][1]["text"].startswith("Only admins")
    assert [(who.id, who.is_admin) for _, who in admin.seen] == [
        ("slack:T1:U2", True),
        ("slack:T1:U3", False),
    ]
