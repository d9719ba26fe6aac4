"""Run a docs/agents page's example as written, but for its model and its last line."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

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
