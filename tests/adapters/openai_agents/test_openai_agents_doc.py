"""docs/agents/openai-agents.md's example, run as written (but for its model) through Slack."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from agents.testing import ScriptedModel, assistant_message, function_call

from tests.adapters.agent_bridge import bridge_on
from tests.adapters.agent_docs import APPROVER, CHANNEL, load
from tests.e2e._api import API_KEY
from tests.fakes.slack_api import Call, buttons

PAGE = "openai-agents.md"
WEB = {"service": "web", "version": "1.5.0"}
DB = {"service": "db", "version": "17.2"}


async def test_the_example_pauses_restarts_and_finishes_with_one_question_per_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Killed while waiting, run again: the saved state re-asks the same two questions."""
    model = ScriptedModel(
        [
            [
                function_call("deploy", WEB, call_id="call_web"),
                function_call("deploy", DB, call_id="call_db"),
            ],
            [assistant_message("web is out; db was refused")],
        ]
    )
    example = load(PAGE, 'MODEL = "gpt-5.1"', model)
    monkeypatch.chdir(tmp_path)
    async with bridge_on("slack", tmp_path, channel=CHANNEL, user=APPROVER) as desk:
        monkeypatch.setenv("BRIDGE_URL", desk.url)
        monkeypatch.setenv("BRIDGE_API_KEY", API_KEY)
        first = asyncio.create_task(example["main"]())
        await desk.door.fake.wait_for("chat.postMessage", 2, where=_question)
        first.cancel()  # the agent's process dies while it waits
        with pytest.raises(asyncio.CancelledError):
            await first
        state: Path = example["STATE"]
        assert await asyncio.to_thread(state.exists)
        second = asyncio.create_task(example["main"]())
        await desk.decide(WEB, approve=True)
        await desk.decide(DB, approve=False, comment="not during the freeze")
        await asyncio.wait_for(second, 30)
        asked = await desk.questions(example["RUN_ID"])
    assert capsys.readouterr().out.strip() == "web is out; db was refused"
    assert not await asyncio.to_thread(state.exists)
    assert len(asked) == 2
    assert len([c for c in desk.door.fake.of("chat.postMessage") if _question(c)]) == 2
    assert model.remaining_steps == 0 and model.last_call is not None
    told = {
        item["call_id"]: item["output"]
        for item in model.last_call.input
        if isinstance(item, dict) and item.get("type") == "function_call_output"
    }
    assert told == {
        "call_web": "deployed web 1.5.0",
        "call_db": "A person rejected this tool call: not during the freeze",
    }


def _question(call: Call) -> bool:
    return bool(call.response and buttons(call.args))
