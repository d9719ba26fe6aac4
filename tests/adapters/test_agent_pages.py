"""docs/agents' pages for the OpenAI Agents SDK and Pydantic AI: each installs its extra from the
checkout, and each offline example runs as pasted through the console, with no model key,
approved, rejected or edited.

Each page's real-model example is tested beside its framework's other tests
(``test_openai_agents_doc.py``, ``test_pydantic_ai_doc.py``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.adapters.agent_docs import install_line, run_offline

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
