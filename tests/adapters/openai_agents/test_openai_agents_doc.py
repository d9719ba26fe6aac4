"""docs/agents/openai-agents.md's examples: the offline one as pasted through the console, the
real-model one as written (but for its model) through Slack."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from agents.testing import ScriptedModel, assistant_message, function_call

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

PAGE = "openai-agents.md"


def test_the_page_installs_the_extra_from_the_checkout() -> None:
    """The install line is the checkout's, with the openai-agents extra."""
    install_line(PAGE, "openai-agents")


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
async def test_the_offline_example_runs_as_pasted_without_an_openai_key(
    tmp_path: Path, answer: dict[str, str], printed: str
) -> None:
    """The scripted model asks in the console's `agents`; the answer decides what it prints."""
    assert (await run_offline(PAGE, tmp_path, answer)).strip() == printed


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
        state, asked = await die_then_decide(example, desk, monkeypatch, "STATE")
    assert capsys.readouterr().out.strip() == "web is out; db was refused"
    assert not await asyncio.to_thread(state.exists)
    assert len(asked) == 2
    assert len([c for c in desk.door.fake.of("chat.postMessage") if posted_question(c)]) == 2
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
