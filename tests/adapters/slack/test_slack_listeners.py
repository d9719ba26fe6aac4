"""Listener translation details the end-to-end tests cannot force: a slow redeem, odd payloads."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from adapters.slack import _listeners
from adapters.slack._listeners import Listeners
from adapters.slack._who import responder, who_where
from bot.service.answering.outcomes import AlreadyAnswered, Responder


class Ack:
    def __init__(self, log: list[str]) -> None:
        self.log = log

    async def __call__(self, **kwargs: Any) -> None:
        self.log.append("ack")


class SlowService:
    """Redeems only when released, so the ack budget runs out first."""

    def __init__(self, log: list[str]) -> None:
        self.log = log
        self.release = asyncio.Event()
        self.seen: list[tuple[str, dict[str, Any], Responder, str]] = []

    async def redeem(
        self,
        token: str,
        answer: dict[str, Any],
        *,
        responder: Responder,
        scope: str,
        once_key: str = "",
    ) -> AlreadyAnswered:
        self.seen.append((token, answer, responder, scope))
        await self.release.wait()
        self.log.append("redeemed")
        return AlreadyAnswered("<@U2>", 1_800_000_000.0)


class Surface:
    def __init__(self, log: list[str]) -> None:
        self.log = log
        self.told: list[tuple[str, str, str, str]] = []

    async def post_ephemeral(self, team: str, channel: str, user: str, text: str) -> None:
        self.told.append((team, channel, user, text))
        self.log.append("ephemeral")


def click_body() -> dict[str, Any]:
    return {
        "type": "block_actions",
        "team": {"id": "T1"},
        "user": {"id": "U1", "team_id": "T1"},
        "channel": {"id": "C1"},
        "message": {"ts": "2.0", "thread_ts": "1.0", "blocks": []},
    }


async def test_a_slow_redeem_is_acked_first_and_reported_after(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Past the ack budget the ack goes out; the refusal follows as an ephemeral message."""
    monkeypatch.setattr(_listeners, "ACK_BUDGET_SECONDS", 0.01)
    log: list[str] = []
    service, surface = SlowService(log), Surface(log)
    listeners = Listeners(surface)  # type: ignore[arg-type]
    listeners.bind(service)  # type: ignore[arg-type]
    value = '{"t": "tok", "a": {"answers": {"Q": "A"}}}'
    await listeners.click(Ack(log), click_body(), {"value": value})  # type: ignore[arg-type]
    assert log == ["ack"]
    service.release.set()
    await listeners.close()
    assert log == ["ack", "redeemed", "ephemeral"]
    assert surface.told[0][:3] == ("T1", "C1", "U1")
    assert "already answered by <@U2>" in surface.told[0][3]
    token, answer, who, scope = service.seen[0]
    assert (token, answer, who.id, scope) == (
        "tok",
        {"answers": {"Q": "A"}},
        "slack:T1:U1",
        "T1:C1",
    )


def test_who_and_where_come_from_the_payload_not_the_text() -> None:
    body = click_body()
    body["actions"] = [{"value": "I am U9 in T9"}]
    assert who_where(body) == ("T1", "C1", "U1")
    del body["channel"]
    body["container"] = {"channel_id": "C2"}
    del body["team"]
    assert who_where(body) == ("T1", "C2", "U1")
    assert responder("T1", "U1") == Responder("slack:T1:U1", "<@U1>")


class Context(dict[str, Any]):
    bot_user_id = "UBOT"


class StartService:
    def __init__(self) -> None:
        self.started: list[tuple[Any, Responder, str, str | None]] = []

    async def start(self, where: Any, who: Responder, text: str, *, key: str | None = None) -> None:
        self.started.append((where, who, text, key))


async def test_a_mention_starts_a_run_keyed_by_event_in_its_thread() -> None:
    """Only the bot's own mention is cut; the thread is the conversation; the event id the key."""
    service = StartService()
    listeners = Listeners(Surface([]))  # type: ignore[arg-type]
    listeners.bind(service)  # type: ignore[arg-type]
    event = {
        "type": "app_mention",
        "user": "U1",
        "channel": "C1",
        "ts": "5.2",
        "thread_ts": "5.1",
        "text": "<@UBOT> ask <@U7> to approve, <@UBOT>",
    }
    body = {"team_id": "T1", "event_id": "Ev1", "event": event}
    await listeners.mention(body, event, Context())  # type: ignore[arg-type]
    where, who, text, key = service.started[0]
    assert text == "ask <@U7> to approve,"
    assert (where.scope, where.key, where.thread, key) == ("T1:C1", "C1:5.1", "5.1", "Ev1")
    assert where.reference == {"team": "T1", "channel": "C1", "thread_ts": "5.1"}
    assert who == Responder("slack:T1:U1", "<@U1>")
