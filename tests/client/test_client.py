"""The client against a loopback fake of /v1: ask, wait, forms, errors, restarts."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import date
from enum import Enum
from typing import Literal

import pytest
from pydantic import BaseModel, Field

from bot.client import (
    ApprovalPayload,
    AskOptions,
    Bridge,
    Cancelled,
    Conflict,
    Expired,
    FormSchemaError,
    InvalidRequest,
    NotFound,
    Policy,
    QuestionObject,
    Route,
    Unauthorized,
    Unprocessable,
    WaitTimeout,
    questions_of,
)
from tests.client._fake_api import FakeBridge, FakeState

KEY = "k" * 32
OTHER_KEY = "o" * 32
ROUTE = "console:ops"


@pytest.fixture
async def fake() -> AsyncIterator[FakeBridge]:
    server = FakeBridge(FakeState({KEY: "ci", OTHER_KEY: "other"}))
    await server.start()
    yield server
    await server.stop()


@pytest.fixture
async def bridge(fake: FakeBridge) -> AsyncIterator[Bridge]:
    async with Bridge(fake.url, KEY) as client:
        yield client


async def test_ask_and_wait_wakes_when_the_person_answers(fake: FakeBridge, bridge: Bridge) -> None:
    """wait() returns the answered object as soon as the held poll is woken."""
    question = await bridge.ask(
        "Ship 1.2?", route=ROUTE, run_ref="deploy-7", metadata={"pr": 12, "note": None}
    )
    assert question.object.status == "open"
    assert question.object.answerers == ["anyone"]
    assert question.object.metadata == {"pr": 12, "note": None}
    waiting = asyncio.create_task(question.wait())
    await fake.state.held(question.id, waiting)
    assert not waiting.done()
    fake.state.answer(question.id, {"answers": {"Ship 1.2?": "yes"}}, by="U7")
    closed = await waiting
    assert isinstance(closed, QuestionObject)
    assert closed.status == "answered"
    assert closed.answer == {"answers": {"Ship 1.2?": "yes"}}
    assert closed.answered_by is not None and closed.answered_by.id == "U7"
    assert question.object is closed


async def test_the_same_idempotency_key_gives_the_same_question(
    fake: FakeBridge, bridge: Bridge
) -> None:
    """A repeated create is the first one; a different body under the key is a Conflict."""
    first = await bridge.ask("Ship?", route=ROUTE, idempotency_key="once")
    again = await bridge.ask("Ship?", route=ROUTE, idempotency_key="once")
    assert again.id == first.id
    assert len(fake.state.questions) == 1
    with pytest.raises(Conflict) as caught:
        await bridge.ask("Ship now?", route=ROUTE, idempotency_key="once")
    assert caught.value.status == 409
    assert caught.value.message == "This idempotency key was used with another body."


async def test_wait_spans_a_bridge_restart(fake: FakeBridge, bridge: Bridge) -> None:
    """A long-poll cut by a restart retries against the new process and gets the answer."""
    question = await bridge.ask("Ship?", route=ROUTE)
    waiting = asyncio.create_task(question.wait(timeout=60))
    await fake.state.held(question.id, waiting)
    await fake.stop()
    polls_before = fake.state.polls[question.id]
    fake.state.answer(question.id, {"answers": {"Ship?": "yes"}})
    assert not waiting.done()
    await fake.start()
    closed = await waiting
    assert closed.status == "answered"
    assert fake.state.polls[question.id] > polls_before


async def test_a_proxy_without_upstream_is_waited_out(fake: FakeBridge, bridge: Bridge) -> None:
    """503s from a proxy mid-deploy are retried, for creates and for waits alike."""
    fake.state.unavailable = 2
    question = await bridge.ask("Ship?", route=ROUTE, idempotency_key="deploy-1")
    assert len(fake.state.questions) == 1
    assert fake.state.requests == 3
    fake.state.answer(question.id, {"answers": {"Ship?": "yes"}})
    fake.state.unavailable = 2
    closed = await question.wait(timeout=60)
    assert closed.status == "answered"
    assert fake.state.unavailable == 0


async def test_a_refusal_is_not_retried(fake: FakeBridge, bridge: Bridge) -> None:
    """A 4xx is the answer, not an outage: wait() raises it after one request."""
    question = await bridge.ask("Ship?", route=ROUTE)
    fake.state.owner[question.id] = "other"  # as if it were another key's
    before = fake.state.requests
    with pytest.raises(NotFound):
        await question.wait(timeout=60)
    assert fake.state.requests == before + 1


async def test_wait_times_out_with_the_question_still_open(
    fake: FakeBridge, bridge: Bridge
) -> None:
    """WaitTimeout carries the open question; waiting again goes on."""
    question = await bridge.ask("Ship?", route=ROUTE)
    with pytest.raises(WaitTimeout) as caught:
        await question.wait(timeout=0)
    assert caught.value.question.status == "open"
    assert isinstance(caught.value, TimeoutError)
    assert fake.state.polls[question.id] == 1
    with pytest.raises(WaitTimeout):
        await question.wait(timeout=0.2)
    assert fake.state.polls[question.id] == 2  # one held poll, cut at the deadline
    fake.state.answer(question.id, {"answers": {"Ship?": "no"}})
    assert (await question.wait(timeout=0)).status == "answered"


class Color(Enum):
    RED = "red"
    GREEN = "green"


class Details(BaseModel):
    email: str = Field(description="Where to write")
    age: int = Field(ge=0, le=150)
    color: Color = Color.RED
    tags: list[Literal["a", "b"]] = []
    start: date | None = None


async def test_form_with_a_model_returns_the_validated_model(
    fake: FakeBridge, bridge: Bridge
) -> None:
    """The model's schema goes out flat; the answer comes back as the model."""
    question = await bridge.form("Details", "Tell us", model=Details, route=ROUTE)
    sent = fake.state.questions[question.id]["payload"]["schema"]
    assert sent["properties"]["color"] == {
        "enum": ["red", "green"],
        "title": "Color",
        "type": "string",
        "default": "red",
    }
    assert sent["properties"]["start"]["format"] == "date"
    assert sent["required"] == ["email", "age"]
    waiting = asyncio.create_task(question.wait())
    await fake.state.held(question.id, waiting)
    fake.state.answer(
        question.id, {"email": "a@b.co", "age": 40, "color": "green", "start": "2026-12-01"}
    )
    details = await waiting
    assert details == Details(email="a@b.co", age=40, color=Color.GREEN, start=date(2026, 12, 1))


