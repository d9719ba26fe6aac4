"""Questions as Block Kit messages: pure functions, no I/O.

One ``ask_user`` question with up to five options becomes one button per
option; an ``approval`` becomes Approve / Reject; a ``form`` and anything
else become an "Answer…" button that opens a modal (``_modals``, ``_forms``). Every message keeps
within Block Kit's limits (``_limits``): long content is cut with a
visible marker rather than refused by Slack.

Every text that did not come from this code base (the question, its
options, an approval's arguments, a form's labels, a cancel's reason) is
shown through ``bot.display``: mrkdwn through ``_md``, so it cannot mention
or link anyone, and plain_text through ``_shown``, since a plain_text
object reads no markup (Block Kit's text object reference: markup is read
only ``when type is mrkdwn``). Either way invisible and bidirectional
controls show as ``⟨U+XXXX⟩``, and the clip comes after.

How a message names people: only a word that is a Slack user or user group
id becomes ``<@U…>`` or ``<!subteam^S…>``; any other id or name (another
surface's person, an id a request named, a display name) is shown through
``bot.display``, so it can neither mention nor link.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, Literal, assert_never

from adapters.slack import _limits as L
from adapters.slack._forms import label_of, properties
from adapters.slack._limits import clip, fit
from bot.contract.answers import Answer, FormValues
from bot.contract.payloads import (
    ApprovalPayload,
    AskUserItem,
    AskUserPayload,
    FormToolPayload,
    OtherPayload,
    Payload,
    allowed,
)
from bot.display import display
from bot.questions.quorum import rejected_on_expiry
from bot.questions.records import Question, QuestionStatus
from bot.service.delivering.messages import (
    EXPIRED_LINE,
    EXPIRED_REJECTED_LINE,
    answered_line,
    approval_line,
    ask_user_replies,
    asked_line,
    cancelled_line,
    level_text,
    person_text,
)

ASK_USER = "ask_user"
APPROVAL = "approval"
FORM = "form"
MAX_BUTTONS = 5
# Ten fields of 2,000 would blow the message budget; an argument shows its start.
APPROVAL_FIELD_TEXT = 600

# action_ids the listeners route on.
CHOOSE = "hitl_choose"
APPROVE = "hitl_approve"
REJECT = "hitl_reject"
OPEN_FORM = "hitl_open"
EDIT = "hitl_edit"
RESPOND = "hitl_respond"

Kind = Literal["buttons", "approval", "modal"]


def _md(text: object) -> str:
    """``text`` for mrkdwn, shown as typed: no mention, link or hidden control."""
    return display(text, markup="slack")


def _shown(text: object) -> str:
    """``text`` for a plain_text object: its hidden controls made visible, nothing escaped."""
    return display(text, markup="plain")


def slack_date(at: float) -> str:
    """``<!date>``: each reader sees their own time zone; the fallback is UTC."""
    fallback = datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d %H:%M UTC")
    return f"<!date^{int(at)}^{{date_short_pretty}} at {{time}}|{fallback}>"


def button_value(token: str, answer: Mapping[str, Any]) -> str:
    return json.dumps({"t": token, "a": answer}, separators=(",", ":"), ensure_ascii=False)


def parse_value(value: str) -> tuple[str, dict[str, Any]]:
    """(token, answer) from a button value; ("", {}) for anything malformed."""
    try:
        data = json.loads(value)
    except (ValueError, TypeError, RecursionError):
        return "", {}
    if not isinstance(data, dict):
        return "", {}
    token, answer = data.get("t"), data.get("a", {})
    if not isinstance(token, str) or not isinstance(answer, dict):
        return "", {}
    return token, answer


def kind_of(payload: Payload, token: str) -> Kind:
    match payload:
        case ApprovalPayload():
            return "approval"
        case AskUserPayload(questions=[question]):
            labels = [option.label for option in question.options]
            values = [button_value(token, _ask_answer(question, label)) for label in labels]
            if (
                0 < len(labels) <= MAX_BUTTONS
                and not question.multi_select
                and all(len(label) <= L.BUTTON_TEXT for label in labels)
                and all(len(value) <= L.BUTTON_VALUE for value in values)
            ):
                return "buttons"
            return "modal"
        case AskUserPayload() | FormToolPayload() | OtherPayload():
            return "modal"
        case _:
            assert_never(payload)


def question_message(
    question: Question, *, token: str, requester: str, audience: str, tally: str = ""
) -> dict[str, Any]:
    """``text`` (the notification) and ``blocks`` for chat.postMessage: an open question,
    its buttons carrying ``token``.

    ``requester`` and ``audience`` are mrkdwn; ``tally``, under a quorum, the
    votes so far as mrkdwn ("1 of 2 approved: <@U1>"), "" otherwise.
    """
    payload = question.payload
    kind = kind_of(payload, token)
    blocks = _body(payload, expanded=kind != "buttons")
    blocks.append(_actions(kind, payload, token))
    blocks.append(_context(asked_line(requester, audience, slack_date(question.expires_at))))
    if tally:
        blocks.append(_context(tally))
    if question.level:
        blocks.append(_context(level_text(question.level)))
    return _fit(_summary(payload), blocks)


def closed_message(record: Question, *, requester: str, by: str) -> dict[str, Any]:
    """The question redrawn without its buttons, ending in how it closed.

    ``requester`` and ``by`` are mrkdwn (``by`` is who closed it, as Slack shows them).
    """
    blocks = _body(record.payload, expanded=False)
    answered = record.status is QuestionStatus.ANSWERED
    if isinstance(record.payload, FormToolPayload) and answered and record.answer:
        fields = _form_answer(record.payload, record.answer)
        if fields:
            blocks.append({"type": "section", "fields": fields})
    blocks.append(_context(outcome_line(record, by=by)))
    return _fit(outcome_line(record, by=by), blocks)


def outcome_line(record: Question, *, by: str) -> str:
    at = slack_date(record.closed_at or time.time())
    if record.status is QuestionStatus.EXPIRED:
        return EXPIRED_REJECTED_LINE if rejected_on_expiry(record) else EXPIRED_LINE
    if record.status is QuestionStatus.CANCELLED:
        return cancelled_line(by, at, clip(_md(record.cancel_reason), 500))
    if record.name == APPROVAL:
        return approval_line(record.answer, by, at, lambda text: clip(_md(text), 500))
    if record.name == ASK_USER:
        return answered_line(by, at, clip(_md(ask_user_replies(record.answer)), 1000))
    return answered_line(by, at, "")


def reply_message(text: str) -> dict[str, Any]:
    """A thread reply, cut to fit one section. ``text`` is mrkdwn: what this code base did
    not write in it the caller has shown through ``bot.display`` (``SlackSurface.post_outcome``)."""
    blocks = [_section(text)] if text else []
    return {"text": clip(text, L.FALLBACK_TEXT), "blocks": blocks}


# -- people -------------------------------------------------------------------

SURFACE = "slack"
# A Slack user or user group id: "x|@everyone" or "<!channel>" is not one.
SLACK_ID = re.compile(r"^[A-Z0-9]{1,32}$")
# The name this adapter gives a Slack person it knows by id only (``_who.responder``).
OWN_MENTION = re.compile(r"^<@[A-Z0-9]{1,32}>$")


def mention(responder_id: str) -> str:
    """``slack:T:U`` as a mention Slack renders as @name; other ids as text (mrkdwn)."""
    parts = responder_id.split(":")
    if len(parts) == 3 and parts[0] == SURFACE and SLACK_ID.match(parts[2]):
        return f"<@{parts[2]}>"
    return display(responder_id, markup="slack")


def person(answerer: str, names: Mapping[str, str] | None = None) -> str:
    """An answerer id as mrkdwn: a Slack person (``slack:T:U``, or a bare user id) as a
    mention, anyone else as text: by the name ``names`` gives them, else by a short form of
    their id (``person_text``)."""
    bare = answerer.split(":")[-1] if is_slack_person(answerer) else ""
    if SLACK_ID.match(bare):
        return f"<@{bare}>"
    return display(person_text(answerer, names), markup="slack")


def group_mention(group: str) -> str:
    """A Slack user group as a mention; a word that is not a group id, as text."""
    return f"<!subteam^{group}>" if SLACK_ID.match(group) else display(group, markup="slack")


def named(person_id: str, name: str) -> str:
    """A voter as the tally shows them: a Slack person as Slack renders them, anyone else
    (a Teams answerer of a question posted on both) by the name their surface gave."""
    return mention(person_id) if is_slack(person_id) else display(f"@{name}", markup="slack")


def is_slack(person_id: str) -> bool:
    return person_id.startswith(f"{SURFACE}:")


def is_slack_person(word: str) -> bool:
    """An answerer id that names a Slack person: ``slack:T:U``, or a bare user id."""
    return is_slack(word) or ":" not in word


def name_shown(name: str) -> str:
    """A recorded display name as mrkdwn: the ``<@U…>`` this adapter recorded stays a
    mention; any other name (Slack's, another surface's, a request's) is text."""
    return name if OWN_MENTION.match(name) else display(name, markup="slack")


# -- blocks -------------------------------------------------------------------


def _body(payload: Payload, *, expanded: bool) -> list[dict[str, Any]]:
    match payload:
        case ApprovalPayload():
            return _approval_body(payload)
        case FormToolPayload():
            return [_section(_form_text(payload))]
        case AskUserPayload(questions=questions):
            blocks: list[dict[str, Any]] = []
            # Room for the actions, the context and a "more" line.
            room = L.MESSAGE_BLOCKS - 3
            for question in questions[:room]:
                blocks.append(_section(_question_text(question, expanded=expanded)))
            if len(questions) > room:
                blocks.append(_section(f"…and {len(questions) - room} more questions in the form."))
            return blocks
        case OtherPayload(values=values):
            return [_section(_fields_text(values))]
        case _:
            assert_never(payload)


def _approval_body(payload: ApprovalPayload) -> list[dict[str, Any]]:
    action = _md(payload.action)
    summary = _md(payload.summary)
    section = _section(f"*Approval requested: {action}*\n{summary}")
    fields = [_mrkdwn(clip(f"*Risk*\n{_md(payload.risk)}", 2000))]
    items = list(payload.arguments.items())
    for key, value in items[: L.SECTION_FIELDS - 2]:
        shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        fields.append(_mrkdwn(clip(f"*{clip(_md(key), 200)}*\n{_md(shown)}", APPROVAL_FIELD_TEXT)))
    if len(items) > L.SECTION_FIELDS - 2:
        fields.append(_mrkdwn(f"…and {len(items) - (L.SECTION_FIELDS - 2)} more arguments"))
    return [section, {"type": "section", "fields": fields}]


def _form_text(payload: FormToolPayload) -> str:
    title = _md(payload.title or "A form to fill in")
    message = _md(payload.message)
    labels = ", ".join(clip(_md(label_of(k, v)), 100) for k, v in properties(payload).items())
    lines = [f"*{title}*", message, f"Fields: {labels}" if labels else ""]
    return "\n".join(line for line in lines if line)


def _form_answer(payload: FormToolPayload, answer: Answer) -> list[dict[str, Any]]:
    """The submitted fields, ``*Label*`` over the value, within a section's ten; none for an
    answer that is not a form's values."""
    if not isinstance(answer, FormValues):
        return []
    answer_values, shown = answer.values, []
    for name, spec in properties(payload).items():
        if name in answer_values:
            label = clip(_md(label_of(name, spec)), 200)
            value = _md(_form_value(answer_values[name]))
            shown.append(_mrkdwn(clip(f"*{label}*\n{value}", APPROVAL_FIELD_TEXT)))
    if len(shown) > L.SECTION_FIELDS:
        more = len(shown) - (L.SECTION_FIELDS - 1)
        shown = [*shown[: L.SECTION_FIELDS - 1], _mrkdwn(f"…and {more} more fields")]
    return shown


def _form_value(value: Any) -> str:
    if isinstance(value, bool):
        return "Yes" if value else "No"
    if isinstance(value, list):
        return ", ".join(map(str, value)) or "(none)"
    return str(value)


def _question_text(question: AskUserItem, *, expanded: bool) -> str:
    header = _md(question.header)
    text = _md(question.question)
    lines = [f"*{header}*\n{text}" if header else f"*{text}*"]
    if expanded:
        for option in question.options:
            label = _md(option.label)
            description = _md(option.description)
            lines.append(f"• {label}" + (f": {description}" if description else ""))
    return "\n".join(lines)


def _fields_text(values: Mapping[str, Any]) -> str:
    lines = []
    for key, value in values.items():
        shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        lines.append(f"*{_md(key)}*: {_md(shown)}")
    return "\n".join(lines) or "A question is waiting for an answer."


def _actions(kind: Kind, payload: Payload, token: str) -> dict[str, Any]:
    if kind == "buttons" and isinstance(payload, AskUserPayload):
        question = payload.questions[0]
        elements = [
            _button(
                option.label, CHOOSE, button_value(token, _ask_answer(question, option.label)), i
            )
            for i, option in enumerate(question.options)
        ]
    elif kind == "approval" and isinstance(payload, ApprovalPayload):
        approve = _button("Approve", APPROVE, button_value(token, {"decision": "approve"}), 0)
        approve["style"] = "primary"
        reject = _button("Reject…", REJECT, button_value(token, {"decision": "reject"}), 1)
        reject["style"] = "danger"
        reject["confirm"] = {
            "title": _plain("Reject this action?"),
            "text": _plain("The agent will not perform it. You can add a comment next."),
            "confirm": _plain("Reject"),
            "deny": _plain("Go back"),
            "style": "danger",
        }
        elements = [approve, reject]
        # The extra ways the question allows, each opening its modal.
        allows = allowed(payload)
        if "edit" in allows:
            elements.append(_button("Edit…", EDIT, button_value(token, {}), 2))
        if "respond" in allows:
            elements.append(_button("Respond…", RESPOND, button_value(token, {}), 3))
    else:
        elements = [_button("Answer…", OPEN_FORM, button_value(token, {}), 0)]
        elements[0]["style"] = "primary"
    return {"type": "actions", "block_id": "hitl_actions", "elements": elements}


def _button(text: str, action: str, value: str, index: int) -> dict[str, Any]:
    return {
        "type": "button",
        "text": _plain(clip(_shown(text), L.BUTTON_TEXT)),
        # action_ids must be unique within a block.
        "action_id": f"{action}:{index}",
        "value": value,
    }


def _section(text: str) -> dict[str, Any]:
    return {"type": "section", "text": _mrkdwn(clip(text, L.SECTION_TEXT))}


def _context(text: str) -> dict[str, Any]:
    return {"type": "context", "elements": [_mrkdwn(clip(text, L.CONTEXT_TEXT))]}


def _mrkdwn(text: str) -> dict[str, Any]:
    return {"type": "mrkdwn", "text": text}


def _plain(text: str) -> dict[str, Any]:
    return {"type": "plain_text", "text": text, "emoji": True}


def _fit(summary: str, blocks: list[dict[str, Any]]) -> dict[str, Any]:
    return {"text": clip(summary, L.FALLBACK_TEXT), "blocks": fit(blocks)}


def _summary(payload: Payload) -> str:
    """The notification text: mrkdwn as well, so shown through ``_md`` like the blocks."""
    match payload:
        case ApprovalPayload(action=action):
            return f"Approval requested: {_md(action)}"
        case FormToolPayload(title=title):
            return f"Form: {_md(title)}"
        case AskUserPayload(questions=questions):
            return f"Question: {_md(questions[0].question)}"
        case OtherPayload():
            return "A question is waiting for an answer."
        case _:
            assert_never(payload)


def _ask_answer(question: AskUserItem, label: str) -> dict[str, Any]:
    return {"answers": {question.question: label}}
