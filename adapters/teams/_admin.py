"""Admin commands in Teams: recognised in a personal chat, answered with an Adaptive Card.

Recognising is the only decision here, and it is about wording, not
rights: whether the person may run the command is ``AdminService``'s call,
made with the identity the channel authenticated (``responder_of``).
Rendering is pure: an admin result in, a card out.
"""

from __future__ import annotations

import json
from typing import Any, assert_never

from adapters.teams._activity import is_personal, strip_mentions
from adapters.teams._card_kit import (
    MAX_CARD_BYTES,
    Json,
    Limits,
    card,
    fit,
    left_out,
    md,
    note,
    size,
    text,
    title,
)
from bot.admin import (
    USAGES,
    duration,
    event_line,
    history_lines,
    policy_lines,
    results,
    stats_facts,
    summary_of,
    title_of,
)
from bot.contract.payloads import payload_json
from bot.service.delivering.messages import NOT_AN_ADMIN, moved_text, when

VERBS = frozenset(usage.name for usage in USAGES)
PREFIXES = ("/hitl", "hitl")
MAX_PAYLOAD_CHARS = 2000
MAX_EVENTS = 60
# Closed questions on one card: each is a few short lines, so twenty fit its size.
MAX_HISTORY = 20


def admin_words(activity: dict[str, Any]) -> list[str] | None:
    """The command's words, if this is a personal-chat message that is an admin command.

    The first word must be a command (``pending``, ``cancel`` ...), optionally
    after ``hitl`` or ``/hitl``, as the app's command list suggests them.
    """
    if activity.get("type") != "message" or activity.get("value") is not None:
        return None
    if not is_personal(activity):
        return None
    words = strip_mentions(str(activity.get("text") or "")).split()
    if words and words[0].lower() in PREFIXES:
        words = words[1:] or ["help"]
    if not words or words[0].lower() not in VERBS:
        return None
    return words


def message_link(ref: dict[str, Any] | None) -> str:
    """A Teams deep link to a posted card, from the reference our surface stored."""
    if not ref or not ref.get("conversation_id") or not ref.get("activity_id"):
        return ""
    return f"https://teams.microsoft.com/l/message/{ref['conversation_id']}/{ref['activity_id']}"


def moved_card(link: str) -> Json:
    """What an earlier card of a question posted again shows: where to answer now."""
    return card([text(moved_text(f"[the new message]({link})" if link else "below"))])


def admin_card(result: results.AdminResult) -> Json:
    """The result as an Adaptive Card for the person who asked, within Teams' size limit.

    Whatever a question or a run holds (titles, names, reasons, payloads, history) came
    from outside and is shown as such; so is the summary, which may quote the command.
    """
    summary = md(summary_of(result), MAX_PAYLOAD_CHARS)
    if isinstance(result, results.AdminRefusal):
        return card([text(summary, color="attention")])
    if isinstance(result, results.AdminDone):
        return card([text(summary, color="good")])
    match result:
        case results.HelpShown(usages=usages, admin=admin):
            body = [title("Admin commands"), *([] if admin else [text(NOT_AN_ADMIN)])]
            body += [text(f"`{u.syntax}`\n\n{u.summary}") for u in usages]
            return card(body)
        case results.PendingPage():
            return _pending(result)
        case results.RecordShown():
            return _shown(result)
        case results.StatsShown(stats=stats):
            return card([title("Questions"), _facts(stats_facts(stats))])
        case results.HistoryPage():
            lines = history_lines(result, shown=MAX_HISTORY)
            return card([title("History"), *(text(md(line, 1000)) for line in lines)])
        case results.AuditShown(run_id=run_id, events=events):
            lines = [event_line(e) for e in events[-MAX_EVENTS:]]
            return fit(lambda limits, shown: _audit(run_id, lines, limits, shown), items=len(lines))
        case _:
            assert_never(result)


