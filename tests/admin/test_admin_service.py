"""Admin commands through AdminService over real runs, on SQLite and PostgreSQL alike."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import jwt
import pytest

from bot.admin import AdminService, json_of, results, text_of
from bot.human import ASK_USER
from bot.kernel.messages import Message, ModelReply, ToolDefinition
from bot.questions.records import DeliveryKind
from bot.service.answering.outcomes import (
    AlreadyAnswered,
    AlreadyCancelled,
    Redeemed,
    Responder,
    TokenExpired,
)
from bot.service.answering.policy import RequesterOrApprovers, parse_rules
from bot.service.delivering.surfaces import Conversation
from bot.stores import QuestionStatus, RunStatus
from bot.stores.ports import Stores
from bot.testing import FixedClock, call, calls, question, say
from tests.support import REQUESTER, WHERE, Harness, HarnessFactory

ASK = call(ASK_USER, questions=[question("Which environment?", "staging", "production")])
PICK = {"answers": {"Which environment?": "staging"}}
ROOT = Responder("test:root", "Root")
EVE = Responder("test:eve", "Eve")
MAX_TTL = 7 * 24 * 3600.0


@dataclass
class Setup:
    h: Harness
    admin: AdminService
    stores: Stores
    clock: FixedClock

    async def ask(self, *, where: Conversation = WHERE) -> str:
        await self.h.start(where=where)
        return self.h.surface.questions[-1][1].interrupt_id

    async def ask_with_token(self) -> tuple[str, str]:
        """A question asked: its id and the token the surface was given for it."""
        interrupt_id = await self.ask()
        return interrupt_id, self.h.surface.last_token

    async def run(self, text: str, who: Responder = ROOT) -> Any:
        result = await self.admin.handle(text, who=who)
        await self.h.service.wait_idle()
        return result


def ask_then_done(messages: Sequence[Message], _tools: Sequence[ToolDefinition]) -> ModelReply:
    """Each new run asks once; a resumed one (its last message a tool result) is done."""
    return say("done") if messages[-1].role == "tool" else calls(ASK)


@pytest.fixture
def setup(harness: HarnessFactory, stores: Stores, clock: FixedClock) -> Setup:
    h = harness(stores, ask_then_done)
    admin = AdminService(
        stores=stores,
        admins={ROOT.id},
        max_ttl_seconds=MAX_TTL,
        runs=h.service,
        clock=clock,
    )
    return Setup(h, admin, stores, clock)


async def test_a_non_admin_is_refused_every_command_but_help_and_each_attempt_is_audited(
    setup: Setup,
) -> None:
    """Eve gets "admins only" for everything but help, which lists help alone; all on record."""
    interrupt_id = await setup.ask()
    for command in ("pending", f"show {interrupt_id}", f"cancel {interrupt_id}", "stats"):
        assert isinstance(await setup.run(command, EVE), results.AdminsOnly)
    assert isinstance(await setup.run("frobnicate", EVE), results.AdminsOnly)
    shown = await setup.run("help", EVE)
    assert isinstance(shown, results.HelpShown)
    assert [u.name for u in shown.usages] == ["help"]
    refused = [e for e in await setup.stores.audit.recent() if e.kind == "admin-refused"]
    assert len(refused) == 5
    assert {e.actor for e in refused} == {EVE.id}
    counted = setup.h.service.metrics.render().decode()
    assert 'bot_admin_commands_total{command="pending",result="AdminsOnly"} 1.0' in counted
    assert 'bot_admin_commands_total{command="unknown",result="AdminsOnly"} 1.0' in counted
    row = await setup.stores.ledger.get(interrupt_id)
    assert row is not None and row.status is QuestionStatus.OUTSTANDING


async def test_admins_are_configured_ids_or_marked_by_their_surface(setup: Setup) -> None:
    """An id in the admin list, or a responder the surface marked admin, may act."""
    marked = Responder("test:grouped", "G", is_admin=True)
    assert isinstance(await setup.run("stats", marked), results.StatsShown)
    shown = await setup.run("help")
    assert isinstance(shown, results.HelpShown)
    assert {u.name for u in shown.usages} >= {"pending", "cancel", "resend", "extend", "audit"}


def test_an_admin_is_an_admin_in_every_slack_workspace_and_however_the_id_is_spelt(
    stores: Stores,
) -> None:
    """A configured Slack admin is that person in any workspace, named bare or in full."""
    for configured in ("slack:T0TEST:U0ROOT", "U0ROOT"):
        admin = AdminService(stores=stores, admins={configured}, max_ttl_seconds=MAX_TTL)
        for clicked in ("slack:T0TEST:U0ROOT", "slack:T0OTHER:U0ROOT"):
            assert admin.is_admin(Responder(clicked, "root")), (configured, clicked)
        assert not admin.is_admin(Responder("slack:T0TEST:U0EVE", "eve"))
        assert not admin.is_admin(Responder("console:U0ROOT", "root"))


async def test_pending_lists_who_asked_who_may_answer_age_expiry_and_the_link(
    setup: Setup,
) -> None:
    """Each open question comes with its requester, answerers, timing and message ref."""
    interrupt_id = await setup.ask()
    setup.clock.advance(90)
    page = await setup.run("pending")
    assert isinstance(page, results.PendingPage)
    (item,) = page.items
    q = item.question
    assert (q.interrupt_id, item.requester, q.scope, q.name) == (
        interrupt_id,
        REQUESTER.id,
        WHERE.scope,
        ASK_USER,
    )
    assert page.at - q.issued_at == 90
    assert item.may_answer == (REQUESTER.id, "admins")
    assert q.message_ref == {"surface": "test", "message": "m1"}
    assert "asked by test:alice 1m 30s ago" in text_of(page)


async def test_who_may_answer_is_shown_as_the_answer_policy_decides_it(setup: Setup) -> None:
    """Named people, groups and approvers from the policy; admins once; anyone by scope."""
    interrupt_id = await setup.ask()

    async def shown(policy: RequesterOrApprovers) -> tuple[tuple[str, ...], tuple[str, ...]]:
        admin = AdminService(
            stores=setup.stores,
            admins={ROOT.id},
            max_ttl_seconds=MAX_TTL,
            runs=setup.h.service,
            policy=policy,
            clock=setup.clock,
        )
        page = await admin.handle("pending", who=ROOT)
        question = await admin.handle(f"show {interrupt_id}", who=ROOT)
        assert isinstance(page, results.PendingPage) and isinstance(question, results.RecordShown)
        return page.items[0].may_answer, question.may_answer

    approvers = RequesterOrApprovers(approvers={ROOT.id, "test:carol"})
    assert await shown(approvers) == ((REQUESTER.id, "test:carol", "admins"),) * 2
    ruled = RequesterOrApprovers(rules=parse_rules(f"{ASK_USER}=UBOB S1"))
    assert await shown(ruled) == (("UBOB", "S1", "admins"),) * 2
    anyone = RequesterOrApprovers(anyone=True)
    assert await shown(anyone) == ((f"anyone in {WHERE.scope}",),) * 2


async def test_pending_filters_by_channel_user_and_registration_and_pages_by_cursor(
    setup: Setup,
) -> None:
    """Filters narrow the list; keyset pages follow issue order without repeats."""
    first = await setup.ask()
    other = Conversation(surface="test", scope="T2", key="C2")
    second = await setup.ask(where=other)
    third = await setup.ask()
    ids = lambda page: [i.question.interrupt_id for i in page.items]  # noqa: E731
    assert ids(await setup.run("pending channel=T2")) == [second]
    assert ids(await setup.run("pending --channel T1")) == [first, third]
    assert ids(await setup.run(f"pending user={REQUESTER.id}")) == [first, second, third]
    assert ids(await setup.run("pending user=test:nobody")) == []
    assert ids(await setup.run("pending name=approval")) == []
    assert ids(await setup.run(f"pending name={ASK_USER} channel=T1")) == [first, third]
    one = await setup.run("pending limit=2")
    assert ids(one) == [first, second] and one.next_after is not None
    two = await setup.run(f"pending limit=2 after={one.next_after}")
    assert ids(two) == [third] and two.next_after is None
    assert isinstance(await setup.run("pending limit=0"), results.CommandInvalid)
    # Digits that are not ASCII ("¹".isdigit() is true) are refused, not a crash.
    assert isinstance(await setup.run("pending limit=¹"), results.CommandInvalid)
    assert isinstance(await setup.run("pending after=²"), results.CommandInvalid)


async def test_show_has_payload_status_history_and_delivery_state(setup: Setup) -> None:
    """show returns the row, its run, its audit events in order and its outbox rows."""
    interrupt_id = await setup.ask()
    shown = await setup.run(f"show {interrupt_id}")
    assert isinstance(shown, results.RecordShown)
    assert shown.record.payload.questions[0].question == "Which environment?"
    assert shown.record.status is QuestionStatus.OUTSTANDING
    assert shown.run is not None and shown.run.status is RunStatus.PAUSED
    kinds = [e.kind for e in shown.history]
    assert kinds[0] == "started" and "paused" in kinds
    assert [(d.kind, d.state.value) for d in shown.deliveries] == [(DeliveryKind.PUBLISH, "done")]
    assert isinstance(await setup.run("show nope"), results.UnknownId)


async def test_an_unknown_id_keeps_the_kind_scripts_and_audit_rows_know_it_by(
    setup: Setup,
) -> None:
    """The result's class is UnknownId; its JSON kind and audit row still say NotFound."""
    missing = await setup.run("show nope")
    assert isinstance(missing, results.UnknownId)
    assert json_of(missing)["kind"] == "NotFound"
    (latest, *_) = await setup.stores.audit.recent()
    assert (latest.detail["command"], latest.detail["result"]) == ("show", "NotFound")


