"""`python -m bot admin purge --before DATE` in a real process, on SQLite and PostgreSQL: a
purged question keeps its outcome and loses its content, and the audit still verifies."""

from __future__ import annotations

import csv
import io
import json
import sqlite3
from pathlib import Path

import asyncpg

from bot.contract.answers import OtherAnswer
from bot.contract.payloads import payload_of
from bot.questions.records import Question, QuestionStatus, RunRecord, RunStatus
from bot.questions.write import Delivered
from bot.stores import AuditEvent, Closing, open_stores
from tests.audit.test_audit_cli import bot, store_url  # noqa: F401 - the fixture
from tests.support import steps

WORDS = ("secret-falcon", "purple-otter", "ship it tonight")


def asked(n: int, closed_at: float | None) -> tuple[RunRecord, Question]:
    run = RunRecord(
        run_id=f"run-{n}",
        scope="T1:C1",
        surface="slack",
        requester="slack:T1:U1",
        text=f"deploy secret-falcon {n}",
        created_at=1.0,
        conversation={"key": f"k{n}"},
    )
    question = Question(
        interrupt_id=f"q{n}",
        run_id=run.run_id,
        scope="T1:C1",
        name="ask_user",
        tool_call_id=f"call-{n}",
        checkpoint_id=f"run-{n}:1",
        payload=payload_of("ask_user", {"question": "Deploy the secret-falcon build?"}),
        issued_at=1000.0 + n,
        expires_at=4e9,
    )
    return run, question


async def rows_text(url: str) -> str:
    """Every row of the tables that hold content, as text."""
    tables = ("pauses", "votes", "outbox", "audit", "runs", "checkpoints", "journal")
    if url.startswith("sqlite"):
        with sqlite3.connect(url.removeprefix("sqlite:///")) as conn:
            return "\n".join(
                str(row)
                for table in tables
                for row in conn.execute(f"SELECT * FROM {table}")  # noqa: S608 - our own names
            )
    conn = await asyncpg.connect(url)
    try:
        lines = []
        for table in tables:
            lines += [row[0] for row in await conn.fetch(f"SELECT t::text FROM {table} AS t")]  # noqa: S608 - our own names
        return "\n".join(lines)
    finally:
        await conn.close()


async def test_a_purged_question_keeps_its_outcome_and_the_chain_verifies(
    tmp_path: Path,
    store_url: str,  # noqa: F811 - the fixture
) -> None:
    """Closed in 1970 and purged: status, times and who decided stay; none of its words do;
    a question still open is untouched; the audit, signed before, still verifies."""
    stores = await open_stores(store_url)
    try:
        for n in (1, 2):
            run, question = asked(n, None)
            await steps(stores).start(run)
            await steps(stores).issue(question)
            await stores.audit.append(
                AuditEvent(1001.0, "note", run.run_id, question.interrupt_id, "x", {"w": WORDS[2]})
            )
        answer = {"answers": {"Deploy the secret-falcon build?": "yes"}, "comment": "purple-otter"}
        closing = Closing(
            QuestionStatus.ANSWERED,
            by="Alice",
            at=1500.0,
            answer=OtherAnswer(answer),
            by_id="slack:T1:U2",
        )
        assert await steps(stores).spend("q1", closing)
        assert await steps(stores).finish(
            "run-1", RunStatus.COMPLETED, at=1600.0, text="shipped secret-falcon"
        )
        # Its posts and its outcome reached the person long ago.
        owed = await stores.outbox.of_run("run-1")
        await steps(stores).delivered_all([Delivered(row.delivery_id, 1601.0) for row in owed])
    finally:
        await stores.close()
    assert (await bot(tmp_path, "audit", "checkpoint", url=store_url))[0] == 0

    code, out, err = await bot(tmp_path, "admin", "purge", "--before", "2000-01-01", url=store_url)
    assert (code, err) == (0, "")
    assert out.startswith("Purged 1 question closed before 2000-01-01 (UTC)")

    code, out, _ = await bot(tmp_path, "admin", "--json", "show", "q1", url=store_url)
    shown = json.loads(out)["record"]
    assert (shown["status"], shown["closed_by"], shown["closed_by_id"], shown["closed_at"]) == (
        "answered",
        "Alice",
        "slack:T1:U2",
        1500.0,
    )
    assert shown["payload"] == {} and shown["answer"] == {}
    code, out, _ = await bot(tmp_path, "admin", "history", url=store_url)
    assert code == 0
    assert out.splitlines()[:3] == [
        "q1  (purged)",
        "    answered by Alice (slack:T1:U2) at 1970-01-01 00:25 UTC",
        "    ask_user in T1:C1 on slack; asked by slack:T1:U1",
    ]
    code, out, _ = await bot(tmp_path, "admin", "export", "--format", "csv", url=store_url)
    assert code == 0
    header, row = list(csv.reader(io.StringIO(out)))
    exported = dict(zip(header, row, strict=True))
    assert {k: exported[k] for k in ("interrupt_id", "status", "closed_by_id", "purged")} == {
        "interrupt_id": "q1",
        "status": "answered",
        "closed_by_id": "slack:T1:U2",
        "purged": "True",
    }
    code, out, _ = await bot(tmp_path, "admin", "export", "--format=jsonl", url=store_url)
    assert [json.loads(line)["closed_at"] for line in out.splitlines()] == [
        "1970-01-01T00:25:00+00:00"
    ]
    text = await rows_text(store_url)
    # The open question keeps its words; the purged one and its ended run have none left.
    assert text.count("secret-falcon") == 2, text  # q2's payload and run-2's text
    assert "purple-otter" not in text and "shipped" not in text
    code, out, _ = await bot(tmp_path, "audit", "verify", "--store", url=store_url)
    assert (code, out) == (0, f"{out.split()[0]} events, 1 checkpoints, intact\n")
    code, out, _ = await bot(tmp_path, "audit", "export", "--question", "q1", url=store_url)
    purged = [json.loads(line) for line in out.splitlines() if '"purged"' in line]
    assert purged and all(line["detail"] is None for line in purged)
