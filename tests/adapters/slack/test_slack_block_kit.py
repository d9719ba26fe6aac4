"""Every message and modal Slack is sent, at the largest payload each kind allows, passes
slack_sdk's models and the limits they leave unchecked (``tests/fakes/block_kit``)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from adapters.slack._admin import admin_message, moved_message
from adapters.slack._listeners import _shown
from adapters.slack._modals import (
    Metadata,
    answer_from_state,
    answer_modal,
    edit_modal,
    errors_for,
    reject_modal,
    respond_modal,
)
from adapters.slack._render import (
    closed_message,
    named,
    parse_value,
    question_message,
    reply_message,
)
from bot.admin import results
from bot.admin._commands import USAGES
from bot.contract.form_schema import MAX_OPTIONS, MAX_PROPERTIES, check_form_answer
from bot.contract.models import Tally
from bot.contract.payloads import payload_of
from bot.display import display
from bot.human.factory import AskUserPayload, AskUserResponse
from bot.interactions.approval import ApprovalPayload, ApprovalResponse, approval_registration
from bot.interactions.form import FormToolPayload
from bot.questions.quorum import stored_policy, stored_tally, tally_text
from bot.questions.records import (
    AuditEvent,
    DeliveryKind,
    DeliveryState,
    OutboxRow,
    Question,
    QuestionStats,
    QuestionStatus,
    RunRecord,
)
from bot.service.answering import outcomes
from bot.service.delivering.messages import nudge_text, refusal_text
from tests.fakes.block_kit import message_problems, view_problems
from tests.support import closed_question, open_question, pending_item, typed

TOKEN = "h." + "p" * 990 + ".s"  # as long as a token may get (under 1,000)
RLO = "\u202e"
# Every character Slack or a reader could trip on, and a control that grows 8-fold when shown.
NASTY = f"<!channel> & <https://evil.example|ok> *b* {RLO}\u200b"
AT = 1_800_000_000.0
META = Metadata(TOKEN, "ask", "C" + "9" * 20, "1700000000.000001", "1700000000.000000")


def fill(size: int, seed: str = NASTY) -> str:
    """``size`` characters of hostile text, distinct per seed."""
    return (seed * (size // len(seed) + 1))[:size]


def shown(node: Any, kind: str = "mrkdwn") -> list[tuple[str, str]]:
    """Every (type, text) a person reads: each text object's, and a message's notification
    text (mrkdwn, as chat.postMessage reads it)."""
    if isinstance(node, dict):
        if isinstance(node.get("text"), str):
            own = [(str(node.get("type", kind)), node["text"])]
            return own + [t for k, v in node.items() if k != "text" for t in shown(v)]
        return [t for v in node.values() for t in shown(v)]
    if isinstance(node, list):
        return [t for item in node for t in shown(item)]
    return []


def hostile(node: Any) -> list[str]:
    """What would not read as typed: a raw control anywhere, markup in mrkdwn."""
    found = []
    for kind, text in shown(node):
        markup = kind != "plain_text" and ("<!channel>" in text or "<https://evil" in text)
        if RLO in text or markup:
            found.append(text[:200])
    return found


def ok_message(message: dict[str, Any]) -> None:
    assert [p[:300] for p in message_problems(message)] == []
    assert hostile(message) == []


def ok_view(view: dict[str, Any]) -> None:
    assert [p[:300] for p in view_problems(view)] == []
    assert hostile(view) == []


# -- the largest payloads each kind accepts ---------------------------------------


def ask_payload(*, questions: int, options: int, multi: bool = False) -> dict[str, Any]:
    items = []
    for q in range(questions):
        labels = [fill(75 - 3, f"{q}{n}{NASTY}") + f"{n:03d}" for n in range(options)]
        items.append(
            {
                "question": fill(500 - 2, f"{q}{NASTY}") + f"{q:02d}",
                "header": fill(30, f"{q}{NASTY}"),
                "options": [{"label": label, "description": fill(150)} for label in labels],
                "multi_select": multi and options > 0,
            }
        )
    payload = {"questions": items}
    AskUserPayload.model_validate(payload)  # the largest the server accepts, no larger
    return payload


def approval_payload() -> dict[str, Any]:
    arguments: dict[str, Any] = {fill(200, f"{k}{NASTY}"): fill(5_000) for k in range(30)}
    arguments["nested"] = {"deep": [fill(3_000)] * 5}
    payload = {
        "action": fill(100),
        "summary": fill(1_000),
        "arguments": arguments,
        "risk": "high",
    }
    ApprovalPayload.model_validate(payload)
    return payload


def form_payload() -> dict[str, Any]:
    long = [fill(500, f"{n}{NASTY}") + f"{n:03d}" for n in range(MAX_OPTIONS)]
    kinds: list[dict[str, Any]] = [
        {"type": "string", "minLength": 1, "maxLength": 2000, "default": fill(2000)},
        {"type": "string", "maxLength": 40},
        {"type": "string", "format": "email", "default": "a@b.example"},
        {"type": "string", "format": "uri"},
        {"type": "string", "format": "date", "default": "2026-12-01"},
        {"type": "string", "format": "date-time", "default": "2026-12-01T10:00:00Z"},
        {"type": "number", "minimum": -1.5, "maximum": 1e9, "default": 2.5},
        {"type": "integer", "minimum": 0, "maximum": 10, "default": 3},
        {"type": "boolean", "default": True},
        {"type": "string", "enum": long, "default": long[-1]},
        {"type": "string", "enum": long[:5], "enumNames": [fill(300)] * 5},
        {"type": "string", "oneOf": [{"const": v, "title": fill(200)} for v in long]},
        {"type": "array", "items": {"type": "string", "enum": long}, "maxItems": 3},
        {"type": "array", "items": {"type": "string", "enum": long[:4]}, "default": long[:2]},
        {"type": "array", "items": {"anyOf": [{"const": v, "title": fill(99)} for v in long]}},
    ]
    properties = {}
    for n in range(MAX_PROPERTIES):
        spec = dict(kinds[n % len(kinds)])
        spec["title"] = fill(3_000, f"{n}{NASTY}")
        spec["description"] = fill(3_000)
        properties[fill(100 - 2, f"{n}{NASTY}") + f"{n:02d}"] = spec
    payload = {
        "title": fill(150),
        "message": fill(3_000),
        "schema": {"type": "object", "properties": properties, "required": list(properties)[:9]},
    }
    FormToolPayload.model_validate(payload)
    return payload


def asked(name: str, payload: dict[str, Any], *, tally: str = "", level: int = 0) -> dict[str, Any]:
    """The message of a question waiting for an answer."""
    return question_message(
        open_question(name, payload, expires_at=AT, level=level),
        token=TOKEN,
        requester="<@U1>",
        audience="Only <@U1> can answer this.",
        tally=tally,
    )


ASKS = {
    "buttons": ("ask_user", ask_payload(questions=1, options=5)),
    "radio": ("ask_user", ask_payload(questions=1, options=10)),
    "checkboxes": ("ask_user", ask_payload(questions=1, options=10, multi=True)),
    "free text": ("ask_user", ask_payload(questions=1, options=0)),
    "five questions": ("ask_user", ask_payload(questions=5, options=10, multi=True)),
    "approval": ("approval", approval_payload()),
    "form": ("form", form_payload()),
}


@pytest.mark.parametrize("kind", list(ASKS))
def test_every_question_at_its_largest_is_a_message_slack_takes(kind: str) -> None:
    """The question as posted, with a long tally and an escalation level, and as redrawn."""
    name, payload = ASKS[kind]
    ok_message(asked(name, payload))
    voters = Tally(
        approve=[f"slack:T1:U{n}" for n in range(40)],
        reject=["teams:t:x"],
        names={"teams:t:x": NASTY},
    )
    tally = tally_text(voters, 50, named)
    ok_message(asked(name, payload, tally=tally, level=3))


def test_five_short_buttons_stay_buttons_whose_values_carry_the_answer() -> None:
    """At its largest a one-question ask_user is still buttons; each value is (token, answer)."""
    name, payload = ASKS["buttons"]
    message = asked(name, payload)
    actions = next(b for b in message["blocks"] if b["type"] == "actions")
    assert len(actions["elements"]) == 5
    question = payload["questions"][0]
    for button, option in zip(actions["elements"], question["options"], strict=True):
        assert parse_value(button["value"]) == (
            TOKEN,
            {"answers": {question["question"]: option["label"]}},
        )


@pytest.mark.parametrize("kind", ["radio", "checkboxes", "free text", "five questions"])
def test_every_ask_user_modal_at_its_largest_is_a_view_slack_takes(kind: str) -> None:
    """The modal opens, and what it gives back is an answer the server accepts."""
    _, payload = ASKS[kind]
    view = answer_modal(typed("ask_user", payload), {}, META)
    ok_view(view)
    values = {}
    for block in view["blocks"]:
        element = block["element"]
        if element["type"] == "plain_text_input":
            state = {"type": element["type"], "value": fill(2_000)}
        elif element["type"] == "checkboxes":
            state = {"type": element["type"], "selected_options": element["options"]}
        else:
            state = {"type": element["type"], "selected_option": element["options"][-1]}
        values[block["block_id"]] = {"answer": state}
    answer = answer_from_state(META, typed("ask_user", payload), {}, values)
    AskUserResponse.model_validate(answer, context={"payload": payload})


def test_the_form_modal_at_its_largest_is_a_view_slack_takes() -> None:
    """50 properties of every type, 100 long choices each: the view opens, choices come back."""
    payload = form_payload()
    meta = Metadata(TOKEN, "form", "C1", "1.2", "1.1")
    view = answer_modal(typed("form", payload), {}, meta)
    ok_view(view)
    values = {}
    for block in view["blocks"]:
        if block["type"] != "input":
            continue
        element = block["element"]
        if element["type"] in ("checkboxes", "multi_static_select"):
            state = {"type": element["type"], "selected_options": element["options"][:1]}
        elif element["type"] in ("radio_buttons", "static_select"):
            state = {"type": element["type"], "selected_option": element["options"][-1]}
        else:
            continue
        values[block["block_id"]] = {"answer": state}
    from adapters.slack._forms import form_answer_from_state

    answer = form_answer_from_state(typed("form", payload), values)
    assert answer  # every choice maps back to its full value
    check_form_answer({**payload["schema"], "required": []}, answer)


def test_the_schema_and_reject_modals_are_views_slack_takes() -> None:
    """A deployment's own response schema, and the reject comment."""
    for kind in ("schema", "reject"):
        meta = Metadata(TOKEN, kind, "C1", "1.2", "1.1")  # type: ignore[arg-type]
        view = (
            reject_modal(meta)
            if kind == "reject"
            else answer_modal(typed("approval", {}), ApprovalResponse.model_json_schema(), meta)
        )
        ok_view(view)
    enum = [fill(400, f"{n}") + str(n) for n in range(150)]
    schema = {
        "properties": {
            fill(300): {"type": "string", "enum": enum, "title": fill(3000)},
            "many": {"type": "array", "items": {"enum": enum}, "description": fill(3000)},
        }
    }
    ok_view(answer_modal(typed("other", {}), schema, Metadata(TOKEN, "schema", "C1", "1.2", "1.1")))


