"""``/hitl`` admin results as Block Kit: pure functions, no I/O.

Kept inside Block Kit's limits: at most ``MAX_BLOCKS`` blocks (Slack allows
50) and section texts cut under 3,000 characters. A page of ``pending``
longer than fits is shown up to what fits, with the cursor to go on from.
Whatever a question, a request or a person wrote (titles, payloads, ids
typed into a command, delivery errors, audit details) is shown through
``bot.display`` and clipped after, so it stays text.
"""

from __future__ import annotations

import json
from typing import Any, assert_never

from adapters.slack._limits import MESSAGE_TEXT, clip, fit, text_length
from adapters.slack._render import mention
from bot.admin import (
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
from bot.display import display
from bot.service.delivering.messages import NOT_AN_ADMIN, moved_text

Json = dict[str, Any]
MAX_BLOCKS = 45
MAX_SECTION = 2900
MAX_EVENTS = 40
PAGE_TEXT = MESSAGE_TEXT - 500  # room for the header and the cursor


def message_link(ref: dict[str, Any] | None) -> str:
    """A link to a posted message from the reference our surface stored (team, channel, ts)."""
    if not ref or not ref.get("channel") or not ref.get("ts"):
        return ""
    return f"https://slack.com/archives/{ref['channel']}/p{str(ref['ts']).replace('.', '')}"


def moved_message(link: str) -> Json:
    """What an earlier message of a question posted again shows instead of its buttons."""
    text = moved_text(f"<{link}|the new message>" if link else "below")
    return {"text": text, "blocks": [_section(text)]}


def admin_message(result: results.AdminResult) -> Json:
    """``text`` (the notification fallback) and ``blocks`` for an ephemeral reply."""
    summary = _md(summary_of(result))
    if isinstance(result, results.AdminRefusal):
        return {"text": summary, "blocks": [_section(f":no_entry: {summary}")]}
    if isinstance(result, results.AdminDone):
        return {"text": summary, "blocks": [_section(f":white_check_mark: {summary}")]}
    match result:
        case results.HelpShown(usages=usages, admin=admin):
            # A usage's placeholders (``<question-id>``) would read as links unescaped.
            lines = [f"`/hitl {_md(u.syntax)}`\n{_md(u.summary)}" for u in usages]
            if not admin:
                lines.insert(0, NOT_AN_ADMIN)
            return _blocks("Admin commands", [_section(line) for line in lines])
        case results.PendingPage():
            return _pending(result)
        case results.RecordShown():
            return _shown(result)
        case results.StatsShown(stats=stats):
            fields = [f"*{label}*\n{_md(value)}" for label, value in stats_facts(stats)]
            block = {"type": "section", "fields": [_mrkdwn(clip(f, 1900)) for f in fields]}
            return _blocks("Questions", [block])
        case results.AuditShown(run_id=run_id, events=events):
            lines = [clip(_md(event_line(e)), 300) for e in events[-MAX_EVENTS:]]
            return _blocks(f"Run {run_id}", [_section("\n".join(lines) or "No events.")])
        case results.HistoryPage():
            # A block per question, as many as a message holds; the cursor follows the last.
            lines = history_lines(result, shown=MAX_BLOCKS - 3)
            return _blocks("History", [_section(clip(_md(line), 1000)) for line in lines])
        case _:
            assert_never(result)


def _pending(page: results.PendingPage) -> Json:
    if not page.items:
        return {
            "text": "No open questions match.",
            "blocks": [_section("No open questions match.")],
        }
    blocks: list[Json] = []
    shown: list[results.PendingItem] = []
    # A page stops where the message's budget would: the cursor goes on from there.
    for item in page.items[: MAX_BLOCKS - 2]:
        q = item.question
        link = message_link(q.message_ref)
        where = f"<{link}|message>" if link else "not posted yet"
        blocks.append(
            _section(
                f"*{_md(title_of(q.payload, q.name))}*\n"
                f"`{_md(q.interrupt_id)}` · {_md(q.name)} · asked by {_who(item.requester)}"
                f" {duration(page.at - q.issued_at)} ago · expires"
                f" <!date^{int(q.expires_at)}^{{date_short_pretty}} {{time}}"
                f"|in {duration(q.expires_at - page.at)}> · {where}\n"
                f"May answer: {clip(', '.join(_who(w) for w in item.may_answer), 1000)}"
            )
        )
        if shown and text_length(blocks) > PAGE_TEXT:
            blocks.pop()
            break
        shown.append(item)
    after = shown[-1].cursor if len(shown) < len(page.items) else page.next_after
    if after is not None:
        blocks.append(_context(f"More: `/hitl pending after={after}`"))
    return _blocks(f"Open questions ({len(shown)})", blocks)


def _shown(shown: results.RecordShown) -> Json:
    record, run = shown.record, shown.run
    link = message_link(record.message_ref)
    facts = [
        f"*Status:* {record.status}",
        f"*Interaction:* {_md(record.name)} in `{clip(_md(record.scope), 300)}`",
        f"*Run:* `{_md(record.run_id)}` ({run.status if run else 'unknown'})",
        f"*Asked by:* {_who(run.requester) if run else '?'}",
        f"*May answer:* {', '.join(_who(w) for w in shown.may_answer)}",
        f"*Expires:* <!date^{int(record.expires_at)}^{{date_short_pretty}} {{time}}|soon>",
        f"*Message:* {f'<{link}|open>' if link else 'not posted yet'}",
    ]
    if record.policy is not None:
        facts += [clip(_md(line), 500) for line in policy_lines(record)]
    if run is not None and run.delivery_error:
        facts.append(f"*Delivery error:* {clip(_md(run.delivery_error), 500)}")
    deliveries = [
        f"#{d.delivery_id} {d.kind} {d.state}, {d.attempts} attempts"
        + (f": {clip(_md(d.last_error), 200)}" if d.last_error else "")
        for d in shown.deliveries
    ]
    history = [clip(_md(event_line(e)), 300) for e in shown.history[-MAX_EVENTS:]]
    payload = clip(_md(json.dumps(payload_json(record.payload), ensure_ascii=False)), 1500)
    return _blocks(
        title_of(record.payload, record.name),
        [
            _section("\n".join(facts)),
            _section(f"```{payload}```"),
            _section("*Deliveries*\n" + ("\n".join(deliveries) or "none")),
            _section("*History*\n" + ("\n".join(history) or "none")),
        ],
    )


def _blocks(title: str, body: list[Json]) -> Json:
    """``title`` as written (a question's words, perhaps): shown plain in the header,
    escaped in the notification text, which is mrkdwn."""
    shown = display(title, markup="plain")
    header = {"type": "header", "text": {"type": "plain_text", "text": clip(shown, 150)}}
    return {"text": clip(_md(title), 3000), "blocks": fit([header, *body][:MAX_BLOCKS])}


def _section(text: str) -> Json:
    return {"type": "section", "text": _mrkdwn(clip(text, MAX_SECTION))}


def _context(text: str) -> Json:
    return {"type": "context", "elements": [_mrkdwn(clip(text, 3000))]}


def _mrkdwn(text: str) -> Json:
    return {"type": "mrkdwn", "text": text}


def _who(answerer: str) -> str:
    """A Slack person (``slack:T:U``) as Slack mentions them; anyone else by their id, as text."""
    return clip(mention(answerer), 200) if answerer else "?"


def _md(text: object) -> str:
    return display(text, markup="slack")
