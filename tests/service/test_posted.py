"""The open question an action on a posted message is for (``RunService.posted_question``):
read by the id its signed token names, found only on a post of the question."""

from __future__ import annotations

from bot.contract.payloads import payload_of
from bot.human import ASK_USER, AskUserPayload, AskUserResponse, InteractionRegistration
from bot.questions.posts import post_of
from bot.questions.records import ApiRequest
from bot.stores import Question, RunRecord, RunStatus
from bot.stores.ports import Delivered, Stores
from bot.testing import call, calls, question, say
from tests.support import WHERE, Harness, HarnessFactory, forgeries, steps

ASK = call(ASK_USER, questions=[question("Which environment?", "staging", "production")])
GOOD = {"answers": {"Which environment?": "staging"}}
TEAMS_REF = {"service_url": "http://teams", "conversation_id": "19:ops", "activity_id": "a1"}


async def paused(harness: HarnessFactory, stores: Stores, **options: object) -> Harness:
    h = harness(stores, [calls(ASK), say("deployed")], **options)
    await h.start()
    return h


async def test_a_question_is_found_where_it_was_posted_and_nowhere_else(
    harness: HarnessFactory, stores: Stores
) -> None:
    """Found by its token in its own scope on its own surface, as its run and row stand; not
    from another scope or surface, with an id beside it that names another question, with a
    forged token, or once it is closed."""
    h = await paused(harness, stores)
    token, asked = h.surface.last_token, h.surface.questions[-1][1]
    found = await h.service.posted_question(token, surface="test", scope=WHERE.scope)
    assert found is not None and found.question.interrupt_id == asked.interrupt_id
    assert found.run.run_id == asked.run_id and found.run.surface == "test"
    same = await h.service.posted_question(
        token, surface="test", scope=WHERE.scope, interrupt_id=asked.interrupt_id
    )
    assert same == found

    assert await h.service.posted_question(token, surface="test", scope="T-other") is None
    assert await h.service.posted_question(token, surface="slack", scope=WHERE.scope) is None
    other_id = await h.service.posted_question(
        token, surface="test", scope=WHERE.scope, interrupt_id="int_someone_else"
    )
    assert other_id is None
    for kind, forged in forgeries(token).items():
        assert await h.service.posted_question(forged, surface="test", scope=WHERE.scope) is None, (
            kind
        )
    assert await h.service.posted_question("", surface="test", scope=WHERE.scope) is None

    await h.answer(GOOD)
    assert await h.service.posted_question(token, surface="test", scope=WHERE.scope) is None


async def test_an_interaction_open_to_other_scopes_is_found_from_any(
    harness: HarnessFactory, stores: Stores
) -> None:
    """Where redeem takes an answer from another scope, the question is found from there too
    (as its first route shows it), so the answer is shaped, never sent empty."""
    open_registration = InteractionRegistration.ask_user(
        payload_schema=AskUserPayload, response_schema=AskUserResponse, cross_scope_allowed=True
    )
    h = await paused(harness, stores, registrations=[open_registration])
    found = await h.service.posted_question(h.surface.last_token, surface="test", scope="T2")
    assert found is not None and found.question.scope == WHERE.scope


async def test_a_further_post_is_found_as_its_surface_sees_it(
    harness: HarnessFactory, stores: Stores
) -> None:
    """A question asked on two routes is found from its second, the run and the question as
    that post shows them (its surface, scope, conversation and message); its first route
    still finds it as asked."""
    h = harness(stores, [])
    run = RunRecord(
        run_id="run_api_1",
        scope=WHERE.scope,
        surface="test",
        requester="api:ci",
        text="Deploy?",
        created_at=h.service.clock(),
        conversation=WHERE.to_json(),
        status=RunStatus.REMOTE,
    )
    teams = {"key": "19:ops", "reference": {"serviceUrl": "http://teams"}}
    asked = Question(
        interrupt_id="int_1",
        run_id=run.run_id,
        scope=WHERE.scope,
        name=ASK_USER,
        tool_call_id="api_1",
        checkpoint_id="",
        payload=payload_of(ASK_USER, ASK.arguments),
        issued_at=run.created_at,
        expires_at=run.created_at + 600,
        answerers=("anyone",),
        posts=(post_of("teams:19:ops", "teams", "tenant-1/19:ops", teams),),
    )
    api = ApiRequest("int_1", "ci", "key-1", "hash", ASK_USER, run.created_at, key_id="key_ci")
    written = await steps(stores).lifecycle.ask_remote(run, asked, api)
    assert written is not None
    second = written.owed[1].delivery.delivery_id
    await steps(stores).delivered_all([Delivered(second, run.created_at, TEAMS_REF, 0)])
    token = h.service.views.token_for(asked)

    there = await h.service.posted_question(token, surface="teams", scope="tenant-1/19:ops")
    assert there is not None
    assert (there.run.surface, there.run.scope, there.run.conversation) == (
        "teams",
        "tenant-1/19:ops",
        teams,
    )
    assert there.question.scope == "tenant-1/19:ops" and there.question.message_ref == TEAMS_REF
    here = await h.service.posted_question(token, surface="test", scope=WHERE.scope)
    assert here is not None and here.run.surface == "test"
    assert (here.question.interrupt_id, here.question.scope) == ("int_1", WHERE.scope)
    assert await h.service.posted_question(token, surface="teams", scope=WHERE.scope) is None
