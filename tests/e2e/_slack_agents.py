"""Agents the Slack end-to-end tests load with BOT_AGENT, for questions the demo never asks."""

from __future__ import annotations

from collections.abc import Sequence

from bot.app.agent_spec import AgentSpec
from bot.app.settings import Settings
from bot.human.factory import ask_user_registration
from bot.kernel.messages import Message, ModelReply, RequestedCall, ToolDefinition
from bot.providers.scripted import ScriptedProvider

NOTE = "What should the release note say?"
REGIONS = "Which regions get it?"


def _script(messages: Sequence[Message], tools: Sequence[ToolDefinition]) -> ModelReply:
    del tools
    start = max(i for i, m in enumerate(messages) if m.role == "user")
    results = [m.content for m in messages[start + 1 :] if m.role == "tool"]
    if not results:
        questions = [
            {"question": NOTE, "header": "Note", "options": [], "multi_select": False},
            {
                "question": REGIONS,
                "header": "Regions",
                "options": [{"label": r, "description": ""} for r in ("eu", "us", "apac")],
                "multi_select": True,
            },
        ]
        return ModelReply(calls=(RequestedCall("ask_user", {"questions": questions}),))
    return ModelReply(text=f"Noted. {results[-1]}")


def free_text(settings: Settings) -> AgentSpec:
    """Asks a free-text and a multi-select question at once: the modal path."""
    del settings
    return AgentSpec(
        tools=[],
        registrations=[ask_user_registration()],
        provider=ScriptedProvider(_script),
        name="slack-modal-test",
    )
