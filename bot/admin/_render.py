"""Admin results as text (the shell) and JSON (``--json``, the console API).

Pure functions, no I/O. The one-line ``summary_of`` is shared by every
surface so a refusal reads the same in Slack, Teams, the console and a shell.

A payload, a name or a reason is an agent's or a person's text, and a terminal
obeys more than a page does: an ESC starts a sequence that can recolour, move
the cursor or rewrite the title, a U+202E turns a line around. ``text_of``
is shown through ``bot.display`` (plain: every control as ``⟨U+001B⟩``), and
``json_text`` writes those characters as JSON escapes, so a script reading
``--json`` still gets the exact data.
"""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Any, assert_never

from bot.admin import results
from bot.contract.answers import ApprovalDecision, answer_json, decision_of
from bot.contract.payloads import (
    ApprovalPayload,
    AskUserPayload,
    FormToolPayload,
    OtherPayload,
    Payload,
    payload_json,
)
from bot.display import display, has_hidden, visible
from bot.questions.quorum import filled, shown, stored_tally_json, tally_shown
from bot.questions.records import AuditEvent, DeliveryState, OutboxRow, Question, QuestionStats
from bot.service.delivering.messages import (
    ADMINS_ONLY,
    NOT_AN_ADMIN,
    already_done,
    cancelled_by_admin,
    extend_too_far,
    extended_question,
    purged_questions,
    question_not_open,
    resent_question,
    when,
)
from bot.stores.ports import Closed

MAX_TITLE = 80
# A ⟨U+XXXX⟩ marker that a clip would cut: from its opening bracket to the end.
_CUT_MARKER = re.compile(r"⟨(U(\+[0-9A-F]{0,6})?)?$")
# json.dumps escapes only C0 controls; DEL, C1 (a CSI is U+009B) and format characters
# pass. Each character outside printable ASCII is looked at; ordinary letters stay.
_MAYBE_HIDDEN = re.compile(r"[^\x20-\x7e]")


def ok(result: results.AdminResult) -> bool:
    return not isinstance(result, results.AdminRefusal)


def summary_of(result: results.AdminResult) -> str:
    """One sentence for a refusal or an action; empty for a listing."""
    match result:
        case results.AdminsOnly():
            return ADMINS_ONLY
        case results.CommandInvalid(text=text) | results.UnknownId(text=text):
            return text
        case results.NotOpen(interrupt_id=interrupt_id, status=status):
            return question_not_open(interrupt_id, status)
        case results.TooLong(latest=latest):
            return extend_too_far(latest)
        case results.CancelDone(interrupt_id=interrupt_id, by=by):
            return cancelled_by_admin(interrupt_id, by)
        case results.Resent(interrupt_id=interrupt_id):
            return resent_question(interrupt_id)
        case results.Extended(interrupt_id=interrupt_id, expires_at=expires_at):
            return extended_question(interrupt_id, expires_at)
        case results.AlreadyDone(command=command, interrupt_id=interrupt_id):
            return already_done(command, interrupt_id)
        case results.Purged(before=before, count=count):
            return purged_questions(count, before)
        case (
            results.HelpShown()
            | results.PendingPage()
            | results.RecordShown()
            | results.StatsShown()
            | results.AuditShown()
            | results.HistoryPage()
        ):
            return ""
        case _:
            assert_never(result)


def title_of(payload: Payload, name: str) -> str:
    """A question's first words, for a list line: shown, then clipped, so the limit
    holds for what is read and never cuts a ``⟨U+XXXX⟩`` in half."""
    match payload:
        case AskUserPayload(questions=questions):
            text = questions[0].question
        case ApprovalPayload(summary=summary):
            text = summary
        case FormToolPayload(title=title):
            text = title
        case OtherPayload(values=values):
            # A deployment's own interaction: the first of the fields that usually say it.
            said = (values.get(key) for key in ("question", "summary", "action", "title"))
            text = str(next((value for value in said if value), ""))
        case _:
            assert_never(payload)
    text = " ".join(visible(text).split()) or visible(name)
    if len(text) <= MAX_TITLE:
        return text
    return _CUT_MARKER.sub("", text[: MAX_TITLE - 1]) + "…"


