"""The demo ops agent: ask, approve, act, report, on the real turn loop."""

from __future__ import annotations

from typing import Any

from bot.demo import HELP, Fleet, demo_script
from bot.human import ask_user_registration
from bot.interactions.approval import approval_registration, approval_tool
from bot.kernel.journal import CallContext, dispatching
from bot.service.answering.outcomes import Redeemed
from bot.stores.ports import Stores
from bot.testing import FixedClock
from tests.support import Harness, HarnessFactory


def demo(
    harness: HarnessFactory, stores: Stores, fleet: Fleet | None = None, **options: Any
) -> Harness:
    return harness(
        stores,
        demo_script,
        tools=[*(fleet or Fleet()).tools(), approval_tool()],
        registrations=[ask_user_registration(), approval_registration()],
        **options,
    )


async def test_deploy_asks_environment_then_approval_then_deploys(
    harness: HarnessFactory, sqlite_stores: Stores
) -> None:
    """deploy web: environment question, approval, deploy, report."""
    fleet = Fleet()
    h = demo(harness, sqlite_stores, fleet)
    await h.start("deploy web")
    first = h.surface.questions[-1][1]
    assert first.name == "ask_user"
    question = first.payload.questions[0]
    assert [o.label for o in question.options] == ["staging", "production"]
    assert isinstance(await h.answer({"answers": {question.question: "staging"}}), Redeemed)
    approval = h.surface.questions[-1][1]
    assert approval.name == "approval"
    assert approval.payload.summary == "Deploy web 1.5.0 to staging"
    assert approval.payload.risk == "low"
    assert isinstance(await h.answer({"decision": "approve", "comment": ""}), Redeemed)
    assert h.surface.outcomes[-1][1] == (
        "Deployed web 1.5.0 to staging (was 1.4.2). Health checks green."
    )
    assert fleet.running["web"]["staging"] == "1.5.0"


async def test_a_rejection_deploys_nothing(harness: HarnessFactory, sqlite_stores: Stores) -> None:
    """Rejecting the approval ends the run without touching the fleet."""
    fleet = Fleet()
    h = demo(harness, sqlite_stores, fleet)
    await h.start("deploy api")
    question = h.surface.questions[-1][1].payload.questions[0].question
    await h.answer({"answers": {question: "production"}})
    assert h.surface.questions[-1][1].payload.risk == "high"
    await h.answer({"decision": "reject", "comment": "freeze week"})
    assert h.surface.outcomes[-1][1] == "Rejected (freeze week); I did not deploy api."
    assert fleet.running["api"]["production"] == "1.9.7"


async def test_an_unanswered_question_expires_into_no_action(
    harness: HarnessFactory, sqlite_stores: Stores, clock: FixedClock
) -> None:
    """Expiry resumes the run with 'no answer', and the demo does nothing."""
    h = demo(harness, sqlite_stores)
    await h.start("roll back worker")
    clock.advance(25 * 3600)
    assert await h.service.sweep() == 1
    await h.service.wait_idle()
    final = h.surface.outcomes[-1][1]
    assert final == "No decision arrived, so I did not roll back worker: it expired unanswered."


async def test_roll_back_is_said_as_a_verb_and_rolls_back(
    harness: HarnessFactory, sqlite_stores: Stores
) -> None:
    """ "rollback web" is read as "roll back web": the questions say the verb, the tool runs."""
    fleet = Fleet()
    fleet.previous[("web", "staging")] = "1.4.0"
    h = demo(harness, sqlite_stores, fleet)
    await h.start("rollback web")
    question = h.surface.questions[-1][1].payload.questions[0].question
    assert question == "Which environment should I roll back web in?"
    await h.answer({"answers": {question: "staging"}})
    approval = h.surface.questions[-1][1]
    assert approval.payload.action == "roll back web"
    await h.answer({"decision": "approve", "comment": ""})
    assert h.surface.outcomes[-1][1] == "Rolled web on staging back to 1.4.0."
    assert fleet.running["web"]["staging"] == "1.4.0"


async def test_status_and_unknown_requests(harness: HarnessFactory, sqlite_stores: Stores) -> None:
    """status runs a tool without pausing; anything else gets the help text."""
    h = demo(harness, sqlite_stores)
    await h.start("status web")
    assert h.surface.outcomes[-1][1] == "web: staging 1.4.2, production 1.4.1; all healthy."
    await h.start("hello")
    assert h.surface.outcomes[-1][1] == HELP
    assert h.surface.questions == []


async def test_a_deploy_replayed_with_its_key_changes_the_fleet_once() -> None:
    """The demo's deploy reads the call's idempotency key: the same call twice deploys once."""
    fleet = Fleet()
    deploy = next(tool for tool in fleet.tools() if tool.name == "deploy")
    arguments = {"service": "web", "environment": "staging"}
    with dispatching(CallContext("run-1", "call-1", "deploy")):
        first = await deploy.call(arguments)
        fleet.candidate["web"] = "9.9.9"  # a second deploy would ship this
        again = await deploy.call(arguments)
    assert first == again
    assert fleet.running["web"]["staging"] == "1.5.0"
    with dispatching(CallContext("run-1", "call-2", "deploy")):
        assert "9.9.9" in await deploy.call(arguments)  # another call is another change
