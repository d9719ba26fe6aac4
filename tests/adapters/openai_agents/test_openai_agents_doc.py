"""docs/agents/openai-agents.md's real-model example as written (but for its model) through Slack;
its install line and offline example are tested with the other page's, in
tests/adapters/test_agent_pages.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from agents.testing import ScriptedModel, assistant_message

from tests.adapters.agent_docs import load, restarted_on_slack
from tests.adapters.openai_agents.test_openai_agents_approvals import outputs, two_deploys

PAGE = "openai-agents.md"


async def test_the_example_pauses_restarts_and_finishes_with_one_question_per_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Killed while waiting, run again: the saved state re-asks the same two questions."""
    model = ScriptedModel([two_deploys(), [assistant_message("web is out; db was refused")]])
    example = load(PAGE, 'MODEL = "gpt-5.1"', model)
    await restarted_on_slack(example, tmp_path, monkeypatch, capsys, "STATE")
    assert model.remaining_steps == 0
    told = outputs(model)
    assert told == {
        "call_web": "deployed web 1.5.0",
        "call_db": "A person rejected this tool call: not during the freeze",
    }
