"""Whole-process behaviour: crashes, races, expiry, shutdown, garbage input, logs."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from tests.e2e._client import (
    APPROVE,
    DEPLOY_REPORT,
    NO_DECISION,
    OPERATOR,
    STAGING,
    ConsoleClient,
)
from tests.e2e._server import ROOT, BotServer, StartBot, json_lines

pytestmark = pytest.mark.e2e

SHORT_TTL = {"BOT_TTL_SECONDS": "2", "BOT_SWEEP_SECONDS": "0.3"}


async def deploy_asked(
    start_bot: StartBot, http: aiohttp.ClientSession, **env: str
) -> tuple[BotServer, ConsoleClient, dict[str, Any]]:
    """A bot started with ``env`` and asked to deploy web in "ops": the server, a console
    client of it, and the question the run asked first."""
    server = await start_bot(**env)
    api = ConsoleClient(http, server.url)
    return server, api, await api.asked("ops")


async def test_started_from_another_folder_the_first_line_names_the_store_and_data_folder(
    tmp_path: Path,
) -> None:
    """Started elsewhere on the default (relative) settings, the first log line names the
    store file and the data folder it uses, as absolute paths, and the folder it started in."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    server = BotServer(tmp_path / "bot", PYTHONPATH=str(ROOT))
    del server.env["DATABASE_URL"], server.env["BOT_DATA_DIR"]
    server.cwd = elsewhere
    try:
        await server.start()
    finally:
        server.close()
    first = json_lines(server.log_text())[0]["message"]
    var = elsewhere / "var"
    assert first == (
        f"using the store SQLite file {var / 'bot.sqlite3'}; data folder {var} "
        f"(started in {elsewhere})"
    )


async def test_sigkill_with_open_question_resumes_after_restart(
    start_bot: StartBot, http: aiohttp.ClientSession
) -> None:
    """A question open at SIGKILL is still open after restart, with the same token."""
    server, api, before = await deploy_asked(start_bot, http)

    assert server.kill() == -9
    await server.restart()

    after = await api.outstanding("ops", "ask_user")
    assert after["interrupt_id"] == before["interrupt_id"]
    assert after["token"] == before["token"]
    await api.answer_ok(after["token"], STAGING)
    approval = await api.outstanding("ops", "approval")
    await api.answer_ok(approval["token"], APPROVE)
    run = await api.finished("ops")
    assert run["final_text"] == DEPLOY_REPORT
    assert run["status"] == "completed"
    assert len((await api.feed("ops"))["runs"]) == 1


async def test_two_tabs_answering_at_once_resume_the_run_once(
    start_bot: StartBot, http: aiohttp.ClientSession
) -> None:
    """Two simultaneous answers with one token: one 200, one 409 naming who and when."""
    _, api, ask = await deploy_asked(start_bot, http, **OPERATOR)

    results = await asyncio.gather(
        api.answer(ask["token"], STAGING),
        api.answer(ask["token"], STAGING),
    )
    statuses = sorted(status for status, _ in results)
    assert statuses == [200, 409], results
    refused = next(body for status, body in results if status == 409)
    assert refused["ok"] is False
    assert "already answered by Alice at " in refused["error"]

    approval = await api.outstanding("ops", "approval")
    await api.answer_ok(approval["token"], APPROVE)
    run = await api.finished("ops")
    assert run["final_text"] == DEPLOY_REPORT
    assert [q["name"] for q in run["questions"]] == ["ask_user", "approval"]
    assert all(q["status"] == "answered" for q in run["questions"])
    feed = await api.feed("ops")
    assert [r["final_text"] for r in feed["runs"]] == [DEPLOY_REPORT]

    metrics = await api.metrics()
    assert metrics["bot_pauses_issued_total"] == 2
    assert metrics["bot_pauses_answered_total"] == 2
    assert metrics['bot_answers_refused_total{reason="AlreadyAnswered"}'] == 1
    assert metrics['bot_runs_finished_total{status="completed"}'] == 1


async def test_short_ttl_expires_the_question_and_the_run_says_so(
    start_bot: StartBot, http: aiohttp.ClientSession
) -> None:
    """With a 2 s TTL the sweeper expires the question; its old token is then refused."""
    _, api, ask = await deploy_asked(start_bot, http, **SHORT_TTL)

    def expired(feed: dict[str, Any]) -> dict[str, Any] | None:
        run: dict[str, Any] = feed["runs"][-1]
        closed = [q for q in run["questions"] if q["status"] == "expired"]
        return run if closed and run["final_text"] else None

    run = await api.wait("ops", expired, what="expired question and final text", seconds=20)
    assert run["final_text"].startswith(NO_DECISION)
    assert [q["status"] for q in run["questions"]] == ["expired"]
    assert not run["questions"][0].get("token")

    status, body = await api.answer(ask["token"], STAGING)
    assert status == 409, body
    assert body["ok"] is False
    assert "expired" in body["error"]
    assert (await api.metrics())["bot_pauses_expired_total"] == 1


