"""The capability's failure paths (docs/architecture.md, "Pausing: all or nothing").

Each test says the promise it proves.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import jwt
import pytest

from bot.contract.answers import AskUserAnswers
from bot.human import (
    ASK_USER,
    REFUSAL,
    HumanInteractionCapability,
    PauseBinding,
    human_interaction,
)
from bot.human.factory import InMemoryConsumption
from bot.human.live_binding import current_run_binding
from bot.human.tokens import MintedToken, TokenError, TokenSigner
from bot.interactions.approval import (
    APPROVAL,
    APPROVAL_REFUSAL,
    approval_registration,
    approval_tool,
)
from bot.kernel import (
    Agent,
    CapabilityContribution,
    CapabilityRequest,
    ContractViolationError,
    Phase,
    StageDescriptor,
    TraceStatus,
    TurnCompleted,
    TurnSuspended,
    current_turn,
    function_tool,
    restore,
)
from bot.providers.scripted import ScriptedProvider
from bot.questions.records import AuditEvent, Closing
from bot.service.answering.outcomes import Redeemed, Responder
from bot.service.running.resume import resume_turn
from bot.stores import QuestionStatus
from bot.stores.ports import Stores
from bot.testing import call, calls, question, say
from tests.human._capability import ASK, REQUEST, capability_for
from tests.support import HarnessFactory, steps

GOOD = {"answers": {"Which environment?": "staging"}}


def audited_capability(
    signer: TokenSigner, stores: Stores, **options: Any
) -> HumanInteractionCapability:
    """``capability_for`` with the store's audit trail too: these tests read what it recorded."""
    return capability_for(signer, stores, **({"audit": stores.audit} | options))


def ids_in(db_path: Path, table: str) -> list[str]:
    """Every row of the store's file, read behind its back: pauses or checkpoints."""
    column = {"pauses": "interrupt_id", "checkpoints": "checkpoint_id"}[table]
    query = f"SELECT {column} FROM {table} ORDER BY rowid"  # noqa: S608 - our own identifiers
    with closing(sqlite3.connect(db_path)) as conn:
        return [row[0] for row in conn.execute(query)]


async def audited(stores: Stores) -> list[AuditEvent]:
    """The audit trail, oldest first."""
    return list(reversed(await stores.audit.recent()))


async def assert_nothing_left(stores: Stores, db_path: Path) -> None:
    """No ledger row, no checkpoint, no audit event claiming a pause that stands."""
    assert ids_in(db_path, "pauses") == []
    assert ids_in(db_path, "checkpoints") == []
    kinds = [event.kind for event in await audited(stores)]
    assert kinds.count("paused") == kinds.count("pause-withdrawn")


def observations(outcome: TurnCompleted) -> list[str]:
    return [m.content for m in outcome.state.messages if m.role == "tool"]


async def declined(agent: Agent) -> TurnCompleted:
    outcome = await agent.run_turn(REQUEST)
    assert isinstance(outcome, TurnCompleted), outcome
    pre_tool = [t for t in outcome.traces if t.phase is Phase.PRE_TOOL]
    assert pre_tool and pre_tool[0].status is TraceStatus.NO_CHANGE
    return outcome


class CrashingStage:
    """A capability whose pre-tool stage raises, folded ahead of human interaction."""

    name = "crasher"

    def __init__(self) -> None:
        self.ran = 0

    def contribute(self, request: CapabilityRequest) -> CapabilityContribution:
        stage = StageDescriptor("crasher.boom", Phase.PRE_TOOL, self.name)

        async def boom(context: Any) -> Any:
            self.ran += 1
            raise RuntimeError("boom")

        return CapabilityContribution(self.name, stages=(stage,), handlers={stage.stage_id: boom})


# A FAILED pre-tool stage ends the turn ----------------------------------------


async def test_a_crash_earlier_in_pre_tool_wins_over_a_later_pause(
    signer: TokenSigner, sqlite_stores: Stores, db_path: Path
) -> None:
    """A raise from pre-tool becomes a FAILED trace and require_no_crashed_stage turns
    that into a ContractViolationError that ends the turn -- even when the human
    stage after it would have paused; it never runs, so nothing is issued."""
    stores = sqlite_stores
    crasher = CrashingStage()
    agent = Agent(
        ScriptedProvider([calls(ASK), say("unreachable")]),
        capabilities=[crasher, audited_capability(signer, stores)],
    )
    with pytest.raises(ContractViolationError, match=r"crasher\.boom"):
        await agent.run_turn(REQUEST)
    assert crasher.ran == 1
    await assert_nothing_left(stores, db_path)
    assert await stores.audit.recent() == []