def duration(seconds: float) -> str:
    """``3d 4h``, ``2h 5m``, ``40s``: two units at most."""
    seconds = max(0, int(seconds))
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    parts = [(days, "d"), (hours, "h"), (minutes, "m"), (secs, "s")]
    shown = [f"{n}{unit}" for n, unit in parts if n][:2]
    return " ".join(shown) or "0s"


def stats_facts(stats: QuestionStats) -> list[tuple[str, str]]:
    """``stats`` as (label, value) facts, in the order a card or a message lists them."""
    p50 = duration(stats.answer_seconds_p50) if stats.answer_seconds_p50 is not None else "-"
    p90 = duration(stats.answer_seconds_p90) if stats.answer_seconds_p90 is not None else "-"
    refusals = ", ".join(f"{k} {v}" for k, v in sorted(stats.refusals.items())) or "none"
    return [
        ("Issued", str(stats.issued)),
        ("Open", str(stats.outstanding)),
        ("Answered", str(stats.answered)),
        ("Expired", str(stats.expired)),
        ("Cancelled", str(stats.cancelled)),
        ("Refusals", refusals),
        ("Time to answer", f"median {p50}, p90 {p90}"),
        ("Deliveries", f"{stats.deliveries_failed} failed, {stats.deliveries_retrying} retrying"),
        ("Escalations", str(stats.escalations)),
    ]


def link_of(ref: dict[str, Any] | None) -> str:
    """Where the question was posted, readable: a link when the surface's ids make one."""
    if not ref:
        return "not posted yet"
    for key in ("permalink", "url", "link"):
        if isinstance(ref.get(key), str):
            return str(ref[key])
    if ref.get("channel") and ref.get("ts"):
        # Slack's own permalink form: the channel, then the ts without its dot.
        ts = str(ref["ts"]).replace(".", "")
        return f"Slack https://slack.com/archives/{ref['channel']}/p{ts}"
    if ref.get("conversation_id") and ref.get("activity_id"):
        return (
            "Teams https://teams.microsoft.com/l/message/"
            f"{ref['conversation_id']}/{ref['activity_id']}"
        )
    if set(ref) == {"conversation"}:
        return f"console conversation {ref['conversation']}"
    return ", ".join(f"{key} {value}" for key, value in sorted(ref.items()))


def delivery_line(delivery: OutboxRow) -> str:
    """One outbox row: what it owes and how it went (``attempts`` counts the failed tries)."""
    tries = delivery.attempts
    match delivery.state:
        case DeliveryState.DONE:
            state = "delivered" + (f" after {tries} failed tries" if tries else "")
        case DeliveryState.FAILED:
            state = f"failed after {tries} tries"
        case _:
            state = "pending" + (f", {tries} failed tries so far" if tries else "")
    error = f"; last error: {delivery.last_error}" if delivery.last_error else ""
    return f"#{delivery.delivery_id} {delivery.kind} to {delivery.surface}: {state}{error}"


def text_of(result: results.AdminResult) -> str:
    """Plain text for a terminal, every control in it shown (``⟨U+001B⟩``), none obeyed."""
    return display(_lines_of(result), markup="plain")


def json_text(result: results.AdminResult) -> str:
    """``json_of`` as one line of JSON whose invisible and control characters are escapes.

    Readable names stay as written (``ensure_ascii=False``); only what a terminal
    would obey or hide becomes ``\\u202e``, which every JSON reader turns back.
    """
    raw = json.dumps(json_of(result), ensure_ascii=False, default=str)
    return _MAYBE_HIDDEN.sub(_escaped, raw)


def _escaped(match: re.Match[str]) -> str:
    char = match.group()
    # ensure_ascii writes one \uXXXX (or a surrogate pair beyond the BMP).
    return json.dumps(char)[1:-1] if has_hidden(char) else char


