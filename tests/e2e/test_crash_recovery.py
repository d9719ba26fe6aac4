"""Durable runs against real processes: SIGKILL at every step, SIGTERM mid-tool, two processes.

The bot runs ``tests.e2e.counting_agent``, which logs every model round and
tool call and can be held at any of them, so each kill lands on a known line.
After each restart we check the journal's promises from the log: no finished
tool call ran twice, an in-flight call ran again with the same idempotency
key, no model round that finished was asked again, and no acknowledged
answer was lost. The waits after a restart are liveness deadlines (a run
left stuck fails them), not speed measurements.
"""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from tests import waiting
from tests.e2e._client import ConsoleClient
from tests.e2e._server import StartBot
from tests.e2e._store import query
from tests.e2e.counting_agent import QUESTION, events

pytestmark = pytest.mark.e2e

LEASE = 3.0
STAGING = {"answers": {QUESTION: "staging"}}
KEYS = "k1:" + "s" * 40
# Where each run of an iteration is when the process is killed: the step it
# is held in, and whether its question was answered before the kill.
KILL_POINTS: dict[str, tuple[str | None, bool]] = {
    "A": ("model:1", False),  # before the first pause: the model is being asked
    "B": ("tool:prepare", False),  # before the first pause: a tool is in flight
    "C": ("model:2", False),  # before the first pause: the tool finished
    "D": (None, True),  # right after an answer is acknowledged
    "E": ("tool:deploy", True),  # while the resume's tool runs
    "F": ("model:4", True),  # the resume's tool finished, the turn has not ended
}
ITERATIONS = 4


def counting_env(folder: Path, **more: str) -> dict[str, str]:
    hold = folder / "hold"
    hold.mkdir(parents=True, exist_ok=True)
    return {
        "BOT_AGENT": "tests.e2e.counting_agent:factory",
        "BOT_LEASE_SECONDS": str(LEASE),
        "BOT_SWEEP_SECONDS": "0.5",
        "BOT_SIGNING_KEYS": KEYS,
        "COUNTING_LOG": str(folder / "steps.jsonl"),
        "COUNTING_HOLD": str(hold),
        **more,
    }


def hold(env: dict[str, str], run: str, step: str) -> Path:
    flag = Path(env["COUNTING_HOLD"]) / f"{run}@{step}"
    flag.touch()
    return flag


def release_all(env: dict[str, str]) -> None:
    for flag in Path(env["COUNTING_HOLD"]).iterdir():
        flag.unlink()


def reached(log: Path, run: str, step: str) -> bool:
    kind, _, detail = step.partition(":")
    for event in events(log):
        if event["run"] != run:
            continue
        if kind == "model" and event["event"] == "model_start" and event["round"] == int(detail):
            return True
        if kind == "tool" and event["event"] == "tool_start" and event["tool"] == detail:
            return True
    return False


async def until(check: Any, *, what: str, seconds: float = 15.0) -> None:
    await waiting.eventually(check, what=what, seconds=seconds)


async def answered_and_held_in_deploy(client: ConsoleClient, env: dict[str, str], run: str) -> Path:
    """``run`` sent in "c1", its question answered, and held once its deploy tool started:
    the step log to read it from."""
    log = Path(env["COUNTING_LOG"])
    hold(env, run, "tool:deploy")
    await client.send("c1", run)
    question = await client.outstanding("c1", "ask_user")
    await client.answer_ok(question["token"], STAGING)
    await until(lambda: reached(log, run, "tool:deploy"), what="deploy started")
    return log


async def stable(client: ConsoleClient, cid: str, *, seconds: float) -> dict[str, Any]:
    """The run's first resting point: an open question, or its final text."""

    def check(feed: dict[str, Any]) -> dict[str, Any] | None:
        run = (feed.get("runs") or [{}])[-1]
        if run.get("final_text"):
            return {"finished": run}
        for question in run.get("questions", []):
            if question["status"] == "outstanding" and question.get("token"):
                return {"question": question}
        return None

    return await client.wait(cid, check, what=f"{cid} resting", seconds=seconds)