# -- how it closed ----------------------------------------------------------------


def closed(name: str, payload: dict[str, Any], status: str, answer: Any = None) -> dict[str, Any]:
    """The message of a question redrawn as it closed."""
    return closed_message(
        closed_question(name, payload, status, answer, closed_at=AT), requester="<@U1>", by="<@U2>"
    )


def test_every_closed_message_at_its_largest_is_one_slack_takes() -> None:
    """Answered (every kind), expired, and cancelled with the longest reason."""
    _, ask = ASKS["five questions"]
    answers = {q["question"]: [o["label"] for o in q["options"]] for q in ask["questions"]}
    form = form_payload()
    form_answer = {name: fill(2_000) for name in form["schema"]["properties"]}
    approval = approval_payload()
    for message in [
        closed("ask_user", ask, "answered", {"answers": answers}),
        closed("approval", approval, "answered", {"decision": "approve"}),
        closed("approval", approval, "answered", {"decision": "reject", "comment": NASTY * 40}),
        closed("form", form, "answered", form_answer),
        closed("form", form, "expired"),
        closed("approval", approval, "cancelled", {"reason": fill(500)}),
    ]:
        ok_message(message)


def test_replies_nudges_refusals_and_moves_are_messages_slack_takes() -> None:
    """The run's outcome (shown as the surface shows it), a reminder naming many, every
    refusal, a moved question."""
    ok_message(reply_message(display(fill(50_000), markup="slack")))
    people = [f"<@U{n}>" for n in range(200)]
    ok_message(
        reply_message(nudge_text({"kind": "escalated", "level": 2}, people, ["<!subteam^S1>"]))
    )
    ok_message(moved_message("https://slack.com/archives/C1/p1700000000000001"))
    refusals = [
        outcomes.TokenInvalid(),
        outcomes.TokenExpired(),
        outcomes.AlreadyAnswered(NASTY, AT),
        outcomes.AlreadyCancelled(NASTY, AT),
        outcomes.ScopeMismatch(),
        outcomes.NotAllowedToAnswer(),
        outcomes.AnswerInvalid({fill(100): fill(2_000) for _ in range(1)}),
        outcomes.StoreUnavailable(),
        outcomes.SelfApproval(),
        outcomes.AlreadyVoted(),
        outcomes.Counted("approve", 1, 0, 2),
        outcomes.Replayed(),
    ]
    for refusal in refusals:
        ok_message({"text": refusal_text(_shown(refusal))})


