"""One test (or a few) per contract H1-H11 of docs/architecture.md, named after it."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bot.human import (
    ASK_USER,
    CAPABILITY_NAME,
    DEFAULT_TTL,
    REFUSAL,
    AskUserPayload,
    AskUserResponse,
    HumanInteractionCapability,
    InteractionConfigurationError,
    PauseBinding,
    ask_user_registration,
    build_contribution,
    human_interaction,
    pause_stage,
    redemption_is_shared,
)
from bot.human.factory import InMemoryConsumption
from bot.human.live_binding import current_run_binding
from bot.human.tokens import TokenSigner
from bot.interactions.approval import APPROVAL, approval_registration, approval_tool
from bot.kernel import (
    Agent,
    CapabilityRequest,
    ContractViolationError,
    Phase,
    TraceStatus,
    TurnCompleted,
    TurnRequest,
    TurnSuspended,
    function_tool,
)
from bot.providers.scripted import ScriptedProvider
from bot.service.answering.outcomes import AlreadyAnswered, Redeemed
from bot.stores import QuestionStatus, open_stores
from bot.stores.ports import Stores
from bot.testing import FixedClock, call, calls, question, say
from tests.human._capability import ASK, REQUEST, capability_for
from tests.support import HarnessFactory, bridge_ports


def counting_tool(counter: list[str], name: str = "lookup") -> Any:
    async def body(**arguments: Any) -> str:
        counter.append(name)
        return f"{name} ran"

    return function_tool(body, name=name, description=name, parameters={"type": "object"})


# H1 -----------------------------------------------------------------------


async def test_h1_ask_user_offered_only_when_active_bound_encoded_and_registered(
    signer: TokenSigner, sqlite_stores: Stores
) -> None:
    """ask_user is a tool only with a binding, an encoder and the ask_user registration."""
    request = CapabilityRequest(CAPABILITY_NAME)
    full = capability_for(signer, sqlite_stores)
    assert [t.name for t in full.contribute(request).tools] == [ASK_USER]
    assert ASK_USER in Agent(ScriptedProvider([]), capabilities=[full]).tools

    unbound = build_contribution(full, request, binding=None, encode_token=signer.encode)
    unencoded = build_contribution(full, request, binding=current_run_binding, encode_token=None)
    assert unbound.tools == () and unencoded.tools == ()
    assert unbound.stages == () and unencoded.stages == ()

    approval_only = capability_for(signer, sqlite_stores, registrations=[approval_registration()])
    offered = approval_only.contribute(request)
    assert offered.tools == () and len(offered.stages) == 1

    inactive = HumanInteractionCapability.compile(
        [],
        signer=signer,
        consumption=InMemoryConsumption(),
        binding=current_run_binding,
        encode_token=signer.encode,
    )
    assert inactive.contribute(request).tools == ()


async def test_h1_tool_body_returns_refusal_and_runs_only_when_the_stage_declined(
    signer: TokenSigner, sqlite_stores: Stores
) -> None:
    """With a binding the body never runs (pause); without one it answers REFUSAL."""
    capability = capability_for(signer, sqlite_stores)
    spec = capability.contribute(CapabilityRequest(CAPABILITY_NAME)).tools[0]
    assert await spec.coroutine(questions=[]) == REFUSAL

    paused = await Agent(
        ScriptedProvider([calls(ASK)]), capabilities=[capability_for(signer, sqlite_stores)]
    ).run_turn(REQUEST)
    assert isinstance(paused, TurnSuspended)
    assert not any(m.role == "tool" for m in paused.state.messages)

    declined = await Agent(
        ScriptedProvider([calls(ASK), say("ok")]),
        capabilities=[capability_for(signer, sqlite_stores, binding=lambda: None)],
    ).run_turn(REQUEST)
    assert isinstance(declined, TurnCompleted)
    observations = [m.content for m in declined.state.messages if m.role == "tool"]
    assert observations == [REFUSAL]


# H2 -----------------------------------------------------------------------


def test_h2_pause_stage_is_pre_tool_and_declares_no_effect_family() -> None:
    """The pause stage runs pre-tool and asks for no effect family."""
    stage = pause_stage()
    assert stage.phase is Phase.PRE_TOOL
    assert stage.effect_family is None
    assert stage.capability == CAPABILITY_NAME


async def test_h2_pauses_on_the_first_registered_interaction_and_other_calls_wait(
    signer: TokenSigner, sqlite_stores: Stores
) -> None:
    """A round with a plain call and two questions pauses on the first question only."""
    stores = sqlite_stores
    ran: list[str] = []
    second = call(ASK_USER, questions=[question("Why?")])
    agent = Agent(
        ScriptedProvider([calls(call("lookup"), ASK, second)]),
        capabilities=[capability_for(signer, stores)],
        tools=[counting_tool(ran)],
    )
    outcome = await agent.run_turn(REQUEST)
    assert isinstance(outcome, TurnSuspended)
    assert outcome.interrupt.tool_call_id == outcome.state.reserved[1].call_id
    assert ran == []
    assert len(await stores.ledger.outstanding()) == 1


# H3 -----------------------------------------------------------------------


async def test_h3_no_binding_declines_without_raising(
    signer: TokenSigner, sqlite_stores: Stores
) -> None:
    """A binding that resolves None is a decline: NO_CHANGE trace, the turn goes on."""
    agent = Agent(
        ScriptedProvider([calls(ASK), say("done")]),
        capabilities=[capability_for(signer, sqlite_stores, binding=lambda: None)],
    )
    outcome = await agent.run_turn(REQUEST)
    assert isinstance(outcome, TurnCompleted) and outcome.text == "done"
    pre_tool = [t for t in outcome.traces if t.phase is Phase.PRE_TOOL]
    assert pre_tool[0].status is TraceStatus.NO_CHANGE
    assert "no pause binding" in pre_tool[0].detail


async def test_h3_refused_pause_declines_with_the_reason(
    signer: TokenSigner, sqlite_stores: Stores
) -> None:
    """A payload that fails the schema is refused; the trace carries why."""
    bad = call(ASK_USER, questions=[{"question": ""}])
    agent = Agent(
        ScriptedProvider([calls(bad), say("fine")]),
        capabilities=[capability_for(signer, sqlite_stores)],
    )
    outcome = await agent.run_turn(REQUEST)
    assert isinstance(outcome, TurnCompleted)
    trace = next(t for t in outcome.traces if t.phase is Phase.PRE_TOOL)
    assert trace.status is TraceStatus.NO_CHANGE
    assert "refused" in trace.detail and "questions.0.question" in trace.detail


async def test_h3_any_other_stage_exception_is_a_contract_violation(
    signer: TokenSigner, sqlite_stores: Stores
) -> None:
    """A binding that crashes fails the stage, and the turn ends with ContractViolationError."""

    def broken_binding() -> PauseBinding:
        raise RuntimeError("wired wrong")

    agent = Agent(
        ScriptedProvider([calls(ASK), say("unreachable")]),
        capabilities=[capability_for(signer, sqlite_stores, binding=broken_binding)],
    )
    with pytest.raises(ContractViolationError, match="wired wrong"):
        await agent.run_turn(REQUEST)


# H4 -----------------------------------------------------------------------


async def test_h4_binding_is_resolved_per_run(signer: TokenSigner, sqlite_stores: Stores) -> None:
    """One agent, two runs in two scopes: each ledger row carries its own run's facts."""
    stores = sqlite_stores
    agent = Agent(
        ScriptedProvider([calls(ASK), calls(ASK)]), capabilities=[capability_for(signer, stores)]
    )
    first = await agent.run_turn(REQUEST)
    second = await agent.run_turn(TurnRequest(text="go", scope="T2", run_id="run_2", thread_id="x"))
    assert isinstance(first, TurnSuspended) and isinstance(second, TurnSuspended)
    rows = {row.run_id: row for row in await stores.ledger.outstanding()}
    assert rows["run_1"].scope == "T1"
    assert (rows["run_2"].scope, rows["run_2"].thread_id) == ("T2", "x")