def assert_journal_promises(
    log: Path,
    runs: list[str],
    in_flight: dict[str, str],
    killed_anywhere: frozenset[str] | set[str] = frozenset(),
) -> None:
    """Finished steps ran once; in-flight tool calls ran again with their key.

    A run in ``killed_anywhere`` was resuming freely when the kill landed
    (after its answer), so the kill may fall between a model round's reply
    and the write that journals it: round 3's (journaled before its tool
    runs) or round 4's (journaled with the finish). The design re-asks such a
    round (a model call has no side effects), once, in the next process; at
    most one round, since there was one kill. Every other round ran once.
    On a busy machine its resume can also reach the tool before the kill: a
    tool the kill caught running (or done, its result not yet journaled) runs
    again with its key in the next process, as an in-flight one does; at most
    one tool, once.
    """
    seen = events(log)
    for run in runs:
        mine = [e for e in seen if e["run"] == run]
        finished_rounds = Counter(e["round"] for e in mine if e["event"] == "model_end")
        asked_again = [n for n in (3, 4) if finished_rounds[n] == 2]
        if run in killed_anywhere and len(asked_again) == 1:
            (again,) = asked_again
            twice = [e for e in mine if e["event"] == "model_end" and e["round"] == again]
            assert twice[0]["pid"] != twice[1]["pid"], (run, twice)
            finished_rounds[again] = 1
        assert finished_rounds == Counter({1: 1, 2: 1, 3: 1, 4: 1}), (run, finished_rounds)
        caught = 0
        for tool in ("prepare", "deploy"):
            starts = [e for e in mine if e["event"] == "tool_start" and e["tool"] == tool]
            ends = [e for e in mine if e["event"] == "tool_end" and e["tool"] == tool]
            again = in_flight.get(run) == tool
            if run in killed_anywhere and not again and len(starts) == 2:
                again, caught = True, caught + 1
                # The killed process may have finished it: then it ended twice.
                assert len(ends) in (1, 2) and ends[-1]["pid"] == starts[1]["pid"], (run, ends)
            else:
                assert len(ends) == 1, (run, tool, ends)
            assert {e["key"] for e in starts} == {ends[0]["key"]}, (run, tool, starts)
            assert {e["key"] for e in ends} == {ends[0]["key"]}, (run, tool, ends)
            assert len(starts) == (2 if again else 1), (run, tool, starts)
            if again:
                assert starts[0]["pid"] != starts[1]["pid"]  # the killed process, then the new
        assert caught <= 1, (run, "one kill caught more than one tool")


async def test_sigkill_at_every_step_loses_nothing_and_repeats_nothing(
    start_bot: StartBot, http: aiohttp.ClientSession, tmp_path: Path
) -> None:
    """24 kill points (6 steps x 4 restarts): every run finishes, exactly-once where recorded."""
    env = counting_env(tmp_path / "counting")
    server = await start_bot(**env)
    client = ConsoleClient(http, server.url)
    log = Path(env["COUNTING_LOG"])
    all_runs: list[str] = []
    in_flight: dict[str, str] = {}
    killed_anywhere: set[str] = set()
    kill_points = 0
    for iteration in range(ITERATIONS):
        names = {letter: f"r{iteration}{letter.lower()}" for letter in KILL_POINTS}
        for letter, (step, _) in KILL_POINTS.items():
            if step is not None:
                hold(env, names[letter], step)
            await client.send(f"c{names[letter]}", names[letter])
        for letter, (step, answered) in KILL_POINTS.items():
            if answered and step is not None:
                question = await client.outstanding(f"c{names[letter]}", "ask_user")
                await client.answer_ok(question["token"], STAGING)
        for letter, (step, _) in KILL_POINTS.items():
            if step is not None:
                run = names[letter]
                await until(lambda r=run, s=step: reached(log, r, s), what=f"{run} at {step}")
        question = await client.outstanding(f"c{names['D']}", "ask_user")
        await client.answer_ok(question["token"], STAGING)
        server.kill()  # right after D's answer was acknowledged
        kill_points += len(KILL_POINTS)
        in_flight |= {names["B"]: "prepare", names["E"]: "deploy"}
        killed_anywhere.add(names["D"])
        release_all(env)
        await server.restart()
        for letter, name in names.items():
            rest = await stable(client, f"c{name}", seconds=2 * LEASE)
            if "question" in rest:
                assert not KILL_POINTS[letter][1], (name, "answered before the kill, asked again")
                await client.answer_ok(rest["question"]["token"], STAGING)
        for name in names.values():
            run = await client.finished(f"c{name}")
            assert run["final_text"] == "done staging", run
        all_runs += names.values()
    assert kill_points >= 20
    assert_journal_promises(log, all_runs, in_flight, killed_anywhere)


