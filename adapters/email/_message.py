"""A question as an email: multipart text and HTML, one link per answer, threaded replies.

Pure functions from what was asked to an ``EmailMessage``; nothing here
sends. Every string from an agent passes ``display`` (``plain`` for the text
part and the headers, ``html`` for the HTML part), and links only open the
question's page (``/q/...``) with an answer preselected: a mail scanner that
opens them answers nothing, since the page answers only on POST.

The ``Message-ID`` is derived from the question and the recipient, so a
message sent again after a crash (the outbox cannot know whether the SMTP
server kept the first) carries the same id and mail clients fold the two.
Reminders and escalations have ids of their own, derived the same way, and
name the question's message in ``In-Reply-To`` and ``References``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.message import EmailMessage
from email.utils import format_datetime
from typing import assert_never

from bot.contract.payloads import (
    ApprovalPayload,
    AskUserPayload,
    FormToolPayload,
    OtherPayload,
    Payload,
)
from bot.display import display
from bot.service.delivering.messages import level_text, when

MAX_SUBJECT_CHARS = 150
MAX_ARGUMENTS_CHARS = 4000
RISK_COLOURS = {"low": "#1a7f37", "medium": "#9a6700", "high": "#cf222e"}


@dataclass(frozen=True, slots=True)
class Choice:
    """One answer the message offers: its label and the page link with it preselected."""

    label: str
    url: str


@dataclass(frozen=True, slots=True)
class Mailed:
    """What one question's email needs, for one recipient."""

    interrupt_id: str
    name: str
    payload: Payload
    expires_at: float
    asked_by: str
    recipient: str
    choices: Sequence[Choice]
    tally: str = ""
    level: int = 0
    sent_at: float = 0.0
    extra: Mapping[str, str] = field(default_factory=dict)


def answers_of(payload: Payload) -> list[tuple[str, str | None]]:
    """Each answer the message offers, as (label, what the page shows preselected).

    An approval offers approve and reject; a question with options, each option
    of its first question; anything else (free text, a form) one link to answer.
    """
    match payload:
        case ApprovalPayload():
            return [("Approve", "approve"), ("Reject", "reject")]
        case AskUserPayload(questions=[only]) if only.options and not only.multi_select:
            return [(option.label, option.label) for option in only.options]
        case AskUserPayload() | FormToolPayload() | OtherPayload():
            return [("Answer", None)]
        case _:
            assert_never(payload)


def message_id(interrupt_id: str, recipient: str, domain: str, *, part: str = "q") -> str:
    """The same id for the same question, recipient and part (the question, a reminder)."""
    digest = hashlib.sha256(f"{interrupt_id}\0{recipient}\0{part}".encode()).hexdigest()[:32]
    return f"<{part}.{digest}@{domain}>"


def subject_of(name: str, payload: Payload) -> str:
    """A subject naming what is asked: the approval's action, the question, the form."""
    match payload:
        case ApprovalPayload(action=action):
            text = f"Approval needed: {action}"
        case FormToolPayload(title=title):
            text = f"Form to fill in: {title}"
        case AskUserPayload(questions=questions):
            text = f"Question: {questions[0].question}"
        case OtherPayload():
            text = f"Question: {name}"
        case _:
            assert_never(payload)
    return _header(text)


def question_message(mailed: Mailed, *, sender: str) -> EmailMessage:
    """The first message to ``mailed.recipient``: the question and one link per answer."""
    message = _envelope(mailed, sender=sender, subject=subject_of(mailed.name, mailed.payload))
    message["Message-ID"] = message_id(mailed.interrupt_id, mailed.recipient, _domain(sender))
    intro = "You are asked to decide this."
    message.set_content(_text(mailed, intro))
    message.add_alternative(_html(mailed, intro), subtype="html")
    return message


def nudge_message(mailed: Mailed, *, sender: str, text: str, part: str) -> EmailMessage:
    """A reminder or an escalation: a reply to the question's message, with its links again."""
    domain = _domain(sender)
    original = message_id(mailed.interrupt_id, mailed.recipient, domain)
    message = _envelope(
        mailed, sender=sender, subject="Re: " + subject_of(mailed.name, mailed.payload)
    )
    message["Message-ID"] = message_id(mailed.interrupt_id, mailed.recipient, domain, part=part)
    message["In-Reply-To"] = original
    message["References"] = original
    message.set_content(_text(mailed, text))
    message.add_alternative(_html(mailed, text), subtype="html")
    return message


def _envelope(mailed: Mailed, *, sender: str, subject: str) -> EmailMessage:
    message = EmailMessage()
    message["From"] = sender
    message["To"] = mailed.recipient
    message["Subject"] = subject
    message["Date"] = format_datetime(datetime.fromtimestamp(mailed.sent_at, UTC))
    # Tells auto-responders and list software this is a machine's message, not a conversation.
    message["Auto-Submitted"] = "auto-generated"
    for name, value in mailed.extra.items():
        message[name] = value
    return message


