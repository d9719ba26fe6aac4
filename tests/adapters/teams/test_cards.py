"""Adaptive Card rendering: pure functions from a question to card JSON, within Teams' limit."""

from __future__ import annotations

import json
from typing import Any

from adapters.teams import CardContext, closed_card, question_card
from adapters.teams._card_kit import MAX_CARD_BYTES, attachment, size
from bot.questions.records import Question, QuestionStatus
from bot.testing import question
from tests.adapters.teams import _catalogue as catalogue
from tests.e2e._teams import texts
from tests.fakes.bf_connector import MAX_MESSAGE_BYTES
from tests.support import closed_question, open_question

TOKEN = "h." + "t" * 900 + ".s"  # as long as a real token may get
EXPIRES = 1_800_003_600.0


def _asked(name: str, payload: dict[str, Any], **extra: Any) -> CardContext:
    level = extra.pop("level", 0)
    return CardContext(
        question=open_question(name, payload, expires_at=EXPIRES, level=level),
        token=TOKEN,
        asked_for="Ana",
        who_may_answer="Ana (or an approver) may answer.",
        **extra,
    )


def _inputs(card: dict[str, Any]) -> list[dict[str, Any]]:
    return [e for e in card["body"] if str(e.get("type", "")).startswith("Input.")]


def _every_action_executes_with_a_submit_fallback(card: dict[str, Any]) -> None:
    for action in card["actions"]:
        assert action["type"] == "Action.Execute"
        assert action["verb"] == "answer"
        assert action["data"]["token"] == TOKEN
        assert action["fallback"]["type"] == "Action.Submit"
        assert action["fallback"]["data"] == action["data"]


def test_every_card_says_who_asked_who_may_answer_and_when_it_expires() -> None:
    """The footer: asked for Ana, who may answer, the expiry in UTC; version 1.5."""
    card = question_card(_asked("ask_user", {"questions": [question("Go?", "yes", "no")]}))
    assert card["version"] == "1.5"
    assert texts(card)[-1] == (
        "Asked for Ana. Ana (or an approver) may answer. Expires 2027-01-15 09:00 UTC."
    )


def test_a_few_options_are_buttons_carrying_the_option_index() -> None:
    """One single-choice question with up to five options: one button each."""
    card = question_card(_asked("ask_user", {"questions": [question("Where?", "staging", "prod")]}))
    assert [a["title"] for a in card["actions"]] == ["staging", "prod"]
    assert [a["data"]["q0"] for a in card["actions"]] == ["0", "1"]
    assert _inputs(card) == []
    _every_action_executes_with_a_submit_fallback(card)


def test_many_options_multi_select_and_free_text_use_inputs() -> None:
    """Six options: a compact choice set; multi-select: expanded; no options: Input.Text."""
    payload = {
        "questions": [
            question("Which region?", *[f"r{i}" for i in range(6)]),
            question("Which checks?", "lint", "tests", multi_select=True),
            question("Why?"),
        ]
    }
    card = question_card(_asked("ask_user", payload))
    region, checks, why = _inputs(card)
    assert (region["type"], region["style"], region["isMultiSelect"]) == (
        "Input.ChoiceSet",
        "compact",
        False,
    )
    assert [c["value"] for c in region["choices"]] == [str(i) for i in range(6)]
    assert (checks["style"], checks["isMultiSelect"], checks["id"]) == ("expanded", True, "q1")
    assert (why["type"], why["id"], why["maxLength"]) == ("Input.Text", "q2", 2000)
    assert [a["title"] for a in card["actions"]] == ["Send answer"]
    _every_action_executes_with_a_submit_fallback(card)


def test_approval_shows_the_risk_and_offers_approve_reject_with_a_comment() -> None:
    """High risk in the attention colour; Approve/Reject; an optional comment input."""
    payload = {
        "action": "deploy web",
        "summary": "Ship 1.5.0",
        "risk": "high",
        "arguments": {"service": "web", "replicas": 3},
    }
    card = question_card(_asked("approval", payload))
    risk = next(e for e in card["body"] if e.get("text") == "Risk: HIGH")
    assert risk["color"] == "attention"
    facts = next(e for e in card["body"] if e["type"] == "FactSet")["facts"]
    assert {"title": "replicas", "value": "3"} in facts
    (comment,) = _inputs(card)
    assert comment["id"] == "comment" and "isRequired" not in comment
    assert [(a["title"], a["data"]["decision"], a["style"]) for a in card["actions"]] == [
        ("Approve", "approve", "positive"),
        ("Reject", "reject", "destructive"),
    ]
    _every_action_executes_with_a_submit_fallback(card)


def test_a_deployments_own_schema_is_rendered_from_its_fields() -> None:
    """Enum: choice set; list of enum: multi-select; int: number; bool: toggle; str: text."""
    asked = _asked(
        "rollout", {"service": "api"}, response_schema=catalogue.Rollout.model_json_schema()
    )
    card = question_card(asked)
    kinds = {e["id"]: (e["type"], e.get("isMultiSelect"), e["isRequired"]) for e in _inputs(card)}
    assert kinds == {
        "f_strategy": ("Input.ChoiceSet", False, True),
        "f_regions": ("Input.ChoiceSet", True, True),
        "f_percent": ("Input.Number", None, True),
        "f_notify": ("Input.Toggle", None, False),
        "f_note": ("Input.Text", None, False),
    }
    assert card["body"][1]["facts"] == [{"title": "service", "value": "api"}]