def _lines_of(result: results.AdminResult) -> str:
    summary = summary_of(result)
    if summary:
        return summary
    match result:
        case results.HelpShown(usages=usages, admin=admin):
            lines = [f"{u.syntax}\n    {u.summary}" for u in usages]
            return "\n".join(lines if admin else [NOT_AN_ADMIN, *lines])
        case results.PendingPage(at=at, items=items, next_after=next_after):
            if not items:
                return "No open questions match."
            lines = []
            for item in items:
                q = item.question
                lines.append(
                    f"{q.interrupt_id}  {title_of(q.payload, q.name)}\n"
                    f"    {q.name} in {q.scope}; asked by {item.requester or '?'}"
                    f" {duration(at - q.issued_at)} ago; expires in"
                    f" {duration(q.expires_at - at)} ({when(q.expires_at)})\n"
                    f"    may answer: {', '.join(item.may_answer)}\n"
                    f"    message: {link_of(q.message_ref)}"
                )
            if next_after is not None:
                lines.append(f"more: pending after={next_after}")
            return "\n".join(lines)
        case results.RecordShown(record=record, run=run, history=history, deliveries=deliveries):
            lines = [
                f"{record.interrupt_id}  {record.status}  ({record.name} in {record.scope})",
                f"run: {record.run_id} ({run.status if run else 'unknown'})"
                f" asked by {run.requester if run else '?'}",
                f"issued {when(record.issued_at)}, expires {when(record.expires_at)}",
                f"may answer: {', '.join(result.may_answer)}",
                f"message: {link_of(record.message_ref)}",
                f"payload: {json.dumps(payload_json(record.payload), ensure_ascii=False)}",
            ]
            if record.policy is not None:
                lines += policy_lines(record)
            if record.closed_at is not None:
                lines.append(closed_line(record))
            lines += answer_lines(record)
            if run is not None and run.delivery_error:
                lines.append(f"delivery error: {run.delivery_error}")
            lines.append("deliveries:")
            lines += [f"  {delivery_line(d)}" for d in deliveries] or ["  none"]
            lines.append("history:")
            lines += [f"  {event_line(e)}" for e in history]
            return "\n".join(lines)
        case results.StatsShown(stats=s):
            refusals = ", ".join(f"{k} {v}" for k, v in sorted(s.refusals.items())) or "none"
            p50 = duration(s.answer_seconds_p50) if s.answer_seconds_p50 is not None else "-"
            p90 = duration(s.answer_seconds_p90) if s.answer_seconds_p90 is not None else "-"
            return "\n".join(
                (
                    f"issued {s.issued}: open {s.outstanding}, answered {s.answered},"
                    f" expired {s.expired}, cancelled {s.cancelled}",
                    f"refusals: {refusals}",
                    f"time to answer: median {p50}, p90 {p90}",
                    f"deliveries: {s.deliveries_failed} failed, {s.deliveries_retrying} retrying",
                    f"escalations: {s.escalations}",
                )
            )
        case results.AuditShown(run_id=run_id, events=events):
            return "\n".join([f"run {run_id}:", *(f"  {event_line(e)}" for e in events)])
        case results.HistoryPage():
            return "\n".join(history_lines(result))
        case _:
            return summary


def history_lines(page: results.HistoryPage, *, shown: int | None = None) -> list[str]:
    """One entry per closed question (the first ``shown``), then where the next page starts.

    A purged question shows its outcome and who decided, and ``(purged)`` for its words.
    """
    items = page.items if shown is None else page.items[:shown]
    if not items:
        return ["No closed questions match."]
    lines = []
    for item in items:
        q = item.question
        words = "(purged)" if item.purged else title_of(q.payload, q.name)
        decision = decision_of(q.answer)
        decided = f"; decision: {decision}" if decision and not item.purged else ""
        lines.append(
            f"{q.interrupt_id}  {words}\n    {closed_line(q)}\n"
            f"    {q.name} in {q.scope} on {item.surface or '?'}; asked by"
            f" {item.requester or '?'}{decided}"
        )
    more = page.next_after if len(items) == len(page.items) else items[-1].cursor
    if more is not None:
        lines.append(f"more: history after={more}")
    return lines


def closed_line(record: Question) -> str:
    """How it ended, by whom as shown and as authenticated, and a cancel's reason."""
    at = when(record.closed_at or 0.0)
    name, actor = record.closed_by, record.closed_by_id
    who = f"{name} ({actor})" if name and actor and name != actor else (name or actor)
    line = f"{record.status} by {who} at {at}" if who else f"{record.status} at {at}"
    reason = record.cancel_reason
    return f"{line}; reason: {reason}" if reason else line


