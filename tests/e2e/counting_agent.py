"""A ``BOT_AGENT`` for crash tests: it logs every step it takes, and any step can be held.

The flow of one run, whatever the person typed (the text names the run):
round 1 calls ``prepare``; round 2 asks which environment; round 3 calls
``deploy`` there; round 4 answers "done <environment>". A run whose text
starts with "approve" asks an ``approval`` of a deploy to staging in round 2
instead, and round 3 deploys where the approver said (an edit's environment). Each model round and
each tool call appends ``start`` and ``end`` lines to ``$COUNTING_LOG`` (JSON,
with the run's text, the round or the call's idempotency key, and the pid).
A step is held, between its start and end lines, for as long as a file named
``<text>@<step>`` exists in ``$COUNTING_HOLD`` (steps: ``model:N``,
``tool:prepare``, ``tool:deploy``), so a test can kill the process at exactly
that line.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bot.app.agent_spec import AgentSpec
from bot.app.settings import Settings
from bot.human.capability import ASK_USER
from bot.human.factory import ask_user_registration
from bot.interactions.approval import APPROVAL, approval_registration, approval_tool
from bot.kernel import current_call, current_turn
from bot.kernel.messages import Message, ModelReply, RequestedCall, ToolDefinition
from bot.kernel.tools import function_tool

QUESTION = "Which environment?"


def _text() -> str:
    turn = current_turn()
    return turn.text if turn is not None else ""


def _log(event: str, **fields: Any) -> None:
    line = json.dumps({"event": event, "run": _text(), "pid": os.getpid(), **fields})
    with open(os.environ["COUNTING_LOG"], "a", encoding="utf-8") as log:
        log.write(line + "\n")


async def _held(step: str) -> None:
    flag = Path(os.environ["COUNTING_HOLD"]) / f"{_text()}@{step}"
    while flag.exists():  # noqa: ASYNC110 - the flag is a file another process removes
        await asyncio.sleep(0.02)


class CountingModel:
    """Plays the model from the transcript alone, logging and holding each round."""

    async def complete(
        self, messages: Sequence[Message], tools: Sequence[ToolDefinition]
    ) -> ModelReply:
        del tools
        results = [m.content for m in messages if m.role == "tool"]
        round_number = len(results) + 1
        _log("model_start", round=round_number)
        await _held(f"model:{round_number}")
        reply = _reply(results)
        _log("model_end", round=round_number)
        return reply


def _reply(results: list[str]) -> ModelReply:
    if not results:
        return ModelReply(calls=(RequestedCall("prepare", {}),))
    if len(results) == 1 and _text().startswith("approve"):
        asked = {"action": "deploy", "summary": "Deploy to staging", "risk": "low"}
        arguments = {"arguments": {"environment": "staging"}}
        return ModelReply(calls=(RequestedCall(APPROVAL, asked | arguments),))
    if len(results) == 1:
        question = {"question": QUESTION, "header": "Env", "options": [], "multi_select": False}
        options = [{"label": env, "description": ""} for env in ("staging", "production")]
        question["options"] = options
        return ModelReply(calls=(RequestedCall(ASK_USER, {"questions": [question]}),))
    if len(results) == 2 and _text().startswith("approve"):
        answer = json.loads(results[1]).get("answer") or {}
        if answer.get("decision") not in ("approve", "edit"):
            return ModelReply(text="not deployed")
        environment = (answer.get("arguments") or {}).get("environment", "staging")
        return ModelReply(calls=(RequestedCall("deploy", {"environment": environment}),))
    if len(results) == 2:
        closed = json.loads(results[1])
        answers = closed.get("answers") or [{"answer": "none"}]
        environment = str(answers[0]["answer"])
        return ModelReply(calls=(RequestedCall("deploy", {"environment": environment}),))
    return ModelReply(text=f"done {results[2]}")


async def _tool(name: str, result: str) -> str:
    call = current_call()
    key = call.idempotency_key if call is not None else ""
    _log("tool_start", tool=name, key=key)
    await _held(f"tool:{name}")
    _log("tool_end", tool=name, key=key)
    return result


async def prepare() -> str:
    return await _tool("prepare", "prepared")


async def deploy(environment: str) -> str:
    return await _tool("deploy", environment)


def factory(settings: Settings) -> AgentSpec:
    empty = {"type": "object", "properties": {}}
    env = {
        "type": "object",
        "properties": {"environment": {"type": "string"}},
        "required": ["environment"],
    }
    return AgentSpec(
        tools=[
            function_tool(prepare, name="prepare", description="Get ready.", parameters=empty),
            function_tool(deploy, name="deploy", description="Ship it.", parameters=env),
            approval_tool(),
        ],
        registrations=[
            ask_user_registration(),
            approval_registration(allow=settings.policy.allowed(APPROVAL)),
        ],
        provider=CountingModel(),
        name="counting",
    )


def events(log: Path) -> list[dict[str, Any]]:
    """Every line the agent logged, in order."""
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines() if line]