# A pause is all or nothing ------------------------------------------------------


async def test_a_token_too_long_to_post_declines_before_any_row(
    signer: TokenSigner, sqlite_stores: Stores, db_path: Path
) -> None:
    """A token that cannot be posted would leave an outstanding ledger row for a
    question that is never asked. A token over the size limit is a TokenError:
    declined, the checkpoint undone."""
    stores = sqlite_stores

    def huge_scope() -> PauseBinding | None:
        binding = current_run_binding()
        assert binding is not None
        return PauseBinding(scope="S" * 1200, run_id=binding.run_id)

    outcome = await declined(
        Agent(
            ScriptedProvider([calls(ASK), say("carried on")]),
            capabilities=[audited_capability(signer, stores, binding=huge_scope)],
        )
    )
    assert observations(outcome) == [REFUSAL]
    detail = next(t.detail for t in outcome.traces if t.phase is Phase.PRE_TOOL)
    assert "resume token" in detail and "1000" in detail
    await assert_nothing_left(stores, db_path)
    assert await stores.audit.recent() == []


@pytest.mark.parametrize(
    "encoder",
    [
        pytest.param("raises", id="encoder raises TokenError"),
        pytest.param("x" * 1000, id="encoder returns 1000 characters"),
        pytest.param("", id="encoder returns nothing"),
    ],
)
async def test_a_token_the_encoder_cannot_deliver_is_a_decline(
    signer: TokenSigner, encoder: str, sqlite_stores: Stores, db_path: Path
) -> None:
    """Declining hands the model the refusal back as the tool's observation and the
    turn carries on. The capability length-checks whatever encoder it was given."""
    stores = sqlite_stores

    def encode(minted: MintedToken) -> str:
        if encoder == "raises":
            raise TokenError("cannot encode")
        return encoder

    outcome = await declined(
        Agent(
            ScriptedProvider([calls(ASK), say("carried on")]),
            capabilities=[audited_capability(signer, stores, encode_token=encode)],
        )
    )
    assert observations(outcome) == [REFUSAL]
    await assert_nothing_left(stores, db_path)


class FailingAudit:
    async def append(self, event: AuditEvent) -> None:
        raise OSError("audit disk full")

    async def recent(self, **_: Any) -> list[AuditEvent]:
        return []


class FailingLedger:
    def __init__(self) -> None:
        self.rows: dict[str, Any] = {}

    async def issue(self, record: Any) -> None:
        raise OSError("ledger disk full")


class FailingCheckpoints:
    saved: dict[str, Any] = {}  # noqa: RUF012 - read-only, always empty

    async def save(self, run_id: str, state: dict[str, Any], **_: Any) -> str:
        raise OSError("checkpoint disk full")


@pytest.mark.parametrize("port", ["audit", "ledger", "checkpoints"])
async def test_a_failing_port_leaves_no_outstanding_row_and_no_orphan_checkpoint(
    signer: TokenSigner, port: str, sqlite_stores: Stores, db_path: Path
) -> None:
    """A port with a bad minute declines the pause rather than raising. Whichever port
    fails, the model gets the refusal and no outstanding row, checkpoint or
    unwithdrawn "paused" event is left."""
    stores = sqlite_stores
    broken: dict[str, Any] = {
        "audit": {"audit": FailingAudit()},
        "ledger": {"ledger": FailingLedger()},
        "checkpoints": {"checkpoints": FailingCheckpoints()},
    }[port]
    outcome = await declined(
        Agent(
            ScriptedProvider([calls(ASK), say("carried on")]),
            capabilities=[audited_capability(signer, stores, **broken)],
        )
    )
    assert observations(outcome) == [REFUSAL]
    detail = next(t.detail for t in outcome.traces if t.phase is Phase.PRE_TOOL)
    assert "OSError" in detail
    await assert_nothing_left(stores, db_path)
    if port == "ledger":
        assert [e.kind for e in await audited(stores)] == ["paused", "pause-withdrawn"]