def _facts(mailed: Mailed) -> list[tuple[str, str]]:
    """(label, value) lines every message shows, plain text (each part escapes its own)."""
    facts: list[tuple[str, str]] = []
    if isinstance(mailed.payload, ApprovalPayload):
        facts.append(("Action", mailed.payload.action))
        facts.append(("Risk", mailed.payload.risk))
    facts.append(("Asked by", mailed.asked_by))
    facts.append(("Expires", when(mailed.expires_at)))
    if mailed.tally:
        facts.append(("So far", mailed.tally))
    if mailed.level:
        facts.append(("Level", level_text(mailed.level)))
    return facts


def _body_lines(mailed: Mailed) -> list[str]:
    """What is asked, in words, before the facts: the summary, each question, the form's text."""
    match mailed.payload:
        case ApprovalPayload(summary=summary):
            return [summary]
        case FormToolPayload(title=title, message=message):
            return [title, message]
        case AskUserPayload(questions=questions):
            return [q.question for q in questions]
        case OtherPayload(values=values):
            return [json.dumps(dict(values), indent=2, ensure_ascii=False)[:MAX_ARGUMENTS_CHARS]]
        case _:
            assert_never(mailed.payload)


def _arguments(mailed: Mailed) -> str:
    arguments = mailed.payload.arguments if isinstance(mailed.payload, ApprovalPayload) else None
    if not arguments:
        return ""
    text = json.dumps(arguments, indent=2, ensure_ascii=False, sort_keys=True)
    return text[:MAX_ARGUMENTS_CHARS]


def _text(mailed: Mailed, intro: str) -> str:
    lines = [intro, ""]
    lines += [display(line, markup="plain") for line in _body_lines(mailed)]
    lines.append("")
    lines += [f"{label}: {display(value, markup='plain')}" for label, value in _facts(mailed)]
    arguments = _arguments(mailed)
    if arguments:
        lines += ["", "Arguments:", display(arguments, markup="plain")]
    lines += ["", "Each link opens the question's page with that answer chosen; you confirm there."]
    lines += [f"{choice.label}: {choice.url}" for choice in mailed.choices]
    lines += ["", "The links are yours alone: forwarding this email lets others answer as you."]
    return "\n".join(lines) + "\n"


def _html(mailed: Mailed, intro: str) -> str:
    def h(text: str) -> str:
        return display(text, markup="html")

    body = "".join(
        f'<p style="margin:0 0 12px;font-size:16px">{h(line)}</p>'.replace("\n", "<br>")
        for line in _body_lines(mailed)
    )
    risk = mailed.payload.risk if isinstance(mailed.payload, ApprovalPayload) else ""
    rows = ""
    for label, value in _facts(mailed):
        colour = RISK_COLOURS.get(risk, "#1f2328") if label == "Risk" else "#1f2328"
        rows += (
            f'<tr><td style="padding:2px 12px 2px 0;color:#59636e">{h(label)}</td>'
            f'<td style="padding:2px 0;color:{colour}">{h(value)}</td></tr>'
        )
    arguments = _arguments(mailed)
    pre = (
        '<p style="margin:12px 0 4px;color:#59636e">Arguments</p>'
        '<pre style="margin:0;padding:8px;background:#f6f8fa;border-radius:6px;'
        f'white-space:pre-wrap;word-break:break-word;font-size:13px">{h(arguments)}</pre>'
        if arguments
        else ""
    )
    buttons = " ".join(
        f'<a href="{h(choice.url)}" style="display:inline-block;margin:4px 8px 4px 0;'
        "padding:10px 18px;border-radius:6px;text-decoration:none;font-weight:600;"
        f'{_button_colours(choice.label)}">{h(choice.label)}</a>'
        for choice in mailed.choices
    )
    return (
        '<!doctype html><html><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width,initial-scale=1"></head>'
        '<body style="margin:0;padding:16px;font-family:-apple-system,Segoe UI,Helvetica,'
        'Arial,sans-serif;color:#1f2328;background:#ffffff">'
        '<div style="max-width:600px">'
        f'<p style="margin:0 0 12px;color:#59636e">{h(intro)}</p>{body}'
        f'<table style="border-collapse:collapse;font-size:14px">{rows}</table>{pre}'
        f'<p style="margin:16px 0 4px">{buttons}</p>'
        '<p style="margin:8px 0 0;font-size:12px;color:#59636e">Each button opens the '
        "question's page with that answer chosen; you confirm there. The links are yours "
        "alone: forwarding this email lets others answer as you.</p>"
        "</div></body></html>"
    )


def _button_colours(label: str) -> str:
    if label == "Approve":
        return "background:#1f883d;color:#ffffff"
    if label == "Reject":
        return "background:#cf222e;color:#ffffff"
    return "background:#0969da;color:#ffffff"


def _header(text: str) -> str:
    """Header text: shown as plain, on one line, clipped (a newline would end the header)."""
    shown = " ".join(display(text, markup="plain").split())
    return shown if len(shown) <= MAX_SUBJECT_CHARS else shown[: MAX_SUBJECT_CHARS - 1] + "…"


def _domain(sender: str) -> str:
    return sender.rpartition("@")[2] or "localhost"
