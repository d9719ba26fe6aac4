"""docs/api.md's "Approve with changes" snippet, run as pasted against a real bridge and
answered with an edit on the console page."""

from __future__ import annotations

import asyncio
import re
import textwrap
from pathlib import Path
from typing import Any

import aiohttp

from bot.client import Bridge
from tests.doors._doors import Door
from tests.e2e._api import API_KEY, api_env
from tests.e2e._client import ConsoleClient
from tests.e2e._server import ROOT

DOC = (ROOT / "docs" / "api.md").read_text()
SECTION = DOC.split("### Approve with changes", 1)[1].split("\n### ", 1)[0]
(SNIPPET,) = re.findall(r"```python\n(.*?)```", SECTION, re.S)


async def run_snippet(bridge: Bridge) -> dict[str, Any]:
    """The snippet as the body of a coroutine; what it leaves in ``run_with``."""
    scope: dict[str, Any] = {"bridge": bridge}
    source = "async def snippet():\n" + textwrap.indent(SNIPPET, "    ") + "    return run_with\n"
    exec(compile(source, "docs/api.md", "exec"), scope)  # noqa: S102 - the doc's own code
    result: dict[str, Any] = await scope["snippet"]()
    return result


async def test_the_docs_edit_runs_with_the_approvers_arguments(tmp_path: Path) -> None:
    """The approver edits environment on the console; the snippet runs with the edit."""
    async with (
        Door(tmp_path, **api_env("console:*")) as door,
        Bridge(f"http://127.0.0.1:{door.port}", API_KEY) as bridge,
        aiohttp.ClientSession() as http,
    ):
        console = ConsoleClient(http, f"http://127.0.0.1:{door.port}")
        running = asyncio.create_task(run_snippet(bridge))
        asked = await console.outstanding("ops", "approval")
        fields = {f["key"]: f["original"] for f in asked["payload"]["edit_fields"]}
        assert fields == {"service": "web", "environment": "production", "replicas": "2"}
        wrong = {"decision": "edit", "arguments": {**fields, "replicas": "two"}}
        status, refused = await console.answer(asked["token"], wrong)
        assert status != 200 and "arguments.replicas" in str(refused), refused
        edit = {"decision": "edit", "arguments": {**fields, "environment": "staging"}}
        await console.answer_ok(asked["token"], edit)
        assert await running == {"service": "web", "environment": "staging", "replicas": 2}
