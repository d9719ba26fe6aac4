"""A new message when the store cannot write (full disk, read-only file): told so, never a 500."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

import pytest

from bot.questions.write import Write
from bot.service.delivering.messages import NOT_STARTED
from bot.service.running.runs import RUN_SERVICE
from tests.doors._doors import Door, Logs
from tests.doors._slack_door import slack_door
from tests.doors.test_teams_door import teams_door
from tests.e2e._teams import message
from tests.fakes.slack_api import event_callback, mention

D = TypeVar("D", bound=Door)


def _fault(kind: str) -> sqlite3.OperationalError:
    if kind == "full":
        error = sqlite3.OperationalError("database or disk is full")
        error.sqlite_errorcode = sqlite3.SQLITE_FULL  # type: ignore[attr-defined]
    else:
        error = sqlite3.OperationalError("attempt to write a readonly database")
        error.sqlite_errorcode = sqlite3.SQLITE_READONLY  # type: ignore[attr-defined]
    return error


@asynccontextmanager
async def broken(
    opening: AbstractAsyncContextManager[D], monkeypatch: pytest.MonkeyPatch, kind: str
) -> AsyncIterator[D]:
    """The door ``opening`` opens, where the write that would start a run fails as the disk
    or the file would make it fail."""
    async with opening as door:
        unit = door.app[RUN_SERVICE].questions.unit
        real = unit.apply

        async def apply(write: Write) -> Any:
            if write.new_run is not None:
                raise _fault(kind)
            return await real(write)

        monkeypatch.setattr(unit, "apply", apply)
        yield door


FAULTS = ["full", "read-only"]


@pytest.mark.parametrize("kind", FAULTS)
async def test_the_console_answers_503_with_a_sentence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    async with broken(Door(tmp_path), monkeypatch, kind) as door:
        body = json.dumps({"text": "deploy web"}).encode()
        with Logs() as logs:
            status, text = await door.send(
                "/api/conversations/ops/messages",
                body,
                headers={"Content-Type": "application/json"},
            )
        assert status == 503, text
        assert json.loads(text)["error"] == NOT_STARTED
        logs.assert_clean()


@pytest.mark.parametrize("kind", FAULTS)
async def test_slack_acks_and_tells_the_person(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    async with broken(slack_door(tmp_path), monkeypatch, kind) as door:
        event = event_callback(mention("deploy web", user="U0ALICE"))
        with Logs() as logs:
            status, _ = await door.slack(json.dumps(event).encode())
            told = await door.fake.wait_for("chat.postEphemeral")
        assert status == 200
        assert told[0].args["text"] == NOT_STARTED
        logs.assert_clean()


@pytest.mark.parametrize("kind", FAULTS)
async def test_teams_tells_the_person(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    async with broken(teams_door(tmp_path), monkeypatch, kind) as door:
        with Logs() as logs:
            status, _ = await door.activity(message(door.connector.url, "deploy web"))
        assert status == 201
        assert NOT_STARTED in door.connector.texts()
        logs.assert_clean()
