"""Who may answer: the requester by default, and per interaction anyone, people or groups."""

from __future__ import annotations

from dataclasses import replace

import pytest

from bot.contract.payloads import payload_of
from bot.questions.quorum import MayAnswer, is_self_answer, stored_policy
from bot.questions.records import Question, RunRecord
from bot.service.answering.outcomes import Responder
from bot.service.answering.policy import Answerers, RequesterOrApprovers, parse_rules
from bot.service.delivering.messages import who_may_answer_text

ALICE = Responder("slack:T1:UALICE", "<@UALICE>")
BOB = Responder("slack:T1:UBOB", "<@UBOB>")
CAROL = Responder("slack:T1:UCAROL", "<@UCAROL>")
RUN = RunRecord("r1", "T1:C1", "slack", ALICE.id, "deploy web", 0.0)


def pause(name: str) -> Question:
    return Question("i1", "r1", "T1:C1", name, "call1", "cp1", payload_of(name, {}), 0.0, 60.0)


class Groups:
    """A directory with fixed members that counts its lookups."""

    def __init__(self, members: dict[str, set[str]]) -> None:
        self.members = members
        self.asked: list[str] = []

    async def is_member(self, group: str, who: Responder) -> bool:
        self.asked.append(group)
        return who.id in self.members.get(group, set())


async def test_by_default_only_the_requester_and_admins_answer() -> None:
    policy = RequesterOrApprovers(approvers={CAROL.id})
    assert await policy(pause("ask_user"), RUN, ALICE)
    assert not await policy(pause("ask_user"), RUN, BOB)
    assert await policy(pause("ask_user"), RUN, CAROL)
    assert await policy(pause("ask_user"), RUN, Responder("x", is_admin=True))
    assert not await policy(pause("ask_user"), None, ALICE)


async def test_rules_open_one_interaction_to_people_groups_or_anyone() -> None:
    groups = Groups({"S1": {BOB.id}})
    policy = RequesterOrApprovers(
        rules=parse_rules("approval=S1 UCAROL;ask_user=anyone"), directory=groups
    )
    assert await policy(pause("approval"), RUN, BOB)  # in the group
    assert await policy(pause("approval"), RUN, CAROL)  # named, by bare user id
    assert not await policy(pause("approval"), RUN, ALICE)  # naming others drops the requester
    assert await policy(pause("ask_user"), RUN, Responder("slack:T1:USTRANGER"))
    assert not await policy(pause("other"), RUN, BOB)  # the default rule
    assert groups.asked == ["S1", "S1"]  # only asked when the cheaper checks failed


def test_rules_parse_every_form_and_refuse_nonsense() -> None:
    rules = parse_rules(" approval = U1, group:G2 S3 requester ; ask_user=anyone ")
    assert rules["approval"] == Answerers(
        requester=True, people=frozenset({"U1"}), groups=frozenset({"G2", "S3"})
    )
    assert rules["ask_user"].anyone
    assert parse_rules("") == {}
    for bad in ("approval", "=U1", "approval U1"):
        with pytest.raises(ValueError, match="interaction=who"):
            parse_rules(bad)


async def test_who_may_answer_is_what_the_check_admits() -> None:
    """``who_may_answer`` is the rule itself: the check admits the ids it names, and no others."""
    policy = RequesterOrApprovers(
        approvers={CAROL.id}, rules=parse_rules("approval=UBOB S1;ask_user=anyone")
    )
    approval = policy.who_may_answer(pause("approval"), ALICE.id)
    assert approval == MayAnswer(people=("UBOB",), groups=("S1",), approvers=(CAROL.id,))
    default = policy.who_may_answer(pause("other"), ALICE.id)
    assert default == MayAnswer(requester=ALICE.id, approvers=(CAROL.id,))
    assert policy.who_may_answer(pause("ask_user"), ALICE.id).anyone
    for name, shown in (("approval", approval), ("other", default)):
        for who in (ALICE, BOB, CAROL):
            assert await policy(pause(name), RUN, who) == shown.names(who.id)


# The four kinds of question every surface shows who may answer of: a chat question under a
# per-interaction rule and a policy keeping the requester out, an API question naming its
# answerers, one open to anyone, and one an escalation step has opened to more people.
UDAN = Responder("slack:T1:UDAN", "<@UDAN>")
KINDS = {
    "rule": replace(pause("approval"), policy=stored_policy({"requester_may_answer": False})),
    "named": replace(pause("approval"), answerers=("slack:T1:UBOB", "slack:T1:UCAROL")),
    "anyone": replace(pause("approval"), answerers=("anyone",)),
    "escalated": replace(
        pause("ask_user"),
        policy=stored_policy({"escalate": [{"after_seconds": 60, "answerers": ["slack:T1:UDAN"]}]}),
        level=1,
    ),
}


async def test_every_kind_of_question_is_shown_as_the_check_decides() -> None:
    """For each kind of question, the sentence names exactly whom the redeem's check admits."""
    policy = RequesterOrApprovers(rules=parse_rules("approval=UALICE UBOB requester"))
    shown = {kind: text_of(policy.who_may_answer(q, RUN.requester)) for kind, q in KINDS.items()}
    assert shown == {
        "rule": "Only UBOB can answer this.",
        "named": "Only slack:T1:UBOB or slack:T1:UCAROL can answer this.",
        "anyone": "Anyone here can answer this.",
        "escalated": f"Only {ALICE.id} or slack:T1:UDAN can answer this.",
    }
    admitted = {
        kind: [who.id for who in (ALICE, BOB, CAROL, UDAN) if await policy(q, RUN, who)]
        for kind, q in KINDS.items()
    }
    assert admitted == {
        "rule": [BOB.id],
        "named": [BOB.id, CAROL.id],
        "anyone": [ALICE.id, BOB.id, CAROL.id, UDAN.id],
        "escalated": [ALICE.id, UDAN.id],
    }


def test_a_stored_requester_in_another_spelling_still_cannot_answer() -> None:
    """A question stored before ids were canonical compares through the canonical id."""
    for spelt in ("u0alice", " U0ALICE", "slack:t1:u0alice", "SLACK:T1:U0ALICE"):
        stored = replace(
            pause("approval"),
            policy=stored_policy({"requester": spelt, "requester_may_answer": False}),
        )
        assert is_self_answer(stored, None, "slack:T1:U0ALICE"), spelt
        assert not is_self_answer(stored, None, "slack:T1:U0BOB"), spelt


async def test_a_slack_person_named_in_one_workspace_answers_from_any() -> None:
    """Slack user ids are unique across workspaces: the same user id elsewhere is that
    person, admitted as named or as an approver; another user is not."""
    policy = RequesterOrApprovers(
        approvers={"slack:T1:UCAROL"}, rules=parse_rules("approval=slack:T1:UBOB")
    )
    assert await policy(pause("approval"), RUN, Responder("slack:T2:UBOB"))
    assert await policy(pause("approval"), RUN, Responder("slack:T2:UCAROL"))
    assert not await policy(pause("approval"), RUN, Responder("slack:T2:UDAN"))
    assert not await policy(pause("approval"), RUN, Responder("console:UBOB"))


def text_of(may: MayAnswer) -> str:
    """The sentence with each person and group by id."""
    return who_may_answer_text(may, may.named())
