"""Admin and approval policies: show prints policy, tally and level; stats counts escalations."""

from __future__ import annotations

import dataclasses

from bot.admin import AdminService, results, text_of
from bot.admin._render import policy_lines
from bot.questions.posts import post_of
from bot.service.answering.outcomes import Counted, Responder
from bot.stores.ports import Stores
from bot.testing import FixedClock
from tests.support import HarnessFactory, closed_question, paused_on_approval

ROOT = Responder("test:root", "Root", is_admin=True)


async def test_show_and_stats_tell_the_policy_the_tally_the_level_and_the_escalations(
    harness: HarnessFactory, stores: Stores, clock: FixedClock
) -> None:
    ladder = [{"after_seconds": 30, "answerers": ["test:dan"]}]
    h = await paused_on_approval(harness, stores, {"quorum": 2, "escalate": ladder})
    iid = h.surface.questions[-1][1].interrupt_id
    vote = {"decision": "approve", "comment": ""}
    assert isinstance(await h.answer(vote, who=Responder("test:bob", "bo")), Counted)
    clock.advance(31)
    await h.service.sweep()
    admin = AdminService(stores=stores, admins={ROOT.id}, max_ttl_seconds=86_400.0, clock=clock)
    shown = await admin.handle(f"show {iid}", who=ROOT)
    assert isinstance(shown, results.RecordShown)
    text = text_of(shown)
    assert '"quorum": 2' in text and '"on_expire": "expire"' in text
    assert "tally: approve test:bob; reject none" in text
    assert "level: 1, reminders sent: 0" in text
    stats = await admin.handle("stats", who=ROOT)
    assert isinstance(stats, results.StatsShown) and stats.stats.escalations == 1
    assert "escalations: 1" in text_of(stats)


def test_show_lists_each_further_post_of_a_question_on_several_routes() -> None:
    posts = (
        post_of("teams:19:ops", "teams", "tenant/19:ops", {}),
        dataclasses.replace(post_of("slack:C2", "slack", "T1:C2", {}), message_ref={"ts": "1.1"}),
    )
    record = dataclasses.replace(closed_question("approval", {}, "open"), posts=posts)
    lines = policy_lines(record)
    assert lines[-2:] == [
        "also posted on teams:19:ops: not posted",
        "also posted on slack:C2: posted",
    ]
