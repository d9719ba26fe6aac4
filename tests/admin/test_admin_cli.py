"""``python -m bot admin`` as a real subprocess against the serving process's SQLite file."""

from __future__ import annotations

import dataclasses
import getpass
import json
import os
from pathlib import Path
from typing import Any

from bot.contract.answers import CancelReason
from bot.contract.payloads import payload_of
from bot.human import ASK_USER
from bot.questions.records import ApiRequest
from bot.stores import Question, QuestionStatus, RunRecord, RunStatus, Stores, open_stores
from bot.testing import call, calls, question, say
from tests.support import HarnessFactory, run_bot, steps

ASK = call(ASK_USER, questions=[question("Which environment?", "staging", "production")])
ROOT = Path(__file__).resolve().parents[2]


def admin_cli(db_path: Path, *words: str) -> tuple[int, str]:
    env = {
        "PATH": os.environ.get("PATH", ""),
        "DATABASE_URL": f"sqlite:///{db_path}",
        "BOT_DATA_DIR": str(db_path.parent),
        "PYTHONPATH": str(ROOT),
    }
    done = run_bot("admin", *words, cwd=db_path.parent, env=env)  # that cwd: no stray .env
    assert done.stderr == "", done.stderr
    return done.returncode, done.stdout


def as_json(out: str) -> Any:
    return json.loads(out)


async def test_the_shell_lists_shows_and_cancels_and_the_server_resumes_the_run(
    harness: HarnessFactory, db_path: Path
) -> None:
    """The CLI's cancel is audited as shell:<user>; the next recovery resumes with its reason."""
    stores = await open_stores(f"sqlite:///{db_path}")
    h = harness(stores, [calls(ASK), say("understood, stopping")])
    run_id = await h.start()
    interrupt_id = h.surface.questions[-1][1].interrupt_id

    code, out = admin_cli(db_path, "--json", "pending")
    assert code == 0
    page = as_json(out)
    assert [i["question"]["interrupt_id"] for i in page["items"]] == [interrupt_id]
    # The shape scripts read: the listing's facts of each question under "question".
    (item,) = page["items"]
    assert list(item) == ["question", "may_answer"]
    assert list(item["question"]) == [
        "interrupt_id",
        "run_id",
        "scope",
        "name",
        "payload",
        "issued_at",
        "expires_at",
        "requester",
        "surface",
        "message_ref",
        "cursor",
    ]
    assert (item["question"]["surface"], item["question"]["cursor"]) == ("test", "1")
    code, out = admin_cli(db_path, "show", interrupt_id)
    assert code == 0 and "Which environment?" in out and "outstanding" in out

    code, out = admin_cli(db_path, "pending")
    # The message reference reads as words, not as raw JSON.
    assert code == 0 and "    message: message m1, surface test" in out

    code, out = admin_cli(db_path, "cancel", interrupt_id, "change", "freeze")
    assert code == 0, out
    actor = f"shell:{getpass.getuser()}"
    # The same actor the audit records.
    assert f"as {actor};" in out
    row = await stores.ledger.get(interrupt_id)
    assert row is not None and row.status is QuestionStatus.CANCELLED
    assert (row.closed_by_id, row.answer) == (actor, CancelReason("change freeze"))
    run = await stores.runs.get(run_id)
    assert run is not None and run.status is RunStatus.RUNNING and run.lease_owner == ""

    # The serving process picks the run up on its next sweep, as after a crash.
    assert await h.service.recover() == 1
    await h.service.wait_idle()
    observation = json.loads(next(m for m in h.provider.calls[-1] if m.role == "tool").content)
    assert observation["cancelled_by"]["id"] == actor
    assert observation["reason"] == "change freeze"
    assert [r.interrupt_id for r in h.surface.closed] == [interrupt_id]

    code, out = admin_cli(db_path, "--json", "audit", run_id)
    events = as_json(out)["events"]
    assert code == 0
    assert any(e["kind"] == "admin" and e["actor"] == actor for e in events)
    code, out = admin_cli(db_path, "cancel", interrupt_id)
    assert code == 1 and "not open" in out
    code, out = admin_cli(db_path, "--json", "stats")
    assert code == 0 and as_json(out)["stats"]["cancelled"] == 1
    code, out = admin_cli(db_path, "frobnicate")
    assert code == 1 and "help" in out
    await stores.close()


async def test_pending_and_show_say_who_may_answer_an_api_question_as_the_check_decides(
    sqlite_stores: Stores, db_path: Path
) -> None:
    """A `/v1` question asked of anyone, and one naming its answerers, list those (not the
    API key's name) under may_answer, in `--json pending`, `pending` and `show`."""
    run = RunRecord(
        "run_api_1",
        "console",
        "console",
        "api:door",
        "Deploy?",
        100.0,
        conversation={"key": "agents"},
        status=RunStatus.REMOTE,
    )
    for number, answerers in ((1, ("anyone",)), (2, ("console:bo", "console:cy"))):
        asked = Question(
            f"int_{number}",
            f"run_api_{number}",
            "console",
            "approval",
            f"api_{number}",
            "",
            payload_of("approval", {"action": "deploy", "summary": "Deploy?"}),
            100.0 + number,
            4.0e9,
            answerers=answerers,
        )
        request = ApiRequest(
            asked.interrupt_id,
            "door",
            f"key-{number}",
            "hash",
            "approval",
            100.0,
            key_id="key_door",
        )
        one = dataclasses.replace(run, run_id=asked.run_id)
        assert await steps(sqlite_stores).lifecycle.ask_remote(one, asked, request) is not None

    code, out = admin_cli(db_path, "--json", "pending")
    assert code == 0, out
    listed = {i["question"]["interrupt_id"]: i["may_answer"] for i in as_json(out)["items"]}
    assert listed == {
        "int_1": ["anyone in console"],
        "int_2": ["console:bo", "console:cy", "admins"],
    }
    code, out = admin_cli(db_path, "pending")
    assert code == 0 and "may answer: console:bo, console:cy, admins" in out
    code, out = admin_cli(db_path, "--json", "show", "int_1")
    assert code == 0 and as_json(out)["may_answer"] == ["anyone in console"]
    code, out = admin_cli(db_path, "show", "int_2")
    assert code == 0 and "may answer: console:bo, console:cy, admins" in out