async def test_sigterm_drains_and_exits_cleanly(
    start_bot: StartBot, http: aiohttp.ClientSession
) -> None:
    """SIGTERM right after an answer exits 0 within 30 s, and the run resumes exactly once."""
    server, api, ask = await deploy_asked(start_bot, http)
    await api.answer_ok(ask["token"], STAGING)

    # A bound from the platform (Heroku/Cloud Foundry give 30 s), not a speed check.
    assert await server.terminate(within=30) == 0
    log = server.log_text()
    assert "Traceback" not in log
    assert not [r for r in json_lines(log) if r.get("level") in {"error", "critical"}]

    # Whether the drain finished the resume or the next start recovers it, one follows.
    await server.restart()
    approval = await api.outstanding("ops", "approval")
    run = (await api.feed("ops"))["runs"][-1]
    assert [(q["name"], q["status"]) for q in run["questions"]] == [
        ("ask_user", "answered"),
        ("approval", "outstanding"),
    ]
    await api.answer_ok(approval["token"], APPROVE)
    assert (await api.finished("ops"))["final_text"] == DEPLOY_REPORT
    assert await server.terminate(within=30) == 0
    assert "Traceback" not in server.log_text()


async def test_sigterm_logs_a_clean_shutdown_line(start_bot: StartBot) -> None:
    """After SIGTERM the JSON log has an info line saying the bot stopped."""
    server = await start_bot()
    assert await server.terminate(within=30) == 0
    stops = [
        r
        for r in json_lines(server.log_text())
        if r.get("level") == "info" and re.search(r"\b(shut|stop)", r.get("message", "").lower())
    ]
    assert stops, server.log_tail()


async def test_garbage_is_refused_with_a_sentence_and_the_bot_keeps_serving(
    start_bot: StartBot, http: aiohttp.ClientSession
) -> None:
    """Malformed JSON, a 100 kB body and a forged token get 4xx JSON; then a flow works."""
    server, api, ask = await deploy_asked(start_bot, http)
    header, claims, _ = ask["token"].split(".")
    forged = f"{header}.{claims}.{'A' * 43}"

    big = "x" * 100_000
    refusals = [
        (400, await api.post_raw("/api/answer", b'{"token": "abc", "answer": {')),
        (400, await api.post_raw("/api/conversations/ops/messages", b"{not json")),
        (400, await api.post_raw("/api/answer", b"[1, 2, 3]")),
        (400, await api.post_raw("/api/conversations/NOT%20OK/messages", b"{}")),
        (413, await api.post_raw("/api/answer", json.dumps({"pad": big}).encode())),
        (
            413,
            await api.post_raw(
                "/api/conversations/ops/messages", json.dumps({"text": big}).encode()
            ),
        ),
        (403, await api.answer(forged, STAGING)),
        (403, await api.answer("not-a-token", STAGING)),
        (422, await api.answer(ask["token"], {"answers": {"Which environment?": "moon"}})),
    ]
    for expected, (status, body) in refusals:
        assert status == expected, (status, body)
        assert body.get("ok") is False, (status, body)
        assert _is_sentence(body.get("error")), (status, body)

    assert await api.healthz() == 200
    # The refused attempts spent nothing: the same question still takes its answer.
    await api.answer_ok(ask["token"], STAGING)
    approval = await api.outstanding("ops", "approval")
    await api.answer_ok(approval["token"], APPROVE)
    assert (await api.finished("ops"))["final_text"] == DEPLOY_REPORT
    await api.deploy_to_staging("ops-2")
    assert "Traceback" not in server.log_text()


async def test_tokens_never_reach_the_log(start_bot: StartBot, http: aiohttp.ClientSession) -> None:
    """After full flows at DEBUG, and a refused replay, no token appears in the log."""
    server = await start_bot(BOT_LOG_LEVEL="DEBUG")
    api = ConsoleClient(http, server.url)
    _, tokens = await api.deploy_to_staging("ops")
    status, _ = await api.answer(tokens[0], STAGING)
    assert status == 409
    _, more = await api.deploy_to_staging("ops-2")
    assert await server.terminate(within=30) == 0

    log = server.log_text()
    assert json_lines(log), "the bot logged nothing; the check below would prove nothing"
    for token in [*tokens, *more]:
        signature = token.rsplit(".", 1)[-1]
        assert len(signature) >= 32
        assert token not in log
        assert signature not in log


def _is_sentence(error: object) -> bool:
    """One readable sentence: capitalised, several words, a full stop."""
    return (
        isinstance(error, str)
        and len(error.split()) >= 4
        and error[0].isupper()
        and error.endswith(".")
    )