def _audit(run_id: str, lines: list[str], limits: Limits, shown: int | None) -> Json:
    """The run's events, the latest kept when not all fit."""
    kept = lines if shown is None else lines[len(lines) - shown :]
    body = [title(f"Run {md(run_id, limits.label)}")]
    if len(kept) < len(lines):
        body.append(note(left_out(len(lines) - len(kept), "earlier events", "")))
    return card([*body, *(text(md(line, limits.label + 100)) for line in kept)])


def _pending(page: results.PendingPage) -> Json:
    """As many questions as fit Teams' card size; the cursor goes on from the last shown."""
    if not page.items:
        return card([text("No open questions match.")])
    items: list[Json] = []
    last = None
    for item in page.items:
        entry = _pending_item(page.at, item)
        if size(card([*items, entry])) > MAX_CARD_BYTES - 1000:
            break
        items.append(entry)
        last = item.cursor
    after = last if len(items) < len(page.items) else page.next_after
    body = [title(f"Open questions ({len(items)})"), *items]
    if after is not None:
        body.append(text(f"More: `pending after={after}`", isSubtle=True))
    return card(body)


def _pending_item(at: float, item: results.PendingItem) -> Json:
    q = item.question
    link = message_link(q.message_ref)
    facts = [
        ("Id", q.interrupt_id),
        ("Asked by", item.requester or "?"),
        ("May answer", ", ".join(item.may_answer)),
        ("Age", duration(at - q.issued_at)),
        ("Expires", when(q.expires_at)),
    ]
    return {
        "type": "Container",
        "separator": True,
        "items": [
            text(md(title_of(q.payload, q.name), 200), weight="bolder"),
            _facts(facts),
            *([text(f"[Open the message]({link})")] if link else []),
        ],
    }


def _shown(shown: results.RecordShown) -> Json:
    events = len(shown.history[-MAX_EVENTS:]) + len(shown.deliveries)
    return fit(lambda limits, kept: _shown_within(shown, limits, kept), items=events)


def _shown_within(shown: results.RecordShown, limits: Limits, kept: int | None) -> Json:
    """A question's facts, payload, deliveries and history; when not all fit, the payload is
    shorter and the latest history is kept."""
    record, run = shown.record, shown.run
    facts = [
        ("Status", str(record.status)),
        ("Interaction", record.name),
        ("Run", f"{record.run_id} ({run.status if run else 'unknown'})"),
        ("Asked by", run.requester if run else "?"),
        ("May answer", ", ".join(shown.may_answer)),
        ("Expires", when(record.expires_at)),
    ]
    if record.policy is not None:
        facts += [
            (line.split(": ", 1)[0].capitalize(), line.split(": ", 1)[1])
            for line in policy_lines(record)
        ]
    if run is not None and run.delivery_error:
        facts.append(("Delivery error", run.delivery_error))
    deliveries = [
        f"#{d.delivery_id} {d.kind} {d.state}, {d.attempts} attempts"
        + (f": {d.last_error}" if d.last_error else "")
        for d in shown.deliveries
    ]
    history = [event_line(e) for e in shown.history[-MAX_EVENTS:]]
    if kept is not None:  # deliveries first, then the latest events
        deliveries = deliveries[:kept]
        history = history[len(history) - max(kept - len(deliveries), 0) :]
    left = len(shown.deliveries) + len(shown.history[-MAX_EVENTS:]) - len(deliveries) - len(history)
    raw = json.dumps(payload_json(record.payload), ensure_ascii=False)
    payload = md(raw, min(MAX_PAYLOAD_CHARS, limits.text))
    line = limits.label + 100
    body = [
        title(md(title_of(record.payload, record.name), limits.label)),
        _facts(facts),
        text(payload, fontType="monospace", isSubtle=True),
        text("Deliveries", weight="bolder"),
        *(text(md(entry, line)) for entry in deliveries),
        text("History", weight="bolder"),
        *(text(md(entry, line)) for entry in history),
    ]
    if left:
        body.append(note(left_out(left, "earlier events and deliveries", "")))
    return card(body)


def _facts(facts: list[tuple[str, str]]) -> Json:
    """Facts whose values (names, titles, reasons) came from outside."""
    return {
        "type": "FactSet",
        "facts": [{"title": name, "value": md(value, 300)} for name, value in facts],
    }