async def test_h4_checkpoint_id_comes_from_the_port_or_the_pause_is_refused(
    signer: TokenSigner, sqlite_stores: Stores
) -> None:
    """No checkpoint id: the port assigns one; no port either: refused (declined)."""
    stores = sqlite_stores
    agent = Agent(ScriptedProvider([calls(ASK)]), capabilities=[capability_for(signer, stores)])
    outcome = await agent.run_turn(REQUEST)
    assert isinstance(outcome, TurnSuspended)
    row = (await stores.ledger.outstanding())[0]
    assert await stores.checkpoints.load(row.checkpoint_id) is not None

    neither = Agent(
        ScriptedProvider([calls(ASK), say("asked nobody")]),
        capabilities=[capability_for(signer, stores, checkpoints=None)],
    )
    declined = await neither.run_turn(REQUEST)
    assert isinstance(declined, TurnCompleted)
    assert "no checkpoint" in next(t.detail for t in declined.traces if t.phase is Phase.PRE_TOOL)


# H5 -----------------------------------------------------------------------


async def test_h5_an_empty_contribution_still_names_the_capability(
    signer: TokenSigner, sqlite_stores: Stores
) -> None:
    """With nothing to offer, the contribution is empty but named."""
    contribution = build_contribution(
        capability_for(signer, sqlite_stores),
        CapabilityRequest(CAPABILITY_NAME),
        binding=None,
        encode_token=None,
    )
    assert contribution.capability == CAPABILITY_NAME
    assert (contribution.stages, contribution.tools, dict(contribution.handlers)) == ((), (), {})