async def test_cancel_revokes_the_token_edits_the_message_and_resumes_with_the_reason(
    setup: Setup,
) -> None:
    """The run resumes with a JSON observation naming the admin and the reason as values."""
    interrupt_id, token = await setup.ask_with_token()
    done = await setup.run(f"cancel {interrupt_id} wrong environment, ask again")
    # The actor as the audit records it: the id, not the display name.
    assert done == results.CancelDone(
        interrupt_id, done.run_id, ROOT.id, "wrong environment, ask again"
    )
    assert [r.interrupt_id for r in setup.h.surface.closed] == [interrupt_id]
    observation = next(m for m in setup.h.provider.calls[-1] if m.role == "tool")
    seen = json.loads(observation.content)
    assert seen["status"] == "cancelled"
    assert seen["cancelled_by"] == {"id": ROOT.id, "name": "Root"}
    assert seen["reason"] == "wrong environment, ask again"
    assert isinstance(await setup.h.answer(PICK, token=token), AlreadyCancelled)
    assert await setup.run(f"cancel {interrupt_id}") == results.NotOpen(interrupt_id, "cancelled")


async def test_resend_posts_again_points_the_old_message_to_the_new_and_allows_one_spend(
    setup: Setup,
) -> None:
    """Same ledger row, same token: the answer on the new message closes both."""
    interrupt_id, old_token = await setup.ask_with_token()
    assert await setup.run(f"resend {interrupt_id}") == results.Resent(
        interrupt_id, setup.h.surface.questions[0][0].run_id
    )
    assert len(setup.h.surface.questions) == 2
    new = setup.h.surface.questions[-1][1]
    assert new.interrupt_id == interrupt_id and setup.h.surface.tokens[interrupt_id] == old_token
    ((moved, previous),) = setup.h.surface.moved
    assert previous == {"surface": "test", "message": "m1"}
    assert moved.message_ref == {"surface": "test", "message": "m2"}
    assert isinstance(
        await setup.h.answer(PICK, token=setup.h.surface.tokens[interrupt_id]), Redeemed
    )
    assert isinstance(await setup.h.answer(PICK, token=old_token), AlreadyAnswered)
    kinds = [e.kind for e in await setup.stores.audit.recent(run_id=moved.run_id)]
    assert kinds.count("answered") == 1 and "resent" in kinds


