"""``BOT_AGENT=tests.e2e._replica_agent:factory``: asks once, then runs two recorded tools.

Each tool body writes "began <tool> <idempotency key>" and "finished <tool>
<key>" lines to ``REPLICA_AGENT_LOG``, so a test can tell a finished tool
from one re-run. ``slow`` holds while the ``REPLICA_AGENT_HOLD`` file exists,
so a test can kill the process with the tool in flight. The script reads the
transcript alone, like the demo's, so any replica can take a run over.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from pathlib import Path

from bot.app.agent_spec import AgentSpec
from bot.app.settings import Settings
from bot.human.capability import ASK_USER
from bot.human.factory import ask_user_registration
from bot.kernel import current_call
from bot.kernel.messages import Message, ModelReply, ToolDefinition
from bot.kernel.tools import Tool, function_tool
from bot.providers.scripted import ScriptedProvider
from bot.testing import call, calls, question, say

QUESTION = "Go ahead?"
NO_ARGUMENTS = {"type": "object", "properties": {}}


def _note(line: str) -> None:
    with Path(os.environ["REPLICA_AGENT_LOG"]).open("a", encoding="utf-8") as log:
        log.write(line + "\n")


def _held() -> bool:
    return Path(os.environ["REPLICA_AGENT_HOLD"]).exists()


def _recorded(name: str, *, hold: bool) -> Tool:
    async def body() -> str:
        context = current_call()
        key = context.idempotency_key if context else "none"
        _note(f"began {name} {key} pid={os.getpid()}")
        # Polled: the flag is removed by the test, another process; a stat is cheap.
        while hold and _held():  # noqa: ASYNC110 - no event can cross the process boundary
            await asyncio.sleep(0.05)
        _note(f"finished {name} {key} pid={os.getpid()}")
        return f"{name} done"

    return function_tool(body, name=name, description=f"Records {name}.", parameters=NO_ARGUMENTS)


def script(messages: Sequence[Message], tools: Sequence[ToolDefinition]) -> ModelReply:
    del tools
    done = [m.content for m in messages if m.role == "tool"]
    if not done:
        return calls(call(ASK_USER, questions=[question(QUESTION, "yes", "no")]))
    if len(done) == 1:
        return calls(call("fast"))
    if len(done) == 2:
        return calls(call("slow"))
    return say("finished: " + "; ".join(done[1:]))


def factory(settings: Settings) -> AgentSpec:
    del settings
    return AgentSpec(
        tools=[_recorded("fast", hold=False), _recorded("slow", hold=True)],
        registrations=[ask_user_registration()],
        provider=ScriptedProvider(script),
        name="replica test agent",
    )
