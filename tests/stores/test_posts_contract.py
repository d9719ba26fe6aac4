"""A question posted on several routes, on SQLite and PostgreSQL alike: each post is its own
outbox row owed in the ask's write, each close owes every post's edit in the close's write,
and each post keeps its own message reference."""

from __future__ import annotations

import dataclasses

import pytest

from bot.contract.answers import ApprovalDecision
from bot.contract.payloads import payload_of
from bot.questions.posts import post_of
from bot.questions.quorum import stored_policy
from bot.questions.records import ApiRequest, DeliveryKind
from bot.questions.write import Ballot
from bot.stores import Closing, Question, QuestionStatus, RunRecord, RunStatus, Stores
from bot.stores.ports import Delivered
from tests.support import steps

TEAMS_CONVERSATION = {"key": "19:ops", "reference": {"serviceUrl": "http://teams"}}


def asked(interrupt_id: str = "int_1", **changes: object) -> tuple[RunRecord, Question]:
    run = RunRecord(
        run_id="run_api_1",
        scope="T1:C1",
        surface="slack",
        requester="api:ci",
        text="Deploy?",
        created_at=100.0,
        conversation={"key": "C1", "reference": {"team": "T1", "channel": "C1"}},
        status=RunStatus.REMOTE,
    )
    question = Question(
        interrupt_id=interrupt_id,
        run_id=run.run_id,
        scope="T1:C1",
        name="approval",
        tool_call_id="api_1",
        checkpoint_id="",
        payload=payload_of("approval", {"action": "deploy", "summary": "Deploy?"}),
        issued_at=100.0,
        expires_at=200.0,
        answerers=("anyone",),
        posts=(post_of("teams:19:ops", "teams", "tenant-1", TEAMS_CONVERSATION),),
    )
    return run, dataclasses.replace(question, **changes)


SLACK_REF = {"team": "T1", "channel": "C1", "ts": "1.1"}
TEAMS_REF = {"service_url": "http://teams", "conversation_id": "19:ops", "activity_id": "a1"}


async def posted_on_both(stores: Stores) -> Question:
    """The question asked, and both its posts delivered in one pass (``SLACK_REF``,
    ``TEAMS_REF``): the question as stored then."""
    run, question = asked()
    written = await steps(stores).lifecycle.ask_remote(run, question, api())
    assert written is not None
    first, second = (o.delivery.delivery_id for o in written.owed)
    await steps(stores).delivered_all(
        [Delivered(first, 101.0, SLACK_REF), Delivered(second, 101.0, TEAMS_REF, 0)]
    )
    stored = await stores.ledger.get(question.interrupt_id)
    assert stored is not None
    return stored


def api(interrupt_id: str = "int_1") -> ApiRequest:
    return ApiRequest(interrupt_id, "ci", "key-1", "hash", "approval", 100.0, key_id="key_ci")


async def refuse_rows_for(stores: Stores, surface: str) -> None:
    """The store fails any outbox row owed to ``surface``, as a crash mid-write would."""
    db = stores.unit.db
    if hasattr(db, "execute"):  # PostgreSQL
        await db.execute(
            "CREATE FUNCTION refuse_row() RETURNS trigger LANGUAGE plpgsql AS"
            " $$ BEGIN RAISE EXCEPTION 'refused'; END $$"
        )
        await db.execute(
            "CREATE TRIGGER refuse BEFORE INSERT ON outbox FOR EACH ROW"
            f" WHEN (NEW.surface = '{surface}') EXECUTE FUNCTION refuse_row()"
        )
    else:
        trigger = (
            f"CREATE TRIGGER refuse BEFORE INSERT ON outbox WHEN NEW.surface = '{surface}'"
            " BEGIN SELECT RAISE(ABORT, 'refused'); END"
        )
        await db.run(lambda conn: conn.execute(trigger))


async def test_each_route_is_owed_its_post_in_the_asks_write(stores: Stores) -> None:
    run, question = asked()
    written = await steps(stores).lifecycle.ask_remote(run, question, api())
    assert written is not None
    owed = [
        (o.delivery.kind, o.delivery.surface, o.delivery.body.get("post")) for o in written.owed
    ]
    assert owed == [(DeliveryKind.PUBLISH, "slack", None), (DeliveryKind.PUBLISH, "teams", 0)]
    rows = await stores.outbox.of_run(run.run_id)
    assert [(d.kind, d.surface, d.body.get("post")) for d in rows] == owed
    assert await stores.ledger.get(question.interrupt_id) == question


async def test_a_refused_ask_owes_no_post_on_any_route(stores: Stores) -> None:
    run, question = asked()
    lifecycle = steps(stores).lifecycle
    assert await lifecycle.ask_remote(run, question, api()) is not None
    assert await lifecycle.ask_remote(run, question, api()) is None
    assert len(await stores.outbox.of_run(run.run_id)) == 2