class Nested(BaseModel):
    name: str
    address: Details


class Exclusive(BaseModel):
    count: int = Field(gt=0)


@pytest.mark.parametrize(("model", "field"), [(Nested, "'address'"), (Exclusive, "'count'")])
async def test_a_model_outside_the_subset_is_refused_naming_the_field(
    fake: FakeBridge, bridge: Bridge, model: type[BaseModel], field: str
) -> None:
    """Refused before anything is sent, with the field's name."""
    with pytest.raises(FormSchemaError) as caught:
        await bridge.form("Details", "Tell us", model=model, route=ROUTE)
    assert field in caught.value.message
    assert fake.state.questions == {}


async def test_a_form_model_wait_raises_how_it_closed(fake: FakeBridge, bridge: Bridge) -> None:
    """With no answer to validate, wait() raises Expired or Cancelled."""
    question = await bridge.form("Details", "Tell us", model=Details, route=ROUTE)
    fake.state.close(question.id, "expired")
    with pytest.raises(Expired):
        await question.wait()
    other = await bridge.form("Details", "Tell us", model=Details, route=ROUTE)
    await bridge.cancel(other.id, "not needed")
    with pytest.raises(Cancelled) as caught:
        await other.wait()
    assert caught.value.reason == "not needed"


async def test_errors_are_typed_with_the_apis_sentence(fake: FakeBridge, bridge: Bridge) -> None:
    """Each status maps to its error class, carrying the message as sent."""
    async with Bridge(fake.url, "wrong" * 8) as stranger:
        with pytest.raises(Unauthorized) as unauthorized:
            await stranger.ask("Ship?", route=ROUTE)
    assert unauthorized.value.status == 401
    assert unauthorized.value.code == "unauthorized"
    assert unauthorized.value.message == "The API key is missing or wrong."
    with pytest.raises(NotFound):
        await bridge.get("q_404")
    mine = await bridge.ask("Ship?", route=ROUTE)
    async with Bridge(fake.url, OTHER_KEY) as other:
        with pytest.raises(NotFound):
            await other.get(mine.id)
    with pytest.raises(Unprocessable, match="installed there first"):
        await bridge.ask("Ship?", route="teams:unseen")
    closed = await bridge.cancel(mine.id, "changed my mind")
    assert closed.cancel_reason == "changed my mind"
    with pytest.raises(Conflict) as conflict:
        await bridge.cancel(mine.id)
    assert conflict.value.question is not None
    assert conflict.value.question.status == "cancelled"


