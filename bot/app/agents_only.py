"""``BOT_AGENT=none``: a bridge for agents only, with no chat agent of its own.

The bridge serves ``/v1``, MCP and the surfaces' answers (clicks, cards,
links) as always; a chat message starts no run (``RunService(chats=False)``),
and its surface answers it with one sentence. The spec below still gives
the run service an agent: a chat run stored before a switch from the demo
(or another agent) to ``none`` ends, when it resumes, with that sentence
rather than with a tool nobody serves.
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.app.agent_spec import AgentSpec
from bot.app.settings import Settings
from bot.human.factory import ask_user_registration
from bot.interactions.approval import APPROVAL, approval_registration
from bot.interactions.form import form_registration
from bot.kernel.messages import Message, ModelReply, ToolDefinition
from bot.providers.scripted import ScriptedProvider
from bot.service.delivering.messages import AGENTS_ONLY

NAME = "none"


def agents_only(settings: Settings) -> AgentSpec:
    """No tools, the kinds the agents API asks, and a model that only says ``AGENTS_ONLY``."""
    return AgentSpec(
        tools=[],
        # The kinds /v1 and MCP ask, so BOT_POLICIES may name any of them.
        registrations=[
            ask_user_registration(),
            approval_registration(allow=settings.policy.allowed(APPROVAL)),
            form_registration(),
        ],
        provider=ScriptedProvider(_agents_only),
        name=NAME,
    )


def _agents_only(messages: Sequence[Message], tools: Sequence[ToolDefinition]) -> ModelReply:
    return ModelReply(text=AGENTS_ONLY)
