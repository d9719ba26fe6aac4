"""The console JSON API as a test sees it, over a real aiohttp client session."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable
from typing import Any, TypeVar

import aiohttp

from tests import waiting

T = TypeVar("T")

QUESTION = "Which environment should I deploy web in?"
STAGING = {"answers": {QUESTION: "staging"}}
APPROVE = {"decision": "approve", "comment": ""}
DEPLOY_REPORT = "Deployed web 1.5.0 to staging (was 1.4.2). Health checks green."
# The demo's fleet lives in the process: a later deploy reports "(was 1.5.0)".
DEPLOYED = "Deployed web 1.5.0 to staging"
NO_DECISION = "No decision arrived, so I did not deploy web: it expired unanswered."
# The loopback operator is named after the OS user; tests set it through LOGNAME.
NAME = "Alice"
OPERATOR = {"LOGNAME": NAME, "USER": NAME}


class ConsoleClient:
    """Talks to one bot over HTTP; ``wait`` polls the feed until a check holds."""

    def __init__(self, session: aiohttp.ClientSession, url: str) -> None:
        self.session = session
        self.url = url

    async def send(self, cid: str, text: str) -> str:
        async with self.session.post(
            f"{self.url}/api/conversations/{cid}/messages", json={"text": text}
        ) as response:
            body = await response.json()
            assert response.status == 202, body
            return str(body["run_id"])

    async def feed(self, cid: str) -> dict[str, Any]:
        async with self.session.get(f"{self.url}/api/conversations/{cid}") as response:
            assert response.status == 200, await response.text()
            return dict(await response.json())

    async def answer(self, token: str, answer: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        # No name: who answered is the bot's own sign-in (the operator on loopback).
        payload = {"token": token, "answer": answer}
        return await self.post_json("/api/answer", payload)

    async def answer_ok(self, token: str, answer: dict[str, Any]) -> None:
        status, body = await self.answer(token, answer)
        assert status == 200, body
        assert body["ok"] is True, body

    async def post_json(self, path: str, payload: Any) -> tuple[int, dict[str, Any]]:
        async with self.session.post(f"{self.url}{path}", json=payload) as response:
            return response.status, await _json_body(response)

    async def post_raw(self, path: str, body: bytes) -> tuple[int, dict[str, Any]]:
        headers = {"Content-Type": "application/json"}
        async with self.session.post(f"{self.url}{path}", data=body, headers=headers) as response:
            return response.status, await _json_body(response)

    async def healthz(self) -> int:
        async with self.session.get(f"{self.url}/healthz") as response:
            return response.status

    async def metrics(self) -> dict[str, float]:
        """Prometheus samples by their full name with labels, e.g. ``x_total{a="b"}``."""
        async with self.session.get(f"{self.url}/metrics") as response:
            assert response.status == 200
            text = await response.text()
        samples = {}
        for line in text.splitlines():
            match = re.fullmatch(r"([a-zA-Z_:][\w:]*(?:\{[^}]*\})?) (\S+)", line)
            if match and not line.startswith("#"):
                samples[match.group(1)] = float(match.group(2))
        return samples

    async def wait(
        self,
        cid: str,
        check: Callable[[dict[str, Any]], T | None],
        *,
        what: str,
        seconds: float = 15.0,
    ) -> T:
        """Readiness wait on the feed: return the first truthy ``check(feed)``."""
        last: list[dict[str, Any]] = [{}]

        async def found() -> T | None:
            last[0] = await self.feed(cid)
            return check(last[0])

        try:
            return await waiting.eventually(found, what=what, seconds=seconds, every=0.05)
        except AssertionError as timed_out:
            raise AssertionError(f"{timed_out}; last feed: {last[0]}") from None

    async def outstanding(self, cid: str, name: str, **wait: Any) -> dict[str, Any]:
        """The latest run's open question called ``name`` (ask_user or approval)."""

        def check(feed: dict[str, Any]) -> dict[str, Any] | None:
            for question in _latest_run(feed).get("questions", []):
                if question["name"] == name and question["status"] == "outstanding":
                    return dict(question) if question.get("token") else None
            return None

        return await self.wait(cid, check, what=f"outstanding {name}", **wait)

    async def finished(self, cid: str, **wait: Any) -> dict[str, Any]:
        """The latest run once it has a final text."""

        def check(feed: dict[str, Any]) -> dict[str, Any] | None:
            run = _latest_run(feed)
            return run if run.get("final_text") else None

        return await self.wait(cid, check, what="final text", **wait)

    async def asked(self, cid: str, text: str = "deploy web") -> dict[str, Any]:
        """Send ``text`` in ``cid``: the ``ask_user`` question its run asks first."""
        await self.send(cid, text)
        return await self.outstanding(cid, "ask_user")

    async def approval(self, cid: str) -> tuple[dict[str, Any], dict[str, Any]]:
        """Deploy web, pick staging: the answered ``ask_user`` and the approval it leads to."""
        ask = await self.asked(cid)
        await self.answer_ok(ask["token"], STAGING)
        return ask, await self.outstanding(cid, "approval")

    async def deploy_to_staging(self, cid: str) -> tuple[dict[str, Any], list[str]]:
        """The whole demo flow through the API; returns the finished run and its tokens."""
        ask, approval = await self.approval(cid)
        await self.answer_ok(approval["token"], APPROVE)
        run = await self.finished(cid)
        assert run["final_text"].startswith(DEPLOYED), run
        return run, [ask["token"], approval["token"]]


def exited_zero(returncode: int | None, stderr: str) -> bool:
    """A script ended well when it exited with status 0."""
    return returncode == 0


async def approve_while_it_waits(
    script: asyncio.subprocess.Process,
    console: ConsoleClient,
    conversation: str,
    answer: dict[str, Any],
    *,
    ended_well: Callable[[int | None, str], bool] = exited_zero,
) -> tuple[str, str]:
    """Answer the approval a docs example (``script``) asked in ``conversation``, and what it
    printed once it ended (stdout, stderr); it is killed if the test fails first, and its
    exit status and stderr must satisfy ``ended_well``."""
    try:
        question = await console.outstanding(conversation, "approval")
        assert question["payload"]["arguments"] == {"service": "web", "version": "1.5"}
        await console.answer_ok(question["token"], answer)
        out, err = await asyncio.wait_for(script.communicate(), 60)
    finally:
        if script.returncode is None:
            script.kill()
            await script.wait()
    stdout, stderr = out.decode(), err.decode()
    assert ended_well(script.returncode, stderr), (script.returncode, stdout, stderr)
    return stdout, stderr


def _latest_run(feed: dict[str, Any]) -> dict[str, Any]:
    runs = feed.get("runs") or [{}]
    return dict(runs[-1])


async def _json_body(response: aiohttp.ClientResponse) -> dict[str, Any]:
    """The body as JSON; a non-JSON body is kept under ``raw`` so asserts can show it."""
    text = await response.text()
    try:
        body = json.loads(text)
    except ValueError:
        return {"raw": text, "content_type": response.content_type}
    return body if isinstance(body, dict) else {"raw": body}
