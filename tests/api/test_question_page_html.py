"""The question page's HTML: every kind drawn from its record, escaped, read back by position."""

from __future__ import annotations

import dataclasses

import pytest

from bot.api._page_html import (
    PageFormError,
    PageState,
    question_page,
    read_answer,
)
from bot.contract.answers import CancelReason
from bot.contract.payloads import payload_of
from bot.display import display
from bot.questions.quorum import stored_policy, stored_tally
from bot.questions.records import Question, QuestionStatus, RunRecord

NOW = 1_800_000_000.0
RUN = RunRecord("run_1", "console", "console", "api:ci", "asked", NOW)
STATE = PageState(answerer="ana@example.org", csrf="v")
ASK = {
    "questions": [
        {
            "question": "Which <env>?",
            "header": "Env",
            "options": [{"label": "prod", "description": "live"}, {"label": "staging"}],
        },
        {"question": "Why?", "options": []},
        {
            "question": "Which checks?",
            "options": [{"label": "smoke"}, {"label": "load"}],
            "multi_select": True,
        },
    ]
}


def record(name: str, payload: dict[str, object], **changes: object) -> Question:
    base = Question(
        "int_1", "run_1", "console", name, "call_1", "", payload_of(name, payload), NOW, NOW + 600
    )
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


def test_ask_user_draws_each_question_with_fields_named_by_position() -> None:
    """Options as radios or checkboxes, free text as a textarea; names never carry agent text."""
    page = question_page(record("ask_user", ASK), RUN, STATE)
    assert "Which &lt;env&gt;?" in page and "Which <env>?" not in page
    assert 'type="radio" name="q0" value="0"' in page
    assert '<textarea id="q1" name="q1"' in page
    assert 'type="checkbox" name="q2" value="1"' in page
    assert "live" in page and "Asked by api:ci" in page


def test_ask_user_answers_come_back_keyed_by_the_question_asked() -> None:
    """Positions become the labels asked; a multi-select a list."""
    answer = read_answer(
        record("ask_user", ASK), {"q0": ["1"], "q1": ["because"], "q2": ["0", "1"]}
    )
    assert answer == {
        "answers": {
            "Which <env>?": "staging",
            "Why?": "because",
            "Which checks?": ["smoke", "load"],
        }
    }
    with pytest.raises(PageFormError):
        read_answer(record("ask_user", ASK), {"q0": ["7"]})


def test_a_custom_interaction_is_shown_as_json_and_answered_as_json() -> None:
    """An interaction the page does not know: its payload as escaped JSON, its answer typed."""
    custom = record("refund", {"amount": 30, "note": "<img src=x onerror=alert(1)>"})
    page = question_page(custom, RUN, STATE)
    assert "A question: refund" in page and "&lt;img src=x" in page and "<img" not in page
    assert 'name="answer_json"' in page
    assert read_answer(custom, {"answer_json": ['{"ok": true}']}) == {"ok": True}
    with pytest.raises(PageFormError, match="JSON object"):
        read_answer(custom, {"answer_json": ["[1]"]})


def test_the_level_and_tally_are_shown_and_a_closed_question_has_no_form() -> None:
    """An escalated quorum shows both; once cancelled it says so, by whom, and why."""
    payload = {"action": "deploy", "summary": "s", "arguments": {}, "risk": "low"}
    open_one = record(
        "approval",
        payload,
        level=2,
        policy=stored_policy({"quorum": 2}),
        tally=stored_tally(
            {"approve": ["email:bob@example.org"], "names": {"email:bob@example.org": "bob"}}
        ),
    )
    page = question_page(open_one, RUN, STATE)
    assert "Escalated to level 2." in page and "1 of 2 approved: @bob" in page
    closed = dataclasses.replace(
        open_one,
        status=QuestionStatus.CANCELLED,
        closed_by="Root",
        closed_at=NOW + 5,
        answer=CancelReason("<b>moved</b>"),
    )
    text = question_page(closed, RUN, STATE)
    assert "Cancelled" in text and "Root" in text and "&lt;b&gt;moved&lt;/b&gt;" in text
    assert "<form" not in text


def test_every_outside_string_passes_the_display_function() -> None:
    """A bidi override in the answerer's name or the requester shows as its code point."""
    state = dataclasses.replace(STATE, answerer="ana\u202e@example.org")
    run = dataclasses.replace(RUN, requester="api:\u202eci")
    page = question_page(record("ask_user", ASK), run, state)
    assert "\u202e" not in page
    assert display("ana\u202e@example.org", markup="html") in page
