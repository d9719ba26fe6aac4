"""A ``form`` question for the surface tests: its payload, and an agent that asks it.

``form_agent`` is what ``BOT_AGENT=tests.form_support:form_agent`` loads:
on "sign up" it asks the form, then reports the answer it got back.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from bot.app.agent_spec import AgentSpec
from bot.app.settings import Settings
from bot.interactions.form import form_registration, form_tool
from bot.kernel.messages import Message, ModelReply, RequestedCall, ToolDefinition
from bot.providers.scripted import ScriptedProvider

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Your name", "minLength": 1, "maxLength": 80},
        "email": {"type": "string", "format": "email", "title": "Email"},
        "age": {"type": "integer", "minimum": 0, "maximum": 150, "title": "Age"},
        "agree": {"type": "boolean", "title": "Agree to the terms", "default": False},
        "plan": {"type": "string", "enum": ["free", "pro"], "default": "free"},
        "start": {"type": "string", "format": "date", "title": "Start date"},
        "regions": {
            "type": "array",
            "items": {"type": "string", "enum": ["eu", "us", "apac"]},
            "title": "Regions",
        },
    },
    "required": ["name", "age", "agree"],
}
PAYLOAD: dict[str, Any] = {
    "title": "Sign up",
    "message": "Tell us who you are.",
    "schema": SCHEMA,
}
GOOD = {"name": "Ada", "age": 36, "agree": True, "plan": "pro", "regions": ["eu", "us"]}


def form_script(messages: Sequence[Message], tools: Sequence[ToolDefinition]) -> ModelReply:
    """Asks the form once per user message, then says what came back."""
    del tools
    start = max(i for i, m in enumerate(messages) if m.role == "user")
    results = [m.content for m in messages[start + 1 :] if m.role == "tool"]
    if not results:
        return ModelReply(calls=(RequestedCall("form", dict(PAYLOAD)),))
    answer = json.loads(results[-1]).get("answer") or {}
    return ModelReply(text=f"Signed up: {json.dumps(answer, sort_keys=True)}")


def form_agent(settings: Settings) -> AgentSpec:
    del settings
    return AgentSpec(
        tools=[form_tool()],
        registrations=[form_registration()],
        provider=ScriptedProvider(form_script),
        name="form-test",
    )


def largest_form() -> dict[str, Any]:
    """The largest form a surface must draw: fifty properties, every text at its longest."""
    properties = {
        f"field_{i}": {"type": "string", "title": "T" * 3000, "description": "D" * 3000}
        for i in range(50)
    }
    return {
        "title": "X" * 150,
        "message": "M" * 3000,
        "schema": {"type": "object", "properties": properties},
    }