# -- admin replies ----------------------------------------------------------------


def listed_question(n: int) -> results.PendingItem:
    return pending_item(
        n,
        scope="T1:C1",
        name="approval",
        payload=payload_of("approval", approval_payload()),
        requester=f"console:{NASTY}",
        may_answer=(NASTY,) * 20,
        message_ref={"team": "T1", "channel": "C1", "ts": f"17.{n:06d}"},
    )


def test_every_admin_reply_is_a_message_slack_takes() -> None:
    """Every result ``/hitl`` can come to, each at its longest."""
    record = Question(
        interrupt_id="int_1",
        run_id="run_1",
        scope=fill(100),
        name="approval",
        tool_call_id="call_1",
        checkpoint_id="cp_1",
        payload=payload_of("approval", approval_payload()),
        issued_at=1000.0,
        expires_at=2000.0,
        status=QuestionStatus.CANCELLED,
        closed_by=NASTY,
        policy=stored_policy({"quorum": 2, "requester": NASTY}),
        tally=stored_tally({"approve": [NASTY] * 3, "reject": []}),
        message_ref={"channel": "C1", "ts": "1.2"},
    )
    run = RunRecord("run_1", "T1:C1", "slack", "slack:T1:U1", NASTY, 1.0, delivery_error=NASTY)
    events = tuple(
        AuditEvent(1000.0 + n, "refused", "run_1", "int_1", NASTY, {"why": fill(2_000)})
        for n in range(100)
    )
    deliveries = tuple(
        OutboxRow(
            n,
            "run_1",
            "slack",
            DeliveryKind.PUBLISH,
            "int_1",
            {},
            3,
            DeliveryState.FAILED,
            last_error=fill(2_000),
        )
        for n in range(30)
    )
    stats = QuestionStats(1, 2, 3, 4, 5, {fill(50): 1 for _ in range(1)}, 1.0, 2.0, 6, 7, 8)
    every = [
        results.HelpShown(USAGES, admin=False),
        results.HelpShown(USAGES, admin=True),
        results.PendingPage(AT, tuple(listed_question(n) for n in range(100)), "x"),
        results.PendingPage(AT, (), None),
        results.RecordShown(AT, record, run, (NASTY,) * 20, events, deliveries),
        results.RecordShown(AT, record, None, (), (), ()),
        results.CancelDone("int_1", "run_1", NASTY, fill(300)),
        results.Resent("int_1", "run_1"),
        results.Extended("int_1", "run_1", 1.0, 2.0),
        results.AlreadyDone("cancel", "int_1"),
        results.StatsShown(AT, stats),
        results.AuditShown("run_1", events),
        results.AdminsOnly("cancel"),
        results.CommandInvalid(fill(3_000)),
        results.UnknownId(fill(3_000)),
        results.NotOpen(fill(300), "answered"),
        results.TooLong("int_1", AT),
    ]
    for result in every:
        ok_message(admin_message(result))


