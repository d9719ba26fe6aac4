"""``python -m bot admin …``: the admin commands from the operator's shell.

The operator is trusted as whoever runs the process on the host with the
store's credentials: the actor is ``shell:<os user>``, audited like any
other admin. No RunService runs here, so a cancel spends the token in the
store and the serving process's next sweep resumes the run and delivers the
edits (within ``BOT_SWEEP_SECONDS``).
"""

from __future__ import annotations

import csv
import datetime
import getpass
import json
import sys
import time
from collections.abc import Sequence
from typing import Any, TextIO

from bot.admin import (
    AdminService,
    History,
    UsageError,
    history_filter,
    json_text,
    ok,
    parse,
    text_of,
)
from bot.app.settings import Settings
from bot.contract.answers import decision_of
from bot.service.answering.outcomes import Responder
from bot.stores import AuditEvent, Closed

USAGE = "usage: python -m bot admin [--json] <command> [arguments]  (try: help)"


def shell_responder() -> Responder:
    user = getpass.getuser()
    return Responder(id=f"shell:{user}", name=user, is_admin=True)


async def run_admin(settings: Settings, argv: Sequence[str], *, out: TextIO = sys.stdout) -> int:
    """Run one command; 0 when it did what was asked, 1 when it was refused."""
    words = list(argv)
    as_json = "--json" in words
    words = [w for w in words if w != "--json"]
    if words[:1] == ["export"]:
        return await _export(settings, words[1:], out)
    stores = await settings.store.open()
    try:
        admin = AdminService(
            stores=stores,
            admins=settings.admin.ids,
            max_ttl_seconds=settings.ttl.max_seconds,
            policy=settings.policy.build(admins=settings.admin.ids),
        )
        result = await admin.handle(words, who=shell_responder())
    finally:
        await stores.close()
    if as_json:
        print(json_text(result), file=out)
    else:
        print(text_of(result), file=out)
    return 0 if ok(result) else 1


EXPORT_USAGE = "usage: python -m bot admin export --format csv|jsonl [history filters]"
EXPORT_COLUMNS = (
    "interrupt_id",
    "run_id",
    "name",
    "scope",
    "surface",
    "requester",
    "status",
    "asked_at",
    "closed_at",
    "closed_by",
    "closed_by_id",
    "decision",
    "purged",
)


async def _export(settings: Settings, words: list[str], out: TextIO) -> int:
    """``admin export``: every closed question ``history`` would list, a page at a time, as
    CSV (for a spreadsheet) or JSON lines; times in ISO 8601, UTC. Audited as a command."""
    kind = None
    if words[:1] == ["--format"] and len(words) >= 2:
        kind, words = words[1], words[2:]
    elif words[:1] and words[0].startswith("--format="):
        kind, words = words[0].split("=", 1)[1], words[1:]
    if kind not in ("csv", "jsonl"):
        print(EXPORT_USAGE, file=sys.stderr)
        return 2
    try:
        command = parse(["history", *words])
    except UsageError as error:
        print(f"admin export: {error}", file=sys.stderr)
        return 2
    assert isinstance(command, History)  # "history ..." parses to nothing else
    where = history_filter(command)
    stores = await settings.store.open()
    try:
        who = shell_responder()
        detail = {"command": "export", "format": kind, "filters": " ".join(words)}
        await stores.audit.append(AuditEvent(time.time(), "admin", actor=who.id, detail=detail))
        writer = csv.writer(out) if kind == "csv" else None
        if writer is not None:
            writer.writerow(EXPORT_COLUMNS)
        after = None
        while page := await stores.history.closed(where, after=after, limit=500):
            for item in page:
                row = _exported(item)
                if writer is not None:
                    writer.writerow([row[c] for c in EXPORT_COLUMNS])
                else:
                    out.write(json.dumps(row, ensure_ascii=False) + "\n")
            after = page[-1].cursor
    finally:
        await stores.close()
    return 0


def _exported(item: Closed) -> dict[str, Any]:
    q = item.question
    decision = decision_of(q.answer)
    return {
        "interrupt_id": q.interrupt_id,
        "run_id": q.run_id,
        "name": q.name,
        "scope": q.scope,
        "surface": item.surface,
        "requester": item.requester,
        "status": str(q.status),
        "asked_at": _iso(q.issued_at),
        "closed_at": _iso(q.closed_at),
        "closed_by": q.closed_by,
        "closed_by_id": q.closed_by_id,
        "decision": "" if item.purged or decision is None else decision,
        "purged": item.purged,
    }


def _iso(at: float | None) -> str:
    if at is None:
        return ""
    return datetime.datetime.fromtimestamp(at, tz=datetime.UTC).isoformat()
