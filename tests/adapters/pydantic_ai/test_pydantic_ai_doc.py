"""docs/agents/pydantic-ai.md's example, run as written (but for its model) through Slack."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from pydantic_ai import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tests.adapters.agent_bridge import bridge_on
from tests.adapters.agent_docs import APPROVER, CHANNEL, load
from tests.e2e._api import API_KEY
from tests.fakes.slack_api import Call, buttons

PAGE = "pydantic-ai.md"
WEB = {"service": "web", "version": "1.5.0"}
DB = {"service": "db", "version": "17.2"}


async def test_the_example_pauses_restarts_and_finishes_with_one_question_per_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Killed while waiting, run again: the saved history re-asks the same two questions."""
    seen: list[list[ModelMessage]] = []

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(list(messages))
        if len(seen) == 1:
            return ModelResponse(
                parts=[
                    ToolCallPart("deploy", WEB, tool_call_id="call_web"),
                    ToolCallPart("deploy", DB, tool_call_id="call_db"),
                ]
            )
        return ModelResponse(parts=[TextPart("web is out; db was refused")])

    example = load(PAGE, 'MODEL = "openai:gpt-5.1"', FunctionModel(respond))
    monkeypatch.chdir(tmp_path)
    async with bridge_on("slack", tmp_path, channel=CHANNEL, user=APPROVER) as desk:
        monkeypatch.setenv("BRIDGE_URL", desk.url)
        monkeypatch.setenv("BRIDGE_API_KEY", API_KEY)
        first = asyncio.create_task(example["main"]())
        await desk.door.fake.wait_for("chat.postMessage", 2, where=_question)
        first.cancel()  # the agent's process dies while it waits
        with pytest.raises(asyncio.CancelledError):
            await first
        history: Path = example["HISTORY"]
        assert await asyncio.to_thread(history.exists)
        second = asyncio.create_task(example["main"]())
        await desk.decide(WEB, approve=True)
        await desk.decide(DB, approve=False, comment="not during the freeze")
        await asyncio.wait_for(second, 30)
        asked = await desk.questions(example["RUN_ID"])
    assert capsys.readouterr().out.strip() == "web is out; db was refused"
    assert not await asyncio.to_thread(history.exists)
    assert len(asked) == 2
    assert len([c for c in desk.door.fake.of("chat.postMessage") if _question(c)]) == 2
    assert len(seen) == 2  # the restart called no model
    told = {
        part.tool_call_id: (part.content, part.outcome)
        for part in getattr(seen[-1][-1], "parts", [])
        if isinstance(part, ToolReturnPart)
    }
    assert told == {
        "call_web": ("deployed web 1.5.0", "success"),
        "call_db": ("A person rejected this tool call: not during the freeze", "denied"),
    }


def _question(call: Call) -> bool:
    return bool(call.response and buttons(call.args))
