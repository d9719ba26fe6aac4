"""The event stream and the hub behind it."""

from __future__ import annotations

import asyncio
import json

import pytest

from adapters.console import EventHub, Subscription
from bot.service.answering.outcomes import Responder
from bot.service.delivering.surfaces import Conversation
from tests import waiting
from tests.adapters.console.console_support import (
    CID,
    WHICH_ENV,
    Console,
    ConsoleFactory,
    next_event,
    within,
)

WHERE = Conversation(surface="console", scope="console", key=CID)
OPERATOR = Responder("console:operator", "Ana")


async def test_published_question_sends_changed_event(console: Console) -> None:
    """A question published in a conversation reaches an open stream as `changed`."""
    async with console.client.get("/api/events") as stream:
        assert stream.status == 200
        assert stream.headers["Cache-Control"] == "no-store"
        # Started on the service directly, so only the surface can notify.
        await console.service.start(WHERE, OPERATOR, "deploy web")
        event, data = await within(5, next_event(stream))
    assert event == "changed"
    assert json.loads(data) == {"conversation": CID}
    await console.service.wait_idle()
    assert (await console.open_question())["payload"]["questions"][0]["question"] == WHICH_ENV


async def test_answering_notifies_every_open_stream(console: Console) -> None:
    """Two pages on the same console both hear that the conversation changed."""
    await console.send("deploy web")
    asked = await console.open_question()
    async with console.client.get("/api/events") as one, console.client.get("/api/events") as two:
        await console.answer(asked["token"], {"answers": {WHICH_ENV: "staging"}})
        first = await within(5, next_event(one))
        second = await within(5, next_event(two))
    assert first == second == ("changed", json.dumps({"conversation": CID}))


async def test_idle_stream_gets_heartbeats(make_console: ConsoleFactory) -> None:
    """With nothing to say, the stream writes comment lines to keep itself alive."""
    console = await make_console(heartbeat_seconds=0.01)
    async with console.client.get("/api/events") as stream:
        lines = [await within(5, stream.content.readline()) for _ in range(4)]
    assert b": heartbeat\n" in lines


async def test_closing_the_surface_ends_open_streams(console: Console) -> None:
    """Shutdown's close() ends every stream cleanly instead of leaving it open."""
    async with console.client.get("/api/events") as stream:
        assert console.surface.hub.subscribers == 1
        await console.surface.close()
        rest = await within(5, stream.content.read())
    assert b"event:" not in rest
    assert console.surface.hub.subscribers == 0


async def test_server_shutdown_does_not_wait_on_streams(make_console: ConsoleFactory) -> None:
    """Closing the server with a stream open finishes promptly via on_shutdown."""
    console = await make_console()
    stream = await console.client.get("/api/events")
    assert console.surface.hub.subscribers == 1
    await within(5, console.client.close())
    assert console.surface.hub.subscribers == 0
    stream.release()


async def test_disconnected_page_is_unsubscribed(make_console: ConsoleFactory) -> None:
    """A page that goes away is dropped from the hub at the next write."""
    console = await make_console(heartbeat_seconds=0.01)
    stream = await console.client.get("/api/events")
    assert console.surface.hub.subscribers == 1
    stream.close()

    # The hub signals no count change: it is looked at again until it drops.
    await waiting.eventually(
        lambda: console.surface.hub.subscribers == 0, what="the page dropped", seconds=5
    )


async def test_subscription_coalesces_repeats_and_drops_oldest() -> None:
    """Repeated ids fold into one, in latest order, and the inbox stays bounded."""
    inbox = Subscription(limit=3)
    for key in ["a", "b", "a", "c", "d"]:
        inbox.push(key)
    assert await inbox.next(max_wait=1) == ["a", "c", "d"]
    assert await inbox.next(max_wait=0.01) == []


async def test_hub_after_close_hands_out_closed_subscriptions() -> None:
    """Once closed, the hub ends current and later subscriptions at once."""
    hub = EventHub()
    early = hub.subscribe()
    hub.publish("x")
    closing = asyncio.create_task(hub.close(grace_seconds=5))
    await asyncio.sleep(0)  # let close() run up to its wait for handlers
    assert await early.next(max_wait=1) is None
    hub.unsubscribe(early)
    await within(5, closing)
    late = hub.subscribe()
    assert late.closed
    assert await late.next(max_wait=1) is None
    assert hub.subscribers == 0


def test_subscription_needs_room() -> None:
    """A subscription that could hold nothing is a configuration error."""
    with pytest.raises(ValueError, match="at least one"):
        Subscription(limit=0)
