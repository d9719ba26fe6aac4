"""The server never loads an agent framework, and the adapters export what they say."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

PROBE = """
import json, sys
import bot.app
print(json.dumps(sorted(sys.modules)))
"""

SDKS = ("agents", "pydantic_ai", "openai", "temporalio")
ADAPTERS = (
    "adapters.openai_agents",
    "adapters.pydantic_ai",
    "adapters._tool_approval",
    "adapters.temporal",
)


def test_importing_the_server_loads_no_agent_framework() -> None:
    """A fresh interpreter importing bot.app has neither SDK nor either adapter loaded."""
    out = subprocess.run(
        [sys.executable, "-c", PROBE], check=True, capture_output=True, text=True
    ).stdout
    loaded = json.loads(out)
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