async def test_the_server_refusal_reaches_the_caller(fake: FakeBridge, bridge: Bridge) -> None:
    """A body the client would send but the API refuses is InvalidRequest with its sentence."""
    question = await bridge.ask("Ship?", route=ROUTE)
    with pytest.raises(InvalidRequest, match="wait must be 0 to 30"):
        await bridge.poll(question.id, 31)


async def test_list_pages_newest_first(fake: FakeBridge, bridge: Bridge) -> None:
    """Pages follow next_cursor to the end; filters narrow them."""
    ids = [(await bridge.ask(f"Q{i}?", route=ROUTE, run_ref="r")).id for i in range(3)]
    await bridge.ask("Other?", route=ROUTE)
    first = await bridge.list(run_ref="r", limit=2)
    assert [q.id for q in first.data] == ids[::-1][:2]
    assert first.next_cursor is not None
    rest = await bridge.list(run_ref="r", limit=2, cursor=first.next_cursor)
    assert [q.id for q in rest.data] == [ids[0]]
    assert rest.next_cursor is None
    await bridge.cancel(ids[1])
    assert [q.id for q in (await bridge.list(status="cancelled")).data] == [ids[1]]


async def test_a_handle_can_be_taken_up_again_by_id(fake: FakeBridge, bridge: Bridge) -> None:
    """A process that restarted finds its question by id and waits on it."""
    asked = await bridge.form("Details", "Tell us", model=Details, route=ROUTE)
    fake.state.answer(asked.id, {"email": "a@b.co", "age": 3})
    again = await bridge.question(asked.id, model=Details)
    assert await again.wait() == Details(email="a@b.co", age=3)


async def test_bad_input_is_refused_before_sending(fake: FakeBridge, bridge: Bridge) -> None:
    """The request models check the call locally, with the field named."""
    with pytest.raises(ValueError, match="surface:conversation"):
        await bridge.ask("Ship?", route="nowhere")
    with pytest.raises(ValueError, match="answerers"):
        await bridge.approve(
            "deploy", "Deploy", arguments={}, risk="low", route=ROUTE, answerers=[]
        )
    assert fake.state.questions == {}


def test_the_looser_forms_become_one_typed_value() -> None:
    options = AskOptions.of(
        route=["slack:C1/1700.1", {"surface": "teams", "conversation": "19:ops"}],
        answerers=["U1", "U2"],
        policy={"quorum": 2},
        allow=["approve", "reject", "edit"],
    )
    assert options.route == (
        Route(surface="slack", conversation="C1", thread="1700.1"),
        Route(surface="teams", conversation="19:ops"),
    )
    assert options.answerers == ("U1", "U2")
    assert options.policy == Policy(quorum=2)
    assert options.allow == ("approve", "reject", "edit")
    fields = options.create_fields()
    assert set(fields) == {"routes", "answerers", "policy", "allow"}
    one = AskOptions.of(route="console:ops", ttl_seconds=60).create_fields()
    assert one == {"route": Route(surface="console", conversation="ops"), "ttl_seconds": 60}
    with pytest.raises(ValueError, match="surface:conversation"):
        AskOptions.of(route="no-colon")


async def test_create_with_the_value_sends_what_the_keywords_send(
    fake: FakeBridge, bridge: Bridge
) -> None:
    """The same idempotency key with the same body is the same question: a different body
    would be refused as a conflict, so both ways must send the very same request."""
    by_keywords = await bridge.ask(
        "Ship?",
        route=["slack:C1", "console:ops"],
        idempotency_key="same",
        answerers=["U1"],
        ttl_seconds=120,
        metadata={"ticket": 7, "note": None},
        run_ref="r1",
    )
    options = AskOptions.of(
        route=["slack:C1", "console:ops"],
        answerers=["U1"],
        ttl_seconds=120,
        metadata={"ticket": 7, "note": None},
        run_ref="r1",
    )
    by_value = await bridge.create(questions_of("Ship?"), options, idempotency_key="same")
    assert by_value.id == by_keywords.id
    assert len(fake.state.questions) == 1


async def test_create_takes_its_kind_from_the_payload(fake: FakeBridge, bridge: Bridge) -> None:
    payload = ApprovalPayload(action="deploy", summary="Deploy web", arguments={}, risk="high")
    asked = await bridge.create(
        payload, AskOptions.of(route="console:ops", answerers=["U1"], allow=["approve", "reject"])
    )
    stored = fake.state.questions[asked.id]
    assert stored["kind"] == "approval"
    assert stored["answerers"] == ["U1"]
    with pytest.raises(ValueError, match="allow"):
        await bridge.create(
            questions_of("Ship?"), AskOptions.of(route="console:ops", allow=["approve"])
        )
