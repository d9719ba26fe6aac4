"""Run a docs/agents page's example as written, but for its model and its last line."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest

from tests.e2e._api import API_KEY
from tests.fakes.slack_api import buttons

ROOT = Path(__file__).resolve().parents[2]
# The user id the pages name as the one approver; the Slack clicks come from it.
APPROVER = "U012ABCDEF"
CHANNEL = "C0123456789"


def example(page: str) -> str:
    """The page's first python block."""
    text = (ROOT / "docs" / "agents" / page).read_text()
    return re.findall(r"```python\n(.*?)```", text, re.S)[0]


def load(page: str, model_line: str, model: Any) -> dict[str, Any]:
    """Exec the example with ``model_line`` bound to ``model`` and ``main`` left to await."""
    code = example(page)
    assert model_line in code and code.rstrip().endswith("asyncio.run(main())"), code
    code = code.replace(model_line, "MODEL = __model__").rstrip()
    code = code.removesuffix("asyncio.run(main())")
    namespace: dict[str, Any] = {"__model__": model, "__name__": "example"}
    exec(compile(code, page, "exec"), namespace)  # noqa: S102 - the page's own code, to test it
    return namespace


# The two deploys every page's example asks approval for.
WEB = {"service": "web", "version": "1.5.0"}
DB = {"service": "db", "version": "17.2"}


def posted_question(call: Any) -> bool:
    """A Slack message with buttons that the fake answered: a question as posted."""
    return bool(call.response and buttons(call.args))


async def die_then_decide(
    example: dict[str, Any], desk: Any, monkeypatch: pytest.MonkeyPatch, saved: str
) -> tuple[Path, list[Any]]:
    """The example's agent dies while it waits, runs again from its saved file ``saved``,
    and the approver approves WEB and rejects DB; the saved file and the questions asked."""
    monkeypatch.setenv("BRIDGE_URL", desk.url)
    monkeypatch.setenv("BRIDGE_API_KEY", API_KEY)
    first = asyncio.create_task(example["main"]())
    await desk.door.fake.wait_for("chat.postMessage", 2, where=posted_question)
    first.cancel()  # the agent's process dies while it waits
    with pytest.raises(asyncio.CancelledError):
        await first
    path: Path = example[saved]
    assert await asyncio.to_thread(path.exists)
    second = asyncio.create_task(example["main"]())
    await desk.decide(WEB, approve=True)
    await desk.decide(DB, approve=False, comment="not during the freeze")
    await asyncio.wait_for(second, 30)
    return path, list(await desk.questions(example["RUN_ID"]))