def test_the_help_shows_its_placeholders_as_text() -> None:
    """``<question-id>`` in a usage is escaped, or Slack would read it as a link."""
    text = json.dumps(admin_message(results.HelpShown(USAGES, admin=True)))
    assert "<question-id>" not in text and "&lt;question-id&gt;" in text


def test_a_hidden_control_or_slack_markup_in_agent_text_shows_as_typed() -> None:
    """U+202E in a question, an option, an approval's arguments and a form's title shows as
    ⟨U+202E⟩ wherever Slack draws it; ``<!channel>`` and an agent's link stay text."""
    trap = f"prod{RLO}gnits <!channel> <https://evil.example|ok>"
    ask = {"questions": [{"question": trap, "options": [{"label": trap[:60]}, {"label": "no"}]}]}
    many = {
        "questions": [
            {"question": trap, "options": [{"label": f"{n}{trap[:60]}"} for n in range(8)]}
        ]
    }
    approval = {"action": "deploy", "summary": trap, "arguments": {trap: trap, "n": [trap]}}
    form = {
        "title": trap,
        "message": trap,
        "schema": {
            "type": "object",
            "properties": {"env": {"type": "string", "title": trap, "enum": [trap, "b"]}},
        },
    }
    rendered: list[Any] = [
        asked("ask_user", ask),
        asked("ask_user", many),
        answer_modal(typed("ask_user", many), {}, META),
        asked("approval", approval),
        closed("approval", approval, "cancelled", {"reason": trap}),
        asked("form", form),
        answer_modal(typed("form", form), {}, Metadata(TOKEN, "form", "C1", "1.2", "1.1")),
    ]
    for surface in rendered:
        texts = shown(surface)
        assert hostile(surface) == [] and texts
        assert any("prod⟨U+202E⟩gnits" in text for _, text in texts)
        for kind, text in texts:
            if kind == "mrkdwn" and "channel" in text:
                assert "&lt;!channel&gt; &lt;https://evil.example|ok&gt;" in text