async def test_a_post_that_cannot_be_owed_leaves_no_question_and_no_other_post(
    stores: Stores,
) -> None:
    """All or nothing: the question, its first post and its further posts are one write."""
    run, question = asked()
    await refuse_rows_for(stores, "teams")
    with pytest.raises(Exception, match="refused"):
        await steps(stores).lifecycle.ask_remote(run, question, api())
    assert await stores.ledger.get(question.interrupt_id) is None
    assert await stores.outbox.of_run(run.run_id) == []


async def test_a_close_whose_edit_cannot_be_owed_leaves_the_question_open(
    stores: Stores,
) -> None:
    run, question = asked()
    lifecycle = steps(stores).lifecycle
    assert await lifecycle.ask_remote(run, question, api()) is not None
    await refuse_rows_for(stores, "teams")
    closing = Closing(QuestionStatus.CANCELLED, by="ops", at=150.0)
    with pytest.raises(Exception, match="refused"):
        await lifecycle.close(question.interrupt_id, closing)
    stored = await stores.ledger.get(question.interrupt_id)
    assert stored is not None and stored.status is QuestionStatus.OUTSTANDING
    assert len(await stores.outbox.of_run(run.run_id)) == 2  # the two posts, nothing more


async def test_each_post_keeps_its_own_message_reference(stores: Stores) -> None:
    """Both posts delivered in one pass: the first route's reference and the post's, each
    in its place (one statement on PostgreSQL)."""
    stored = await posted_on_both(stores)
    assert stored.message_ref == SLACK_REF
    assert stored.posts[0].message_ref == TEAMS_REF
    assert stored.posts[0].scope == "tenant-1"


async def test_a_close_owes_every_posts_edit_in_its_own_write(stores: Stores) -> None:
    """The close reads the posts when it has no copy of the question; a close that loses
    (already closed) owes nothing on any route."""
    run, question = asked()
    lifecycle = steps(stores).lifecycle
    assert await lifecycle.ask_remote(run, question, api()) is not None
    closing = Closing(QuestionStatus.EXPIRED, by="", at=201.0)
    written = await lifecycle.close(question.interrupt_id, closing)
    assert written is not None and written.question is not None
    assert written.question.status is QuestionStatus.EXPIRED
    edits = [
        (o.delivery.kind, o.delivery.surface, o.delivery.body.get("post")) for o in written.owed
    ]
    assert edits == [(DeliveryKind.CLOSED, "slack", None), (DeliveryKind.CLOSED, "teams", 0)]
    assert await lifecycle.close(question.interrupt_id, closing) is None
    rows = await stores.outbox.of_run(run.run_id)
    assert [d.kind for d in rows].count(DeliveryKind.CLOSED) == 2 and len(rows) == 4


async def test_a_counted_vote_redraws_every_post(stores: Stores) -> None:
    run, question = asked(policy=stored_policy({"quorum": 2}))
    lifecycle = steps(stores).lifecycle
    assert await lifecycle.ask_remote(run, question, api()) is not None
    closing = Closing(QuestionStatus.ANSWERED, by="Bo", at=150.0)
    answer = ApprovalDecision(decision="approve", comment="")
    ballot = Ballot(question.interrupt_id, "slack:T1:U1", "Bo", "approve", answer, 150.0)
    voted = await lifecycle.vote(ballot, closing)
    assert voted.written is not None
    redraws = [(o.delivery.kind, o.delivery.surface) for o in voted.written.owed]
    assert redraws == [(DeliveryKind.REFRESH, "slack"), (DeliveryKind.REFRESH, "teams")]
    other = Ballot(question.interrupt_id, "teams:tenant-1:aad-2", "Cy", "approve", answer, 151.0)
    decided = await lifecycle.vote(other, closing)
    assert decided.written is not None and decided.written.question is not None
    assert decided.written.question.status is QuestionStatus.ANSWERED
    edits = [(o.delivery.kind, o.delivery.surface) for o in decided.written.owed]
    assert edits == [(DeliveryKind.CLOSED, "slack"), (DeliveryKind.CLOSED, "teams")]