def answer_lines(record: Question) -> list[str]:
    """An approval answered with changes (the original and the edited arguments), or in the
    action's place (the message); nothing for any other answer."""
    match record.answer:
        case ApprovalDecision(decision="edit", arguments=edited, original_arguments=original):
            return [
                f"approved with changes: {json.dumps(edited, ensure_ascii=False)}",
                f"original arguments: {json.dumps(original, ensure_ascii=False)}",
            ]
        case ApprovalDecision(decision="respond", message=message):
            return [f"answered instead of run: {json.dumps(message, ensure_ascii=False)}"]
        case _:
            return []


def policy_lines(record: Question) -> list[str]:
    """A question's policy as in force, its tally and its escalation level."""
    tally = tally_shown(record)
    return [
        f"policy: {json.dumps(shown(record), ensure_ascii=False, sort_keys=True)}",
        f"tally: approve {', '.join(tally['approve']) or 'none'};"
        f" reject {', '.join(tally['reject']) or 'none'}",
        f"level: {record.level}, reminders sent: {record.reminders}",
    ] + [
        # A question on several routes: each further post, and whether it stands.
        f"also posted on {p.route}: {'posted' if p.message_ref else 'not posted'}"
        for p in record.posts
    ]


def event_line(event: AuditEvent) -> str:
    detail = json.dumps(event.detail, ensure_ascii=False, sort_keys=True) if event.detail else ""
    target = f" {event.interrupt_id}" if event.interrupt_id else ""
    # The bridge's own steps (paused, expired) have no actor: no "by".
    actor = f" by {event.actor}" if event.actor else ""
    return f"{when(event.at)} {event.kind}{target}{actor} {detail}".rstrip()


def json_of(result: results.AdminResult) -> dict[str, Any]:
    """The result as JSON data: ``ok``, ``kind``, ``message`` and its fields."""
    fields = dataclasses.asdict(result)
    if isinstance(result, results.PendingPage):
        fields["items"] = [_listed(item) for item in result.items]
    if isinstance(result, results.RecordShown):
        fields["record"] = question_json(result.record)
    if isinstance(result, results.HistoryPage):
        fields["items"] = [_closed(item) for item in result.items]
    return {
        "ok": ok(result),
        "kind": results.kind_of(result),
        "message": summary_of(result),
        **fields,
    }


def question_json(question: Question) -> dict[str, Any]:
    """A question's fields as JSON data, its typed contents as the JSON its row holds."""
    fields = dataclasses.asdict(question)
    fields["payload"] = payload_json(question.payload)
    fields["answer"] = answer_json(question.answer)
    fields["policy"] = filled(question.policy)
    fields["tally"] = stored_tally_json(question.tally)
    return fields


def _listed(item: results.PendingItem) -> dict[str, Any]:
    """A ``pending`` item as scripts and the console's panel read it: the listing's facts
    of the question together under ``question``, as they have always been."""
    q = item.question
    listed = {
        **{name: getattr(q, name) for name in _LISTED},
        "payload": payload_json(q.payload),
        "requester": item.requester,
        "surface": item.surface,
        "message_ref": q.message_ref,
        "cursor": item.cursor,
    }
    return {"question": listed, "may_answer": item.may_answer}


def _closed(item: Closed) -> dict[str, Any]:
    """A ``history`` item: the question as its row holds it, who asked it and where, and
    the facts a list line shows (its first words, an approval's decision), as the text's
    lines say them; a purged question has neither."""
    q = item.question
    decision = decision_of(q.answer)
    return {
        "question": question_json(q),
        "requester": item.requester,
        "surface": item.surface,
        "purged": item.purged,
        "cursor": item.cursor,
        "title": "" if item.purged else title_of(q.payload, q.name),
        "decision": decision if decision is not None and not item.purged else "",
    }


# The fields of a question a ``pending`` item shows, in their order.
_LISTED = ("interrupt_id", "run_id", "scope", "name", "payload", "issued_at", "expires_at")