async def test_an_edit_killed_in_its_resume_deploys_the_edited_environment_once(
    start_bot: StartBot, http: aiohttp.ClientSession, tmp_path: Path
) -> None:
    """Approved with changes, then SIGKILL while the resume is held in its model round:
    the next process resumes the run with the edited arguments, and deploy runs once, there."""
    env = counting_env(tmp_path / "counting", BOT_ALLOW="approval=approve,reject,edit")
    server = await start_bot(**env)
    client = ConsoleClient(http, server.url)
    log = Path(env["COUNTING_LOG"])
    run = "approve-edit"
    hold(env, run, "model:3")
    await client.send("c-edit", run)
    question = await client.outstanding("c-edit", "approval")
    edited = {"decision": "edit", "arguments": {"environment": "production"}, "comment": ""}
    await client.answer_ok(question["token"], edited)
    await until(lambda: reached(log, run, "model:3"), what="the resume in its model round")
    first_pid = next(e["pid"] for e in events(log) if e["run"] == run)
    server.kill()
    release_all(env)
    await server.restart()
    finished = await client.finished("c-edit")
    assert finished["final_text"] == "done production", finished
    mine = [e for e in events(log) if e["run"] == run]
    deploys = [e for e in mine if e["event"] == "tool_start" and e["tool"] == "deploy"]
    assert [e["pid"] != first_pid for e in deploys] == [True]  # once, by the next process
    rounds = Counter(e["round"] for e in mine if e["event"] == "model_end")
    assert rounds == Counter({1: 1, 2: 1, 3: 1, 4: 1}), rounds  # the held round ended once


async def test_a_tool_longer_than_the_lease_runs_once(
    start_bot: StartBot, http: aiohttp.ClientSession, tmp_path: Path
) -> None:
    """With a 2 s lease a 6 s tool runs exactly once: the heartbeat keeps the run ours."""
    env = counting_env(tmp_path / "counting", BOT_LEASE_SECONDS="2")
    server = await start_bot(**env)
    client = ConsoleClient(http, server.url)
    log = Path(env["COUNTING_LOG"])
    flag = hold(env, "slow", "tool:prepare")
    await client.send("c1", "slow")
    await until(lambda: reached(log, "slow", "tool:prepare"), what="prepare started")
    began = time.time()

    def leases() -> list[tuple[object, ...]]:
        return query(server, "SELECT lease_owner, lease_until FROM runs WHERE status = 'running'")

    # Three leases long, with recovery sweeping every second: the heartbeat has
    # carried the lease past the third lapse, and it never changed hands.
    ((owner, _),) = leases()
    await until(
        lambda: [(o, float(str(u)) > began + 4 * 2.0) for o, u in leases()] == [(owner, True)],
        what="the lease renewed for three leases and more",
        seconds=30,
    )
    flag.unlink()
    await client.outstanding("c1", "ask_user")
    starts = [e for e in events(log) if e["event"] == "tool_start"]
    assert [(e["tool"], e["pid"]) for e in starts] == [("prepare", starts[0]["pid"])]
    assert server.running


async def test_sigterm_mid_tool_releases_the_run_to_the_next_start(
    start_bot: StartBot, http: aiohttp.ClientSession, tmp_path: Path
) -> None:
    """A drain cut short hands the run back at once: the next start finishes it in seconds."""
    env = counting_env(
        tmp_path / "counting", BOT_LEASE_SECONDS="60", BOT_SHUTDOWN_GRACE_SECONDS="1"
    )
    server = await start_bot(**env)
    client = ConsoleClient(http, server.url)
    log = await answered_and_held_in_deploy(client, env, "long")
    assert await server.terminate(within=15) == 0
    release_all(env)
    await server.restart()
    # Far inside the 60 s lease: the drain released it rather than letting it lapse.
    run = await client.finished("c1", seconds=10)
    assert run["final_text"] == "done staging"
    deploys = [e for e in events(log) if e["event"] == "tool_start" and e["tool"] == "deploy"]
    assert len(deploys) == 2 and deploys[0]["key"] == deploys[1]["key"]


async def test_two_processes_on_one_file_take_over_once(
    start_bot: StartBot, http: aiohttp.ClientSession, tmp_path: Path
) -> None:
    """Kill the process resuming a run: the other takes it over once, after the lease lapses."""
    env = counting_env(
        tmp_path / "counting", DATABASE_URL=f"sqlite:///{tmp_path / 'shared.sqlite3'}"
    )
    first = await start_bot(**env)
    second = await start_bot(**env)
    client = ConsoleClient(http, first.url)
    log = await answered_and_held_in_deploy(client, env, "shared")
    first.kill()
    release_all(env)
    run = await ConsoleClient(http, second.url).finished("c1", seconds=4 * LEASE)
    assert run["final_text"] == "done staging"
    deploys = [e for e in events(log) if e["event"] == "tool_start" and e["tool"] == "deploy"]
    assert [e["pid"] for e in deploys] == [first.process.pid, second.process.pid]  # type: ignore[union-attr]
    assert len({e["key"] for e in deploys}) == 1
    assert_journal_promises(log, ["shared"], {"shared": "deploy"})