async def test_a_miswired_port_still_crashes_but_leaves_no_checkpoint(
    signer: TokenSigner, sqlite_stores: Stores, db_path: Path
) -> None:
    """A raise from pre-tool becomes a FAILED trace -- a wiring bug (TypeError) is not
    a refusal, yet the checkpoint it would have orphaned is discarded."""
    stores = sqlite_stores

    class MiswiredLedger:
        async def issue(self, record: Any) -> None:
            raise TypeError("issue() got an unexpected keyword argument")

    agent = Agent(
        ScriptedProvider([calls(ASK)]),
        capabilities=[audited_capability(signer, stores, ledger=MiswiredLedger())],
    )
    with pytest.raises(ContractViolationError, match="TypeError"):
        await agent.run_turn(REQUEST)
    assert ids_in(db_path, "checkpoints") == []


# A declined interaction always answers with the refusal ---------------------------

ODD_ARGUMENTS = {
    "wrong key": {"question": "Which environment?"},
    "unparsed arguments": {"_unparsed_arguments": "{questions: [oops"},
    "extra keys": {
        "questions": [question("Which environment?", "staging")],
        "urgent": True,
    },
    "no arguments": {},
}


@pytest.mark.parametrize("arguments", ODD_ARGUMENTS.values(), ids=ODD_ARGUMENTS.keys())
@pytest.mark.parametrize("bound", [True, False], ids=["bound", "unbound"])
async def test_ask_user_declined_gives_the_refusal_whatever_the_model_wrote(
    signer: TokenSigner,
    arguments: dict[str, Any],
    bound: bool,
    sqlite_stores: Stores,
    db_path: Path,
) -> None:
    """Declining hands the model the refusal back as the tool's observation -- the
    refusal text, never a TypeError about the arguments the model wrote."""
    stores = sqlite_stores
    binding = current_run_binding if bound else (lambda: None)
    outcome = await declined(
        Agent(
            ScriptedProvider([calls(call(ASK_USER, **arguments)), say("carried on")]),
            capabilities=[audited_capability(signer, stores, binding=binding)],
        )
    )
    assert observations(outcome) == [REFUSAL]
    await assert_nothing_left(stores, db_path)


@pytest.mark.parametrize("arguments", ODD_ARGUMENTS.values(), ids=ODD_ARGUMENTS.keys())
async def test_approval_declined_gives_its_refusal_whatever_the_model_wrote(
    signer: TokenSigner, arguments: dict[str, Any], sqlite_stores: Stores, db_path: Path
) -> None:
    """Declining hands the model the refusal back as the tool's observation -- for a
    deployment's own interaction too."""
    stores = sqlite_stores
    outcome = await declined(
        Agent(
            ScriptedProvider([calls(call(APPROVAL, **arguments)), say("carried on")]),
            capabilities=[
                audited_capability(signer, stores, registrations=[approval_registration()])
            ],
            tools=[approval_tool()],
        )
    )
    assert observations(outcome) == [APPROVAL_REFUSAL]
    await assert_nothing_left(stores, db_path)


# checkpoint_id and resumable ---------------------------------------------------


def bound_to(checkpoint_id: str) -> Any:
    def binding() -> PauseBinding | None:
        live = current_run_binding(checkpoint_id=checkpoint_id)
        return live

    return binding


async def test_a_bound_checkpoint_id_is_used_as_given(
    signer: TokenSigner, sqlite_stores: Stores, db_path: Path
) -> None:
    """A checkpoint_id of None is resolved through the checkpoint port -- and when it
    is not None, it is the id used."""
    stores = sqlite_stores
    outcome = await Agent(
        ScriptedProvider([calls(ASK)]),
        capabilities=[audited_capability(signer, stores, binding=bound_to("deploy-77"))],
    ).run_turn(REQUEST)
    assert isinstance(outcome, TurnSuspended)
    row = (await stores.ledger.for_runs([REQUEST.run_id]))[0]
    assert row.checkpoint_id == "deploy-77"
    token = outcome.interrupt.token
    issued = jwt.decode(token, options={"verify_signature": False})["iat"]
    assert signer.decode(token, now=issued).checkpoint == "deploy-77"
    assert ids_in(db_path, "checkpoints") == ["deploy-77"]
    assert outcome.interrupt.resumable is True


