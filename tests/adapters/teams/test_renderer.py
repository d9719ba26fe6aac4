"""Every card the Teams renderers draw, through Microsoft's own renderer: no warning, no link
an agent made, no raw bidirectional control."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from adapters.teams import closed_card, question_card, refusal_card
from adapters.teams._admin import admin_card
from bot.admin import results
from bot.questions.records import QuestionStatus
from tests.adapters.teams import _catalogue as catalogue
from tests.adapters.teams.conftest import Renderer

pytestmark = pytest.mark.browser

LINK = "[Click](https://evil.example)"
RLO = "\u202e"
SNEAKY = f"{LINK} deploy to prod{RLO}gnits"


async def _clean(renderer: Renderer, name: str, card: dict[str, Any]) -> dict[str, Any]:
    drawn = await renderer.render(card)
    assert drawn["events"] == [], f"{name}: {drawn['events']}"
    assert drawn["text"].strip(), f"{name} drew nothing"
    return drawn


async def test_every_ordinary_card_passes_the_official_renderer(renderer: Renderer) -> None:
    """Questions of every kind, closed cards, refusals, tallies, levels, admin cards: zero
    validation events (warnings included), something drawn, and every input labelled."""
    for name, card in catalogue.ordinary().items():
        drawn = await _clean(renderer, name, card)
        assert len(drawn["labels"]) >= len(drawn["inputs"]), f"{name}: an input has no label"


async def test_every_card_at_the_payload_limits_passes_the_official_renderer(
    renderer: Renderer,
) -> None:
    """The same at the largest payloads the API accepts: cut, never broken."""
    for name, card in catalogue.at_limits().items():
        await _clean(renderer, name, card)


def _sneaky_cards() -> dict[str, dict[str, Any]]:
    question = catalogue.ask(
        SNEAKY,
        catalogue.option(SNEAKY, SNEAKY),
        catalogue.option("b"),
        header=f"H{RLO}",
    )
    many = catalogue.ask(SNEAKY, *[catalogue.option(f"{SNEAKY} {i}") for i in range(7)])
    approval = {
        "action": SNEAKY,
        "summary": SNEAKY,
        "arguments": {SNEAKY: SNEAKY, "nested": {SNEAKY: [SNEAKY]}},
    }
    form = {
        "title": SNEAKY,
        "message": SNEAKY,
        "schema": {
            "type": "object",
            "properties": {
                "a": {"type": "string", "title": SNEAKY, "description": SNEAKY},
                "b": {"type": "string", "title": SNEAKY, "enum": [SNEAKY, "x"]},
                SNEAKY: {"type": "boolean"},
            },
            "required": ["a"],
        },
    }
    named = catalogue.asked(
        "ask_user",
        {"questions": [question]},
        tally=f"1 of 2 approved: {SNEAKY}",
        errors={"": SNEAKY, "q0": SNEAKY},
    )
    named = dataclasses.replace(named, asked_for=SNEAKY, who_may_answer=SNEAKY)
    cancelled = catalogue.record(
        "approval", approval, QuestionStatus.CANCELLED, {"reason": SNEAKY}, by=SNEAKY
    )
    answered_form = catalogue.record("form", form, QuestionStatus.ANSWERED, {"a": SNEAKY})
    return {
        "ask-buttons": question_card(catalogue.asked("ask_user", {"questions": [question]})),
        "ask-named": question_card(named),
        "ask-choices": question_card(catalogue.asked("ask_user", {"questions": [many]})),
        "approval": question_card(catalogue.asked("approval", approval)),
        "form": question_card(catalogue.asked("form", form)),
        "custom": question_card(catalogue.asked("rollout", {SNEAKY: SNEAKY})),
        "cancelled": closed_card(cancelled),
        "form-answered": closed_card(answered_form),
        "refusal": refusal_card(SNEAKY),
        "admin-cancel": admin_card(
            results.CancelDone(interrupt_id="int_1", run_id="run_1", by=SNEAKY, reason=SNEAKY)
        ),
        "admin-pending": admin_card(
            results.PendingPage(at=0.0, items=(catalogue._open(approval),), next_after=None)
        ),
    }


async def test_agent_text_makes_no_link_and_hides_no_bidi_control(renderer: Renderer) -> None:
    """U+202E and a markdown link in a question, an option, an approval's arguments, a form's
    title and fields, names and a cancel's reason: no raw U+202E anywhere in any card, and
    the official renderer (markdown by markdown-it) draws the link as the words typed."""
    for name, card in _sneaky_cards().items():
        assert RLO not in json.dumps(card, ensure_ascii=False), name
        drawn = await _clean(renderer, name, card)
        ours = [href for href in drawn["links"] if href.startswith("https://teams.microsoft.com/")]
        assert drawn["links"] == ours, f"{name} links to {drawn['links']}"
        assert RLO not in drawn["text"], name
        assert "⟨U+202E⟩" in drawn["text"] or "⟨U+202E⟩" in " ".join(drawn["labels"]), name