# -- approve with changes -----------------------------------------------------------


def editable_payload() -> dict[str, Any]:
    payload = approval_payload()
    payload["allow"] = ["approve", "reject", "edit", "respond"]
    payload["arguments"]["env"] = "prod"
    payload["arguments"]["replicas"] = 2
    payload["arguments"]["labels"] = {"team": "web", "tiers": [1, 2]}
    return payload


def test_an_editable_approval_offers_edit_and_respond_buttons_slack_takes() -> None:
    """The message at its largest with the Edit… and Respond… buttons is one Slack takes;
    without ``allow`` it keeps only Approve and Reject."""
    message = asked("approval", editable_payload())
    ok_message(message)
    actions = next(b for b in message["blocks"] if b["type"] == "actions")
    assert [e["text"]["text"] for e in actions["elements"]] == [
        "Approve",
        "Reject…",
        "Edit…",
        "Respond…",
    ]
    plain = asked("approval", approval_payload())
    actions = next(b for b in plain["blocks"] if b["type"] == "actions")
    assert [e["text"]["text"] for e in actions["elements"]] == ["Approve", "Reject…"]


def test_the_edit_modal_is_prefilled_and_reads_back_the_arguments() -> None:
    """One input per argument with its value, a choice for an enum, JSON for a nested value;
    a value too long for an input is kept as asked; the submission is the full arguments."""
    payload = editable_payload()
    meta = Metadata(TOKEN, "edit", "C1", "1.2", "1.1")
    view = edit_modal(typed("approval", payload), meta)
    ok_view(view)
    inputs = {b["block_id"]: b for b in view["blocks"] if b["type"] == "input"}
    assert inputs["e:env"]["element"]["initial_value"] == "prod"
    assert inputs["e:replicas"]["element"]["initial_value"] == "2"
    nested = inputs["e:labels"]["element"]
    assert nested["multiline"]
    assert json.loads(nested["initial_value"]) == payload["arguments"]["labels"]
    # The 5,000-character values do not fit an input: kept, and the modal says so.
    assert "Kept as asked" in json.dumps(view)
    values = {
        "e:env": {"answer": {"type": "plain_text_input", "value": "staging"}},
        "e:replicas": {"answer": {"type": "plain_text_input", "value": "3"}},
    }
    answer = answer_from_state(meta, typed("approval", payload), {}, values)
    assert answer["decision"] == "edit"
    assert answer["arguments"] == {**payload["arguments"], "env": "staging", "replicas": "3"}
    ApprovalResponse.model_validate(answer, context={"payload": payload})
    errors = errors_for(
        meta, typed("approval", payload), {}, {"arguments.replicas": "must be a number"}
    )
    assert errors == {"e:replicas": "must be a number"}


