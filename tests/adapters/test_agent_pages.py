"""docs/agents' pages for the OpenAI Agents SDK and Pydantic AI: each installs its extra from the
checkout, each offline example runs as pasted through the console, with no model key,
approved, rejected or edited, and each real-model example (but for its model) pauses on
Slack, dies, and finishes from what it saved.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from agents import set_tracing_disabled
from agents.testing import ScriptedModel, assistant_message
from pydantic_ai.models.function import FunctionModel

from tests.adapters.agent_docs import install_line, load, restarted_on_slack, run_offline
from tests.adapters.openai_agents.test_openai_agents_approvals import outputs, two_deploys
from tests.adapters.pydantic_ai.test_pydantic_ai_approvals import Script

set_tracing_disabled(True)  # the Agents SDK exports no traces: nothing here may reach the network

PAGES = [
    pytest.param("openai-agents.md", "openai-agents", id="openai-agents"),
    pytest.param("pydantic-ai.md", "pydantic-ai", id="pydantic-ai"),
]
# What each offline example prints for each answer given on the console page: the approved
# tool's result, or the rejection the model is told (with the approver's comment).
ANSWERS = [
    pytest.param({"decision": "approve", "comment": ""}, "deployed web 1.5", id="approve"),
    pytest.param(
        {"decision": "reject", "comment": "not today"},
        "A person rejected this tool call: not today",
        id="reject",
    ),
]


@pytest.mark.parametrize(("page", "extra"), PAGES)
def test_the_page_installs_the_extra_from_the_checkout(page: str, extra: str) -> None:
    """The install line is the checkout's, with the page's extra."""
    install_line(page, extra)


@pytest.mark.parametrize(("page", "extra"), PAGES)
@pytest.mark.parametrize(("answer", "printed"), ANSWERS)
async def test_the_offline_example_runs_as_pasted_without_a_model_key(
    tmp_path: Path, page: str, extra: str, answer: dict[str, str], printed: str
) -> None:
    """The scripted (or function) model asks in the console's `agents`; the answer decides
    what the example prints."""
    assert (await run_offline(page, tmp_path, answer)).strip() == printed


# The approver edits the version to 1.4 on the console. Pydantic AI runs the call with the
# edit (override_args); the Agents SDK cannot, so the call is rejected with the edited
# arguments, the model calls again with them, and that call is asked about and approved.
EDIT = {"decision": "edit", "arguments": {"service": "web", "version": "1.4"}}
AGAIN = [({"service": "web", "version": "1.4"}, {"decision": "approve", "comment": ""})]
EDITS = [
    pytest.param("openai-agents.md", AGAIN, id="openai-agents"),
    pytest.param("pydantic-ai.md", [], id="pydantic-ai"),
]


@pytest.mark.parametrize(("page", "then"), EDITS)
async def test_an_edit_on_the_console_runs_the_tool_with_the_edited_arguments(
    tmp_path: Path, page: str, then: list[tuple[dict[str, str], dict[str, str]]]
) -> None:
    """The offline example allows edit: the deploy that ran is the approver's version."""
    assert (await run_offline(page, tmp_path, EDIT, then=then)).strip() == "deployed web 1.4"


# What each real-model example prints at the end (``restarted_on_slack`` checks it), and what
# its model is told of the call the approver rejected.
SUMMARY = "web is out; db was refused"
REJECTED = "A person rejected this tool call: not during the freeze"
Told = Callable[[], dict[str, Any]]


def agents_sdk_model() -> tuple[ScriptedModel, Told]:
    """A scripted model that calls deploy twice and then sums up; what it was last told each
    call returned, once every step was used."""
    model = ScriptedModel([two_deploys(), [assistant_message(SUMMARY)]])

    def told() -> dict[str, Any]:
        assert model.remaining_steps == 0
        return outputs(model)

    return model, told


def pydantic_ai_model() -> tuple[FunctionModel, Told]:
    """A function model that calls deploy twice and then sums up; what it was last told each
    call returned, and how, once it was called twice in all."""
    script = Script(summary=SUMMARY)

    def told() -> dict[str, Any]:
        assert len(script.seen) == 2  # the restart called no model
        return {call: (part.content, part.outcome) for call, part in script.returns().items()}

    return FunctionModel(script), told


REAL_MODELS = [
    pytest.param(
        "openai-agents.md",
        'MODEL = "gpt-5.1"',
        agents_sdk_model,
        "STATE",
        {"call_web": "deployed web 1.5.0", "call_db": REJECTED},
        id="openai-agents",
    ),
    pytest.param(
        "pydantic-ai.md",
        'MODEL = "openai:gpt-5.1"',
        pydantic_ai_model,
        "HISTORY",
        {"call_web": ("deployed web 1.5.0", "success"), "call_db": (REJECTED, "denied")},
        id="pydantic-ai",
    ),
]


@pytest.mark.parametrize(("page", "model_line", "scripted", "saved", "told"), REAL_MODELS)
async def test_the_real_model_example_pauses_restarts_and_finishes_with_one_question_per_call(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    page: str,
    model_line: str,
    scripted: Callable[[], tuple[Any, Told]],
    saved: str,
    told: dict[str, Any],
) -> None:
    """Killed while waiting, run again: the saved state (or history) re-asks the same two
    questions, and the model hears each call's result."""
    model, told_now = scripted()
    example = load(page, model_line, model)
    await restarted_on_slack(example, tmp_path, monkeypatch, capsys, saved)
    assert told_now() == told