def test_errors_show_beside_their_input_and_entered_values_are_kept() -> None:
    """A validation error is a red line right after the input it is about."""
    asked = _asked(
        "approval",
        {"action": "a", "summary": "s"},
        errors={"comment": "too long"},
        values={"comment": "draft"},
    )
    body = question_card(asked)["body"]
    index = next(i for i, e in enumerate(body) if e.get("id") == "comment")
    assert body[index]["value"] == "draft"
    assert body[index + 1]["text"] == "too long" and body[index + 1]["color"] == "attention"


def test_a_huge_question_stays_within_teams_limit_and_says_it_was_cut() -> None:
    """10,000 characters and 60 options: under the size limit, with a cut marker."""
    options = [f"option {i} " + "x" * 70 for i in range(60)]
    payload = {"questions": [question("Q" * 10_000, *options)]}
    card = question_card(_asked("ask_user", payload))
    assert len(json.dumps(card).encode()) <= MAX_CARD_BYTES
    (choices,) = _inputs(card)
    assert choices["label"].endswith("more characters not shown]")
    assert len(choices["choices"]) == 60
    assert card["actions"][0]["data"]["token"] == TOKEN


def _record(
    name: str,
    status: QuestionStatus,
    answer: dict[str, Any] | None,
    by: str = "Ana",
    payload: dict[str, Any] | None = None,
) -> Question:
    shown = payload or {"action": "deploy web", "summary": "Ship"}
    return closed_question(name, shown, status, answer, closed_at=1_800_000_120.0, closed_by=by)


def test_closed_cards_say_how_the_question_ended_and_offer_no_actions() -> None:
    """Approved, rejected with the comment, expired, cancelled; no buttons on any."""
    cases = {
        (
            "approval",
            QuestionStatus.ANSWERED,
            "approve",
        ): "Approved by Ana at 2027-01-15 08:02 UTC.",
        ("approval", QuestionStatus.ANSWERED, "reject"): (
            "Rejected by Ana at 2027-01-15 08:02 UTC: not now"
        ),
        (
            "approval",
            QuestionStatus.EXPIRED,
            "",
        ): "Expired at 2027-01-15 08:02 UTC without an answer.",
        ("approval", QuestionStatus.CANCELLED, ""): "Cancelled by Ana at 2027-01-15 08:02 UTC.",
    }
    for (name, status, decision), line in cases.items():
        answer = {"decision": decision, "comment": "not now" if decision == "reject" else ""}
        card = closed_card(_record(name, status, answer if decision else None))
        assert texts(card)[-1] == line
        assert "actions" not in card


def test_an_expiry_that_rejects_by_policy_says_it_was_rejected() -> None:
    """``on_expire: "reject"`` stores a rejection: the closed card says so, not "no answer"."""
    rejection = {"decision": "reject", "comment": "expired without an answer"}
    card = closed_card(_record("approval", QuestionStatus.EXPIRED, rejection))
    assert texts(card)[-1] == (
        "Expired at 2027-01-15 08:02 UTC without an answer: rejected, as its policy says."
    )
    assert "actions" not in card


def test_a_cancelled_card_shows_the_reason_given() -> None:
    record = _record("approval", QuestionStatus.CANCELLED, {"reason": "wrong service"})
    assert texts(closed_card(record))[-1] == (
        "Cancelled by Ana at 2027-01-15 08:02 UTC. Reason: wrong service"
    )


def test_a_closed_ask_user_card_shows_the_answer() -> None:
    """The question stays on the card, with the answer beneath it."""
    payload = {"questions": [question("Where?", "staging", "prod")]}
    record = _record(
        "ask_user", QuestionStatus.ANSWERED, {"answers": {"Where?": "staging"}}, payload=payload
    )
    card = closed_card(record)
    assert "Where?" in texts(card)
    assert {"title": "Answer", "value": "staging"} in card["body"][2]["facts"]


def test_no_card_passes_teams_limit_at_the_payload_limits() -> None:
    """Every kind of card, every payload at the largest the API accepts (five questions of
    ten options, a 50-field form of 100 choices each, an approval with hundreds of
    arguments, 60 long audit events), in the costliest characters: each attachment is
    within the budget and the activity within the 28 KB Teams refuses beyond."""
    sizes = {name: size(card) for name, card in catalogue.at_limits().items()}
    over = {name: bytes_ for name, bytes_ in sizes.items() if bytes_ > MAX_CARD_BYTES}
    assert not over, over
    largest = max(sizes.values())
    activity = {"type": "message", "attachments": [attachment({"body": []})]}
    assert largest + len(json.dumps(activity)) < MAX_MESSAGE_BYTES
    print(f"largest card at the payload limits: {largest:,} bytes ({max(sizes, key=sizes.get)})")


def test_a_card_with_no_room_says_what_it_left_out_and_where_to_answer() -> None:
    """A form too big for a card keeps its required fields first; with required ones left
    out it offers no Send and says how to go on; approval arguments left out are counted."""
    cards = catalogue.at_limits()
    required, optional = cards["form-required"], cards["form-optional"]
    assert "actions" not in required
    (said,) = [t for t in texts(required) if "left out" in t]
    assert said.startswith("48 more fields left out") and "cancel int_5f2a9c" in said
    assert optional["actions"][0]["title"] == "Send"
    assert any("They are optional and are sent empty." in t for t in texts(optional))
    assert any("more arguments left out" in t for t in texts(cards["approval"]))
    assert [a["title"] for a in cards["approval"]["actions"]] == ["Approve", "Reject"]
