"""docs/agents/temporal.md's sentence on edits: a workflow's approval allows approve and
reject only, even on a bridge whose BOT_ALLOW lets approvers edit."""

from __future__ import annotations

import asyncio
from pathlib import Path

import aiohttp
from temporalio.testing import ActivityEnvironment

from adapters.temporal import BridgeActivities
from adapters.temporal._wire import AskRequest, AskResult, Origin
from bot.client import Bridge
from tests.adapters.agent_docs import CONVERSATION, ROOT
from tests.doors._doors import Door
from tests.e2e._api import API_KEY, api_env
from tests.e2e._client import APPROVE, ConsoleClient

PAGE = (ROOT / "docs" / "agents" / "temporal.md").read_text()
SENTENCE = "It allows approve and reject only, whatever the\n  bridge's `BOT_ALLOW` says"
# hitl.request_approval's ask, as the workflow hands it to the activity.
ASK = AskRequest(
    kind="approval",
    payload={
        "action": "deploy",
        "summary": "Deploy web 1.5 to prod",
        "arguments": {"service": "web", "version": "1.5"},
        "risk": "high",
    },
    routes=[{"surface": "console", "conversation": CONVERSATION}],
    origin=Origin("default", "release-1", "run-1", 0),
    answerers=["anyone"],
)


async def test_an_edit_is_refused_where_the_bridge_allows_edits(tmp_path: Path) -> None:
    """The page says so; the ask activity's question allows approve and reject, the console
    refuses an edit of it ("edit is not allowed here") and takes an approval."""
    assert SENTENCE in PAGE and '"edit is not allowed here"' in PAGE
    env = api_env("console:*") | {"BOT_ALLOW": "approval=approve,reject,edit,respond"}
    async with (
        Door(tmp_path, **env) as door,
        Bridge(f"http://127.0.0.1:{door.port}", API_KEY) as bridge,
        aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30)) as http,
    ):
        asked: AskResult = await ActivityEnvironment().run(BridgeActivities(bridge).ask, ASK)
        assert asked.question["payload"].get("allow") in (None, ["approve", "reject"])
        console = ConsoleClient(http, f"http://127.0.0.1:{door.port}")
        question = await console.outstanding(CONVERSATION, "approval")
        edit = {"decision": "edit", "arguments": {"service": "web", "version": "1.4"}}
        status, refused = await console.answer(question["token"], edit)
        assert status != 200 and "edit is not allowed here" in str(refused), refused
        await console.answer_ok(question["token"], APPROVE)
        closed = await asyncio.wait_for(bridge.get(asked.question["id"]), 30)
        assert closed.answer == {"decision": "approve", "comment": ""}
