"""Microsoft's Adaptive Cards library (``tests/adaptivecards/``) in Node: cards parsed and
validated as Teams reads them, without drawing them, so a test with no browser can check
every card a bot process sent. The full renderer, in Chromium, is
``tests/adapters/teams/conftest.py``.

A missing Node or library skips the check on a developer's machine and fails it in CI,
which must run it.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

LIBRARY = Path(__file__).resolve().parent / "adaptivecards"
VALIDATE = LIBRARY / "validate.js"
INSTALL = "cd tests/adaptivecards && npm ci"


def _missing() -> str:
    if shutil.which("node") is None:
        return "node is not installed (apt-get install nodejs)"
    if not (LIBRARY / "node_modules" / "adaptivecards" / "package.json").exists():
        return f"the Adaptive Cards library is not installed ({INSTALL}, or make test)"
    return ""


async def card_problems(cards: Mapping[str, Any]) -> dict[str, list[str]]:
    """What the library reports for each card (parse and validation events, warnings
    included), for the cards it reports any on; {} when Node or the library is missing
    outside CI."""
    missing = _missing()
    if missing:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{missing}; CI must check the cards a bot sends")
        return {}
    process = await asyncio.create_subprocess_exec(
        "node",
        str(VALIDATE),
        cwd=LIBRARY,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await process.communicate(json.dumps(dict(cards)).encode())
    assert process.returncode == 0, err.decode(errors="replace")
    found: dict[str, list[str]] = json.loads(out)
    return {name: problems for name, problems in found.items() if problems}
