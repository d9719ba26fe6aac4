"""An adapter imported without its extra says which extra to install, in one sentence."""

from __future__ import annotations

import sys

import pytest

from tests.support import ROOT, run_text

# A Python without the framework: the import system finds None for it, as if uninstalled.
PROBE = """
import sys
for name in {blocked!r}:
    sys.modules[name] = None
try:
    {statement}
except ModuleNotFoundError as error:
    from bot.errors import MissingExtra
    assert isinstance(error, MissingExtra), repr(error)
    print(error)
"""


@pytest.mark.parametrize(
    ("statement", "blocked", "extra", "missing"),
    [
        ("import adapters.langgraph", ["langgraph"], "langgraph", "langgraph"),
        ("import adapters.openai_agents", ["agents"], "openai-agents", "agents"),
        ("import adapters.pydantic_ai", ["pydantic_ai"], "pydantic-ai", "pydantic_ai"),
        ("from adapters.mcp import build_server", ["mcp"], "mcp", "mcp"),
        ("import adapters.temporal", ["temporalio"], "temporal", "temporalio"),
    ],
)
def test_an_adapter_without_its_extra_names_the_extra(
    statement: str, blocked: list[str], extra: str, missing: str
) -> None:
    """The error is one sentence naming the adapter, the extra and how to install it."""
    probe = PROBE.format(blocked=blocked, statement=statement)
    done = run_text([sys.executable, "-c", probe], env=None, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    adapter = statement.split()[1]
    assert done.stdout.strip() == (
        f"{adapter} needs the {extra} extra, which is not installed (no module {missing!r}): "
        f"pip install -e '.[{extra}]' from the checkout's root"
    )