# H6 -----------------------------------------------------------------------


@pytest.mark.parametrize("missing", ["signer", "binding", "encode_token"])
def test_h6_factory_requires_signer_binding_and_encoder(signer: TokenSigner, missing: str) -> None:
    """Each required argument, left out, is named in the configuration error."""
    arguments: dict[str, Any] = {
        "signer": signer,
        "binding": current_run_binding,
        "encode_token": signer.encode,
    }
    arguments[missing] = None
    with pytest.raises(InteractionConfigurationError, match=missing):
        human_interaction(**arguments)


def test_h6_factory_defaults_and_refusals(signer: TokenSigner) -> None:
    """Defaults: ask_user alone, DEFAULT_TTL, single-process consumption; blanks refused."""
    capability = human_interaction(
        signer=signer, binding=current_run_binding, encode_token=signer.encode
    )
    assert capability.names() == (ASK_USER,)
    assert capability.ttl is DEFAULT_TTL
    assert isinstance(capability.consumption, InMemoryConsumption)
    with pytest.raises(InteractionConfigurationError, match="blank"):
        human_interaction(
            signer=signer,
            binding=current_run_binding,
            encode_token=signer.encode,
            ask_user_description="   ",
        )
    with pytest.raises(InteractionConfigurationError, match="no interaction is registered"):
        human_interaction(
            signer=signer,
            binding=current_run_binding,
            encode_token=signer.encode,
            registrations=[],
        )


async def test_h6_custom_ask_user_description_reaches_the_tool(
    signer: TokenSigner, sqlite_stores: Stores
) -> None:
    """A deployment's ask_user wording replaces the default description."""
    capability = capability_for(signer, sqlite_stores, ask_user_description="Pregunta al usuario.")
    tool = capability.contribute(CapabilityRequest(CAPABILITY_NAME)).tools[0]
    assert tool.description == "Pregunta al usuario."


# H7 -----------------------------------------------------------------------


def test_h7_ask_user_registration_has_real_schemas_and_no_cross_scope() -> None:
    """The registration validates both sides and refuses cross-scope redemption."""
    registration = ask_user_registration()
    assert registration.payload_schema is AskUserPayload
    assert registration.response_schema is AskUserResponse
    assert registration.cross_scope_allowed is False
    payload = registration.validate_payload(
        {"questions": [question("Which environment?", "staging", "production")]}
    )
    good = {"answers": {"Which environment?": "staging"}}
    assert registration.validate_answer(good, payload) == good
    from bot.human import AnswerValidationError, HumanInteractionError

    with pytest.raises(AnswerValidationError):
        registration.validate_answer({"answers": {"Which environment?": "prod"}}, payload)
    with pytest.raises(HumanInteractionError):
        registration.validate_payload({"questions": []})


# H8 -----------------------------------------------------------------------


async def test_h8_redemption_is_shared_only_for_durable_stores(
    db_path: Any, signer: TokenSigner
) -> None:
    """In-process consumption (a capability's default) is per process; SQLite's is shared."""
    assert redemption_is_shared(InMemoryConsumption()) is False
    default = human_interaction(
        signer=signer, binding=current_run_binding, encode_token=signer.encode
    )
    assert redemption_is_shared(default.consumption) is False
    sqlite = await open_stores(f"sqlite:///{db_path}")
    try:
        assert redemption_is_shared(bridge_ports(sqlite)) is True
    finally:
        await sqlite.close()


# H9 -----------------------------------------------------------------------


async def test_h9_resumable_is_measured_not_asserted(
    signer: TokenSigner, sqlite_stores: Stores
) -> None:
    """True when the checkpoint store took the state; False when only an id was bound."""
    stored = await Agent(
        ScriptedProvider([calls(ASK)]), capabilities=[capability_for(signer, sqlite_stores)]
    ).run_turn(REQUEST)
    assert isinstance(stored, TurnSuspended) and stored.interrupt.resumable is True

    def bound_id() -> PauseBinding:
        return PauseBinding(scope="T1", run_id="run_1", checkpoint_id="external-7")

    unstored = await Agent(
        ScriptedProvider([calls(ASK)]),
        capabilities=[capability_for(signer, sqlite_stores, binding=bound_id, checkpoints=None)],
    ).run_turn(REQUEST)
    assert isinstance(unstored, TurnSuspended) and unstored.interrupt.resumable is False


