"""The server never loads an agent framework, and the adapters export what they say."""

from __future__ import annotations

import pytest

from tests.support import modules_loaded_by

SDKS = ("agents", "pydantic_ai", "openai", "temporalio", "langgraph", "langchain", "langchain_core")
ADAPTERS = (
    "adapters.langgraph",
    "adapters.openai_agents",
    "adapters.pydantic_ai",
    "adapters._tool_approval",
    "adapters.temporal",
)


def test_importing_the_server_loads_no_agent_framework() -> None:
    """A fresh interpreter importing bot.app has no framework's SDK nor its adapter loaded."""
    loaded = modules_loaded_by("bot.app")
    assert "bot.app" in loaded
    found = [name for name in loaded if name.split(".")[0] in SDKS or name.startswith(ADAPTERS)]
    assert found == []


@pytest.mark.parametrize(
    "package", ["adapters.openai_agents", "adapters.pydantic_ai", "adapters.temporal"]
)
def test_public_names_are_sorted_and_resolve(package: str) -> None:
    """Each adapter's __all__ is sorted and every name in it resolves."""
    module = __import__(package, fromlist=["__all__"])
    assert list(module.__all__) == sorted(module.__all__)
    for name in module.__all__:
        assert getattr(module, name) is not None
