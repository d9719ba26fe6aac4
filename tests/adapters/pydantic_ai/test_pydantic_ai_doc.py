"""docs/agents/pydantic-ai.md's examples: the offline one as pasted through the console, the
real-model one as written (but for its model) through Slack."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from pydantic_ai import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tests.adapters.agent_bridge import bridge_on
from tests.adapters.agent_docs import (
    APPROVER,
    CHANNEL,
    DB,
    WEB,
    die_then_decide,
    install_line,
    load,
    posted_question,
    run_offline,
)

PAGE = "pydantic-ai.md"


def test_the_page_installs_the_extra_from_the_checkout() -> None:
    """The install line is the checkout's, with the pydantic-ai extra."""
    install_line(PAGE, "pydantic-ai")


@pytest.mark.parametrize(
    ("answer", "printed"),
    [
        ({"decision": "approve", "comment": ""}, "deployed web 1.5"),
        (
            {"decision": "reject", "comment": "not today"},
            "A person rejected this tool call: not today",
        ),
    ],
)
async def test_the_offline_example_runs_as_pasted_without_a_model_key(
    tmp_path: Path, answer: dict[str, str], printed: str
) -> None:
    """The function model asks in the console's `agents`; the answer decides what it prints."""
    assert (await run_offline(PAGE, tmp_path, answer)).strip() == printed


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
        history, asked = await die_then_decide(example, desk, monkeypatch, "HISTORY")
    assert capsys.readouterr().out.strip() == "web is out; db was refused"
    assert not await asyncio.to_thread(history.exists)
    assert len(asked) == 2
    assert len([c for c in desk.door.fake.of("chat.postMessage") if posted_question(c)]) == 2
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