async def test_h9_a_checkpoint_store_that_fails_declines_the_pause(
    signer: TokenSigner, sqlite_stores: Stores
) -> None:
    """A store error while saving the turn is a refusal, not a resumable pause."""

    class FlakyCheckpoints:
        async def save(self, run_id: str, state: dict[str, Any]) -> str:
            raise OSError("disk full")

        async def load(self, checkpoint_id: str) -> dict[str, Any] | None:
            return None

    outcome = await Agent(
        ScriptedProvider([calls(ASK), say("carried on")]),
        capabilities=[capability_for(signer, sqlite_stores, checkpoints=FlakyCheckpoints())],
    ).run_turn(REQUEST)
    assert isinstance(outcome, TurnCompleted) and outcome.text == "carried on"


# H10 ----------------------------------------------------------------------


async def test_h10_a_token_is_single_use_across_services_sharing_a_store(
    harness: HarnessFactory, db_path: Any, clock: FixedClock, signer: TokenSigner
) -> None:
    """Two services on one SQLite file: the token redeems once, then AlreadyAnswered."""
    first_stores = await open_stores(f"sqlite:///{db_path}")
    second_stores = await open_stores(f"sqlite:///{db_path}")
    try:
        first = harness(first_stores, [calls(ASK), say("done")])
        second = harness(second_stores, [say("never")])
        await first.start()
        token = first.surface.last_token
        answer = {"answers": {"Which environment?": "staging"}}
        won = await second.answer(answer, token=token)
        lost = await first.answer(answer, token=token)
        assert isinstance(won, Redeemed)
        assert isinstance(lost, AlreadyAnswered) and lost.by == "Alice"
    finally:
        await first_stores.close()
        await second_stores.close()


# H11 ----------------------------------------------------------------------


async def test_h11_resume_joins_the_paused_call_and_runs_the_others_once(
    harness: HarnessFactory, sqlite_stores: Any
) -> None:
    """The answer is the paused call's observation; the round's plain call runs once."""
    ran: list[str] = []
    h = harness(
        sqlite_stores,
        [calls(call("lookup"), ASK), say("deployed to staging")],
        tools=[counting_tool(ran)],
    )
    run_id = await h.start()
    paused = h.surface.questions[0][1]
    assert ran == []
    outcome = await h.answer({"answers": {"Which environment?": "staging"}})
    assert isinstance(outcome, Redeemed)
    assert ran == ["lookup"]
    final_transcript = h.provider.calls[-1]
    observation = next(m for m in final_transcript if m.tool_call_id == paused.tool_call_id)
    assert json.loads(observation.content)["answers"] == [
        {"question": "Which environment?", "answer": "staging"}
    ]
    assert h.surface.outcomes == [(run_id, "deployed to staging", False)]
    row = await sqlite_stores.ledger.get(paused.interrupt_id)
    assert row.status is QuestionStatus.ANSWERED and row.resumed_at is not None


async def test_h11_a_second_interaction_in_the_round_pauses_in_turn(
    harness: HarnessFactory, sqlite_stores: Any
) -> None:
    """ask_user then approval in one round: two pauses, one after the other, then one dispatch."""
    ran: list[str] = []
    approve = call(APPROVAL, action="deploy", summary="web to staging", risk="low")
    h = harness(
        sqlite_stores,
        [calls(ASK, approve, call("lookup")), say("all done")],
        tools=[counting_tool(ran), approval_tool()],
        registrations=[ask_user_registration(), approval_registration()],
    )
    await h.start()
    assert [q[1].name for q in h.surface.questions] == [ASK_USER]
    await h.answer({"answers": {"Which environment?": "production"}})
    assert [q[1].name for q in h.surface.questions] == [ASK_USER, APPROVAL]
    assert ran == []
    await h.answer({"decision": "approve", "comment": "go"})
    assert ran == ["lookup"]
    assert h.surface.outcomes[-1][1] == "all done"
    tool_messages = [m for m in h.provider.calls[-1] if m.role == "tool"]
    assert len(tool_messages) == 3
    assert '"decision": "approve"' in tool_messages[1].content