async def test_extend_moves_the_expiry_redraws_with_a_token_that_carries_it(
    setup: Setup,
) -> None:
    """The row's expiry decides; the redrawn token's exp follows it; the old one lapses."""
    interrupt_id, old_token = await setup.ask_with_token()
    row = await setup.stores.ledger.get(interrupt_id)
    assert row is not None
    extended = await setup.run(f"extend {interrupt_id} 2h")
    assert extended == results.Extended(
        interrupt_id, row.run_id, row.expires_at, row.expires_at + 7200
    )
    ((redrawn, ref),) = setup.h.surface.refreshed
    assert ref == {"surface": "test", "message": "m1"}
    token = setup.h.surface.tokens[redrawn.interrupt_id]
    claims = jwt.decode(token, options={"verify_signature": False})
    assert claims["exp"] == int(row.expires_at + 7200)
    setup.clock.advance(row.expires_at - setup.clock.now + 60)  # past the old expiry
    assert isinstance(await setup.h.answer(PICK, token=old_token), TokenExpired)
    assert isinstance(await setup.h.answer(PICK, token=token), Redeemed)


async def test_extend_stays_within_the_maximum_ttl_from_issue(setup: Setup) -> None:
    """Past issue time + BOT_MAX_TTL_SECONDS is refused and nothing changes."""
    interrupt_id = await setup.ask()
    row = await setup.stores.ledger.get(interrupt_id)
    assert row is not None
    too_long = await setup.run(f"extend {interrupt_id} 7d")
    assert too_long == results.TooLong(interrupt_id, row.issued_at + MAX_TTL)
    after = await setup.stores.ledger.get(interrupt_id)
    assert after is not None and after.expires_at == row.expires_at
    assert setup.h.surface.refreshed == []
    assert isinstance(await setup.run(f"extend {interrupt_id} soon"), results.CommandInvalid)


