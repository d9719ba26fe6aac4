"""A public adapter name renamed so it means one thing still imports, with a warning."""

from __future__ import annotations

import importlib

import pytest

RENAMED = [
    ("adapters.langgraph", "Answered", "HumanAnswered"),
    ("adapters.langgraph", "Approved", "HumanApproved"),
    ("adapters.langgraph", "Rejected", "HumanRejected"),
    ("adapters.langgraph", "Decision", "ApprovalResult"),
    ("adapters.langgraph", "Reply", "AskHumanResult"),
    ("adapters.mcp", "Outcome", "ToolResult"),
    ("adapters.mcp", "outcome_of", "tool_result_of"),
    ("adapters.openai_agents", "Decision", "ToolCallDecision"),
    ("adapters.pydantic_ai", "Decision", "ToolCallDecision"),
]


@pytest.mark.parametrize(("module", "old", "new"), RENAMED)
def test_an_old_name_is_the_new_one_with_a_warning(module: str, old: str, new: str) -> None:
    package = importlib.import_module(module)
    with pytest.warns(DeprecationWarning, match=f"{module}.{old} is now {module}.{new}"):
        found = getattr(package, old)
    assert found is getattr(package, new)
    assert old not in package.__all__


def test_a_name_never_exported_is_still_an_attribute_error() -> None:
    import adapters.langgraph

    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        adapters.langgraph.Nope  # noqa: B018