@pytest.mark.parametrize("answer", ["", "someone-else"], ids=["empty", "another id"])
async def test_resumable_needs_the_checkpointer_to_acknowledge_the_write(
    signer: TokenSigner, answer: str, sqlite_stores: Stores, db_path: Path
) -> None:
    """resumable is True only when the turn's state reached the checkpointer and the
    write said so. A store that answers with no id, or another id, did not say so."""
    stores = sqlite_stores

    class Unacknowledging:
        def __init__(self) -> None:
            self.saved: dict[str, Any] = {}
            self.discarded: list[str] = []

        async def save(self, run_id: str, state: dict[str, Any], **_: Any) -> str:
            if answer:
                self.saved[answer] = state
            return answer

        async def discard(self, checkpoint_id: str) -> None:
            self.discarded.append(checkpoint_id)
            self.saved.pop(checkpoint_id, None)

    checkpoints = Unacknowledging()
    outcome = await declined(
        Agent(
            ScriptedProvider([calls(ASK), say("carried on")]),
            capabilities=[
                audited_capability(
                    signer, stores, binding=bound_to("deploy-77"), checkpoints=checkpoints
                )
            ],
        )
    )
    assert observations(outcome) == [REFUSAL]
    assert ids_in(db_path, "pauses") == []
    assert checkpoints.saved == {}
    assert checkpoints.discarded == ([answer] if answer else [])


async def test_a_refusing_saver_declines_and_only_a_deployment_saver_publishes_false(
    signer: TokenSigner, sqlite_stores: Stores, db_path: Path
) -> None:
    """Settled in docs/architecture.md ("When the checkpoint write does not happen"): a
    store that fails declines; only a bound id with no store publishes resumable=False."""
    stores = sqlite_stores
    refused = await declined(
        Agent(
            ScriptedProvider([calls(ASK), say("carried on")]),
            capabilities=[audited_capability(signer, stores, checkpoints=FailingCheckpoints())],
        )
    )
    assert observations(refused) == [REFUSAL]
    assert ids_in(db_path, "pauses") == []

    theirs = await Agent(
        ScriptedProvider([calls(ASK)]),
        capabilities=[
            audited_capability(signer, stores, binding=bound_to("their-saver-9"), checkpoints=None)
        ],
    ).run_turn(REQUEST)
    assert isinstance(theirs, TurnSuspended)
    assert theirs.interrupt.resumable is False
    row = (await stores.ledger.for_runs([REQUEST.run_id]))[0]
    assert row.checkpoint_id == "their-saver-9"


async def test_the_sqlite_store_keeps_a_bound_id_and_discards_on_request(
    signer: TokenSigner, sqlite_stores: Any
) -> None:
    """A checkpoint_id of None is resolved through the checkpoint port -- on the
    durable store a bound id is kept as given, never overwritten by a second save,
    and a refused pause's checkpoint is removed."""
    checkpoints = sqlite_stores.checkpoints
    state = {"version": 1, "note": "first"}
    assert await checkpoints.save("run_1", state, checkpoint_id="deploy-77") == "deploy-77"
    assert await checkpoints.load("deploy-77") == state
    with pytest.raises(sqlite3.IntegrityError, match="UNIQUE"):
        await checkpoints.save("run_1", {"note": "second"}, checkpoint_id="deploy-77")
    assert await checkpoints.load("deploy-77") == state
    await checkpoints.discard("deploy-77")
    await checkpoints.discard("deploy-77")  # already gone: not an error
    assert await checkpoints.load("deploy-77") is None


async def test_a_failing_ledger_on_sqlite_leaves_no_checkpoint(
    signer: TokenSigner, sqlite_stores: Any
) -> None:
    """No outstanding ledger row for a question that is never asked -- and on the
    durable store, no checkpoint that no row refers to."""
    capability = audited_capability(
        signer, sqlite_stores, binding=bound_to("deploy-78"), ledger=FailingLedger()
    )
    outcome = await declined(
        Agent(ScriptedProvider([calls(ASK), say("carried on")]), capabilities=[capability])
    )
    assert observations(outcome) == [REFUSAL]
    assert await sqlite_stores.checkpoints.load("deploy-78") is None
    kinds = [event.kind for event in await sqlite_stores.audit.recent()]
    assert sorted(kinds) == ["pause-withdrawn", "paused"]


# pin ----------------------------------------------------------------------------