async def test_stats_counts_outcomes_refusals_and_time_to_answer(setup: Setup) -> None:
    """Issued, answered, expired, cancelled, refusals by reason, p50/p90, failing deliveries."""
    await setup.ask()
    setup.clock.advance(60)
    assert isinstance(await setup.h.answer(PICK), Redeemed)
    assert isinstance(await setup.h.answer(PICK), AlreadyAnswered)
    cancelled = await setup.ask()
    await setup.run(f"cancel {cancelled}")
    await setup.ask()
    setup.clock.advance(200)
    assert isinstance(await setup.h.answer(PICK), Redeemed)
    await setup.ask()
    shown = await setup.run("stats")
    assert isinstance(shown, results.StatsShown)
    s = shown.stats
    assert (s.issued, s.outstanding, s.answered, s.expired, s.cancelled) == (4, 1, 2, 0, 1)
    assert s.refusals == {"AlreadyAnswered": 1}
    assert (s.answer_seconds_p50, s.answer_seconds_p90) == (60.0, 200.0)
    assert (s.deliveries_failed, s.deliveries_retrying) == (0, 0)


async def test_audit_lists_a_runs_events_in_order_including_admin_actions(setup: Setup) -> None:
    """Every admin action is on the run's record with its actor, in order."""
    interrupt_id = await setup.ask()
    await setup.run(f"extend {interrupt_id} 1h")
    await setup.run(f"cancel {interrupt_id} no longer needed")
    row = await setup.stores.ledger.get(interrupt_id)
    assert row is not None
    shown = await setup.run(f"audit {row.run_id}")
    assert isinstance(shown, results.AuditShown)
    kinds = [e.kind for e in shown.events]
    assert kinds[0] == "started"
    assert kinds.index("extended") < kinds.index("cancelled") < kinds.index("completed")
    admin = [e for e in shown.events if e.kind == "admin"]
    assert [e.detail["command"] for e in admin] == ["extend", "cancel"]
    (latest, *_) = await setup.stores.audit.recent(run_id=row.run_id)
    assert (latest.kind, latest.detail["command"], latest.actor) == ("admin", "audit", ROOT.id)
    assert {e.actor for e in admin} == {ROOT.id}
    assert [e.at for e in shown.events] == sorted(e.at for e in shown.events)
    assert isinstance(await setup.run("audit run_missing"), results.UnknownId)


async def test_a_cancel_racing_an_answer_has_exactly_one_winner_and_both_are_told(
    setup: Setup,
) -> None:
    """Whichever lands first wins; the other hears why nothing changed."""
    interrupt_id, token = await setup.ask_with_token()
    cancel, answer = await asyncio.gather(
        setup.admin.handle(f"cancel {interrupt_id}", who=ROOT),
        setup.h.service.redeem(token, PICK, responder=REQUESTER, scope=WHERE.scope),
    )
    await setup.h.service.wait_idle()
    won = [isinstance(cancel, results.CancelDone), isinstance(answer, Redeemed)]
    assert won.count(True) == 1
    if isinstance(cancel, results.CancelDone):
        assert isinstance(answer, AlreadyCancelled) and answer.by == "Root"
    else:
        assert cancel == results.NotOpen(interrupt_id, "answered")
    row = await setup.stores.ledger.get(interrupt_id)
    assert row is not None and len(setup.h.surface.closed) == 1
