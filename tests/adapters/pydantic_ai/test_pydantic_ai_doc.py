"""docs/agents/pydantic-ai.md's real-model example as written (but for its model) through Slack;
its install line and offline example are tested with the other page's, in
tests/adapters/test_agent_pages.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic_ai import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tests.adapters.agent_docs import DB, WEB, load, restarted_on_slack

PAGE = "pydantic-ai.md"


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
    await restarted_on_slack(example, tmp_path, monkeypatch, capsys, "HISTORY")
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