async def test_the_pin_travels_with_the_pause_and_comes_back_at_resume(
    signer: TokenSigner, sqlite_stores: Stores
) -> None:
    """PauseBinding is what a pause is bound to, resolved per run by the composition
    root -- its pin is saved with the paused turn and the resumed turn runs under
    the same pin, though the resume's binding names none."""
    stores = sqlite_stores
    seen: list[str | None] = []

    async def deploy(**_: Any) -> str:
        turn = current_turn()
        seen.append(turn.pin if turn is not None else "no turn")
        return "deployed"

    tool = function_tool(deploy, name="deploy", description="d", parameters={"type": "object"})

    def pinned() -> PauseBinding | None:
        return current_run_binding(pin="release-42")

    first = Agent(
        ScriptedProvider([calls(ASK, call("deploy"))]),
        capabilities=[audited_capability(signer, stores, binding=pinned)],
        tools=[tool],
    )
    paused = await first.run_turn(REQUEST)
    assert isinstance(paused, TurnSuspended) and REQUEST.pin is None
    row = (await stores.ledger.for_runs([REQUEST.run_id]))[0]
    saved = await stores.checkpoints.load(row.checkpoint_id)
    assert saved is not None
    request, _state = restore(saved)
    assert request.pin == "release-42"

    answering = Closing(
        QuestionStatus.ANSWERED, by="Alice", at=1.0, answer=AskUserAnswers.model_validate(GOOD)
    )
    assert await steps(stores).spend(row.interrupt_id, answering)
    answered = await stores.ledger.get(row.interrupt_id)
    assert answered is not None
    second = Agent(
        ScriptedProvider([say("done")]),
        capabilities=[audited_capability(signer, stores)],
        tools=[tool],
    )
    resumed = await resume_turn(second, stores.checkpoints, answered)
    assert isinstance(resumed, TurnCompleted)
    assert seen == ["release-42"]


# redeem goes through the capability's seams --------------------------------------


async def test_redeem_spends_and_decodes_through_the_capability(
    harness: HarnessFactory, sqlite_stores: Any
) -> None:
    """The consumption seam records that a token was spent, so a second redemption
    can be refused -- redeem reads and spends through the capability's own
    decode_token and consumption, never around them."""
    h = harness(sqlite_stores, [calls(ASK), say("deployed")])
    await h.start()
    capability = h.capability
    real_decode, real_consumption = capability.decode_token, capability.consumption
    assert real_decode is not None
    decoded: list[str] = []
    spent: list[str] = []

    def decode(token: str) -> Any:
        decoded.append(token)
        return real_decode(token)

    class Recording:
        async def spend(self, interrupt_id: str, closing: Closing) -> bool:
            spent.append(interrupt_id)
            return await real_consumption.spend(interrupt_id, closing)

    capability.decode_token = decode
    capability.consumption = Recording()
    token = h.surface.last_token
    outcome = await h.answer(GOOD)
    assert isinstance(outcome, Redeemed)
    assert decoded == [token]
    assert spent == [outcome.interrupt_id]


async def test_the_default_consumption_works_on_its_own(signer: TokenSigner) -> None:
    """The consumption seam has a default, and it is single-process. Built with no
    ledger, it still spends a token once and refuses the second time."""
    capability = human_interaction(
        signer=signer, binding=current_run_binding, encode_token=signer.encode
    )
    assert isinstance(capability.consumption, InMemoryConsumption)
    closing = Closing(
        QuestionStatus.ANSWERED, by="Alice", at=1.0, answer=AskUserAnswers.model_validate(GOOD)
    )
    assert await capability.consumption.spend("int_1", closing) is True
    assert await capability.consumption.spend("int_1", closing) is False
    assert await capability.consumption.spend("int_2", closing) is True


async def test_a_capability_without_a_reader_refuses_every_token(
    harness: HarnessFactory, sqlite_stores: Any
) -> None:
    """Without decode_token a pause has no public reader, so the run can be stopped
    and not continued -- redeem refuses, spends nothing."""
    from bot.service.answering.outcomes import TokenInvalid

    h = harness(sqlite_stores, [calls(ASK), say("deployed")])
    await h.start()
    h.capability.decode_token = None
    refused = await h.service.redeem(
        h.surface.last_token, GOOD, responder=Responder("test:alice", "Alice"), scope="T1"
    )
    assert isinstance(refused, TokenInvalid)
    row = (await sqlite_stores.ledger.outstanding())[0]
    assert row.status is QuestionStatus.OUTSTANDING