def test_the_edit_modal_offers_an_enum_as_a_choice() -> None:
    """An ``arguments_schema`` enum is a select prefilled with the value asked."""
    payload = {
        "action": "deploy",
        "summary": "ship",
        "arguments": {"env": "prod"},
        "arguments_schema": {
            "type": "object",
            "properties": {"env": {"type": "string", "enum": ["prod", "staging"]}},
        },
        "allow": ["approve", "reject", "edit"],
    }
    ApprovalPayload.model_validate(payload)
    meta = Metadata(TOKEN, "edit", "C1", "1.2", "1.1")
    view = edit_modal(typed("approval", payload), meta)
    ok_view(view)
    element = next(b for b in view["blocks"] if b["type"] == "input")["element"]
    assert element["type"] == "static_select"
    assert element["initial_option"]["text"]["text"] == "prod"
    values = {"e:env": {"answer": {"type": "static_select", "selected_option": {"value": "1"}}}}
    assert answer_from_state(meta, typed("approval", payload), {}, values)["arguments"] == {
        "env": "staging"
    }


def test_the_edit_modal_keeps_the_arguments_the_schema_does_not_list() -> None:
    """Arguments the ``arguments_schema`` does not list get no input, are named as kept, and
    come back as asked, so the edit of a listed one is accepted and keeps them."""
    payload = {
        "action": "deploy",
        "summary": "ship",
        "arguments": {"env": "prod", "command": "deploy --all", "dry_run": True},
        "arguments_schema": {"type": "object", "properties": {"env": {"type": "string"}}},
        "allow": ["approve", "reject", "edit"],
    }
    meta = Metadata(TOKEN, "edit", "C1", "1.2", "1.1")
    view = edit_modal(typed("approval", payload), meta)
    ok_view(view)
    assert [b["block_id"] for b in view["blocks"] if b["type"] == "input"] == ["e:env"]
    assert "Kept as asked (too long or not editable here): command, dry_run" in json.dumps(view)
    values = {"e:env": {"answer": {"type": "plain_text_input", "value": "staging"}}}
    answer = answer_from_state(meta, typed("approval", payload), {}, values)
    clean = approval_registration().validate_answer(answer, payload)
    assert clean["arguments"] == {"env": "staging", "command": "deploy --all", "dry_run": True}


def test_the_respond_modal_is_a_view_slack_takes() -> None:
    """Respond instead: one message box, read back as the message."""
    meta = Metadata(TOKEN, "respond", "C1", "1.2", "1.1")
    ok_view(respond_modal(meta))
    values = {"message": {"answer": {"type": "plain_text_input", "value": "not today"}}}
    assert answer_from_state(meta, typed("approval", {}), {}, values) == {
        "decision": "respond",
        "message": "not today",
    }


def test_an_edit_closes_with_a_short_diff() -> None:
    """The closed message says what changed, the agent's values shown as typed."""
    answer = {
        "decision": "edit",
        "arguments": {"env": f"staging{RLO}"},
        "original_arguments": {"env": "prod"},
    }
    message = closed("approval", approval_payload(), "answered", answer)
    ok_message(message)
    assert "Approved by <@U2> with changes" in message["text"]
    assert "env prod → staging" in message["text"]