async def test_a_post_waiting_for_a_retry_holds_back_only_its_own_surface(stores: Stores) -> None:
    """One lane per surface: each surface's rows keep their order, and a Teams post waiting
    for its retry does not hold back the Slack post, nor the Slack edit after the close."""
    run, question = asked()
    lifecycle = steps(stores).lifecycle
    assert await lifecycle.ask_remote(run, question, api()) is not None
    both = await stores.outbox.claim(101.0, until=160.0, owner="p1", surfaces=["slack", "teams"])
    assert [(d.surface, d.followed) for d in both] == [("slack", False), ("teams", False)]
    slack_post, teams_post = both
    await stores.outbox.retry(teams_post.delivery_id, next_at=500.0, error="Teams is down")
    await steps(stores).delivered_all([Delivered(slack_post.delivery_id, 102.0, {"ts": "1.1"})])
    closing = Closing(QuestionStatus.CANCELLED, by="ops", at=150.0)
    assert await lifecycle.close(question.interrupt_id, closing) is not None
    due = await stores.outbox.claim(200.0, until=260.0, owner="p2", surfaces=["slack", "teams"])
    assert [(d.kind, d.surface) for d in due] == [(DeliveryKind.CLOSED, "slack")]
    # Teams keeps its order: its edit waits behind its post's retry.
    later = await stores.outbox.claim(600.0, until=660.0, owner="p3", surfaces=["teams"])
    assert [(d.kind, d.surface, d.followed) for d in later] == [
        (DeliveryKind.PUBLISH, "teams", True)
    ]


async def test_a_repost_owes_each_route_its_post_and_its_old_messages_edit(
    stores: Stores,
) -> None:
    """One write: a post per route, then an edit per route that stood posted, each carrying
    that route's previous reference and going to its own surface; the new posts' references
    then replace the old ones, each in its place."""
    lifecycle = steps(stores).lifecycle
    posted = await posted_on_both(stores)
    run_id, interrupt_id = posted.run_id, posted.interrupt_id

    reposted = await lifecycle.repost(posted, at=120.0, actor="shell:root", once_key="k1")
    assert reposted is not None
    owed = [
        (
            o.delivery.kind,
            o.delivery.surface,
            o.delivery.body.get("post"),
            o.delivery.body.get("previous_ref"),
        )
        for o in reposted.owed
    ]
    assert owed == [
        (DeliveryKind.PUBLISH, "slack", None, None),
        (DeliveryKind.PUBLISH, "teams", 0, None),
        (DeliveryKind.MOVED, "slack", None, SLACK_REF),
        (DeliveryKind.MOVED, "teams", 0, TEAMS_REF),
    ]
    rows = await stores.outbox.of_run(run_id)
    assert [(d.kind, d.surface, d.body.get("post")) for d in rows[2:]] == [o[:3] for o in owed]
    # Replayed with its key: nothing more owed on any route.
    assert await lifecycle.repost(posted, at=121.0, actor="shell:root", once_key="k1") is None
    assert len(await stores.outbox.of_run(run_id)) == 6

    # Each surface's lane: its new post first, then its old message's edit.
    lanes = await stores.outbox.claim(130.0, until=190.0, owner="p1", surfaces=["slack", "teams"])
    assert [(d.kind, d.surface, d.followed) for d in lanes] == [
        (DeliveryKind.PUBLISH, "slack", True),
        (DeliveryKind.PUBLISH, "teams", True),
    ]
    new_slack = {"team": "T1", "channel": "C1", "ts": "2.2"}
    new_teams = {"service_url": "http://teams", "conversation_id": "19:ops", "activity_id": "a2"}
    slack_post, teams_post = lanes
    await steps(stores).delivered_all(
        [
            Delivered(slack_post.delivery_id, 131.0, new_slack),
            Delivered(teams_post.delivery_id, 131.0, new_teams, 0),
        ]
    )
    stored = await stores.ledger.get(interrupt_id)
    assert stored is not None
    assert stored.message_ref == new_slack and stored.posts[0].message_ref == new_teams
    edits = await stores.outbox.claim(132.0, until=190.0, owner="p1", surfaces=["slack", "teams"])
    assert [(d.kind, d.surface, d.body.get("previous_ref")) for d in edits] == [
        (DeliveryKind.MOVED, "slack", SLACK_REF),
        (DeliveryKind.MOVED, "teams", TEAMS_REF),
    ]


async def test_a_repost_edits_only_the_messages_that_were_posted(stores: Stores) -> None:
    """The Teams post never went out: the repost posts it, and edits only the Slack one."""
    run, question = asked()
    lifecycle = steps(stores).lifecycle
    written = await lifecycle.ask_remote(run, question, api())
    assert written is not None
    slack_ref = {"team": "T1", "channel": "C1", "ts": "1.1"}
    await steps(stores).delivered_all(
        [Delivered(written.owed[0].delivery.delivery_id, 101.0, slack_ref)]
    )
    posted = await stores.ledger.get(question.interrupt_id)
    assert posted is not None
    reposted = await lifecycle.repost(posted, at=120.0, actor="shell:root")
    assert reposted is not None
    assert [(o.delivery.kind, o.delivery.surface) for o in reposted.owed] == [
        (DeliveryKind.PUBLISH, "slack"),
        (DeliveryKind.PUBLISH, "teams"),
        (DeliveryKind.MOVED, "slack"),
    ]
