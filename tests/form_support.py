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


API_BODY_BYTES = 64 * 1024  # what ``/v1`` reads of a request (``bot.app.root``)


def largest_api_form(*, room: int = 1024) -> dict[str, Any]:
    """The largest ``form`` payload ``/v1`` accepts, with ``room`` bytes of its request left for
    the rest: fifty properties of every kind (ten choices and ten multi-selects of a hundred
    values, twenty strings at the longest answer, numbers, booleans), some required, each
    described at the longest the request's size leaves."""

    def payload(described: int) -> dict[str, Any]:
        properties: dict[str, Any] = {}
        for i in range(10):
            properties[f"choice_{i}"] = {"type": "string", "enum": [f"c{j}" for j in range(100)]}
            properties[f"many_{i}"] = {
                "type": "array",
                "items": {"type": "string", "enum": [f"m{j}" for j in range(100)]},
            }
        formats = ["email", "uri", "date", "date-time"]
        for i in range(20):
            text: dict[str, Any] = {"type": "string", "maxLength": MAX_ANSWER}
            if i < len(formats):
                text = {"type": "string", "format": formats[i]}
            properties[f"text_{i}"] = text
        for i in range(5):
            properties[f"count_{i}"] = {"type": "integer", "minimum": 0, "maximum": 10**9}
            properties[f"flag_{i}"] = {"type": "boolean"}
        for name, spec in properties.items():
            spec["title"] = name.replace("_", " ").capitalize()
            spec["description"] = f"About {name}: " + "d" * described
        schema = {"type": "object", "properties": properties}
        schema["required"] = ["text_4", "choice_0", "many_0", "count_0", "flag_0"]
        return {"title": "The largest form", "message": "Fill in what you know.", "schema": schema}

    low, high = 0, API_BODY_BYTES
    while low < high:  # the longest description that leaves ``room``, by bisection
        middle = (low + high + 1) // 2
        if len(json.dumps(payload(middle))) + room <= API_BODY_BYTES:
            low = middle
        else:
            high = middle - 1
    return payload(low)


MAX_ANSWER = 2000  # bot.contract.form_schema.MAX_STRING, written out so a change is caught
