"""docs/agents/pydantic-ai.md's real-model example as written (but for its model) through Slack;
its install line and offline example are tested with the other page's, in
tests/adapters/test_agent_pages.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic_ai.models.function import FunctionModel

from tests.adapters.agent_docs import load, restarted_on_slack
from tests.adapters.pydantic_ai.test_pydantic_ai_approvals import Script

PAGE = "pydantic-ai.md"


async def test_the_example_pauses_restarts_and_finishes_with_one_question_per_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Killed while waiting, run again: the saved history re-asks the same two questions."""
    script = Script(summary="web is out; db was refused")
    example = load(PAGE, 'MODEL = "openai:gpt-5.1"', FunctionModel(script))
    await restarted_on_slack(example, tmp_path, monkeypatch, capsys, "HISTORY")
    assert len(script.seen) == 2  # the restart called no model
    told = {call: (part.content, part.outcome) for call, part in script.returns().items()}
    assert told == {
        "call_web": ("deployed web 1.5.0", "success"),
        "call_db": ("A person rejected this tool call: not during the freeze", "denied"),
    }
