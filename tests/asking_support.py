"""An agent that asks what a test names: each kind of question, plain or with hidden controls.

A message's text picks the question (``ASKED``); once it is answered the
agent says what came back. The ``trojan ...`` ones carry the Trojan Source
characters (U+202E and friends) and agent-made markup in every text a
person reads, for the display tests; the others are what the pictures in
``docs/pictures/console/`` show.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from bot.app.agent_spec import AgentSpec
from bot.human.capability import ASK_USER
from bot.human.factory import ask_user_registration
from bot.interactions.approval import APPROVAL, approval_registration, approval_tool
from bot.interactions.form import FORM, form_registration, form_tool
from bot.kernel.messages import Message, ModelReply, RequestedCall, ToolDefinition
from bot.providers.scripted import ScriptedProvider

RLO = "\u202e"  # right-to-left override: the rest of the line reads backwards
# Agent-made markup in every surface's syntax: on the page it must stay text.
MARKUP = '<a href="https://evil.example/">docs</a> **now** [click](https://evil.example/)'

TROJAN_QUESTION = f"Deploy web to prod{RLO}gnits?"
TROJAN_LABEL = f"staging{RLO}"
TROJAN_ASK: dict[str, Any] = {
    "questions": [
        {
            "question": TROJAN_QUESTION,
            "header": "Env\u2066ironment",
            "options": [
                {"label": TROJAN_LABEL, "description": f"safe\u200b to try {MARKUP}"},
                {"label": "production", "description": f"customers see it\u2069{RLO}"},
            ],
        }
    ]
}
TROJAN_APPROVAL: dict[str, Any] = {
    "action": f"deploy{RLO}",
    "summary": f"Roll out web\u2067 to {RLO}prod. {MARKUP}",
    "arguments": {f"target{RLO}": f"prod{RLO}gnits", "flags": {"force\u200f": ["yes\u061c"]}},
    "risk": "high",
}
TROJAN_FORM: dict[str, Any] = {
    "title": f"Sign{RLO} up",
    "message": f"Tell us{RLO} who you are. {MARKUP}",
    "schema": {
        "type": "object",
        "properties": {
            f"name{RLO}": {
                "type": "string",
                "title": f"Your{RLO} name",
                "description": "as on your\u202a badge",
            },
            "plan": {"type": "string", "enum": [f"free{RLO}", "pro"], "title": f"Plan{RLO}"},
            "regions": {
                "type": "array",
                "items": {"type": "string", "enum": [f"eu{RLO}", "us"]},
                "title": "Regions",
            },
        },
        "required": [f"name{RLO}"],
    },
}

DEPLOY_OPTIONS: dict[str, Any] = {
    "questions": [
        {
            "question": "Which environment should I deploy web 1.5.0 to?",
            "header": "Environment",
            "options": [
                {"label": "staging", "description": "safe to try; nobody outside sees it"},
                {"label": "production", "description": "customers see it at once"},
                {"label": "canary", "description": "5% of production traffic"},
            ],
        }
    ]
}
SEVERAL: dict[str, Any] = {
    "questions": [
        {"question": "What should the release notes say?", "header": "Notes"},
        {
            "question": "Which regions first?",
            "header": "Regions",
            "options": [
                {"label": "eu-west", "description": "Dublin"},
                {"label": "us-east", "description": "Virginia"},
                {"label": "ap-south", "description": "Mumbai"},
            ],
            "multi_select": True,
        },
        {
            "question": "Run the database migration?",
            "header": "Migration",
            "options": [{"label": "yes"}, {"label": "later"}],
        },
    ]
}
APPROVE: dict[str, Any] = {
    "action": "deploy",
    "summary": "Deploy web 1.5.0 to production (now 1.4.2); about 2 minutes of rolling restarts.",
    "arguments": {"service": "web", "version": "1.5.0", "environment": "production"},
    "risk": "high",
}
EVERY_FIELD: dict[str, Any] = {
    "title": "New on-call engineer",
    "message": "Who joins the rota, and from when.",
    "schema": {
        "type": "object",
        "properties": {
            "name": {"type": "string", "title": "Full name", "minLength": 1, "maxLength": 80},
            "email": {"type": "string", "format": "email", "title": "Email"},
            "profile": {"type": "string", "format": "uri", "title": "Profile page"},
            "level": {"type": "integer", "minimum": 1, "maximum": 5, "title": "Level"},
            "hours": {"type": "number", "minimum": 0, "title": "Hours a week", "default": 10},
            "pager": {"type": "boolean", "title": "Has a pager", "default": True},
            "team": {"type": "string", "enum": ["web", "data", "infra"], "default": "web"},
            "start": {"type": "string", "format": "date", "title": "First day"},
            "handover": {"type": "string", "format": "date-time", "title": "Handover at"},
            "regions": {
                "type": "array",
                "items": {"type": "string", "enum": ["eu", "us", "apac"]},
                "title": "Regions",
                "default": ["eu"],
                "description": "where they can be paged",
            },
        },
        "required": ["name", "email", "level"],
    },
}

# A message's text -> (the interaction asked, its payload, what the agent says after).
ASKED: dict[str, tuple[str, dict[str, Any], str]] = {
    "trojan ask": (ASK_USER, TROJAN_ASK, "Asked."),
    "trojan approve": (APPROVAL, TROJAN_APPROVAL, "Asked."),
    "trojan form": (FORM, TROJAN_FORM, "Asked."),
    "deploy web": (ASK_USER, DEPLOY_OPTIONS, "Deployed web 1.5.0 to staging. Health checks green."),
    "plan the release": (ASK_USER, SEVERAL, "Release planned."),
    "deploy to production": (APPROVAL, APPROVE, "Deployed web 1.5.0 to production."),
    "add on-call": (FORM, EVERY_FIELD, "Added to the rota."),
}


def asking_script(messages: Sequence[Message], tools: Sequence[ToolDefinition]) -> ModelReply:
    """Asks what the last message names, then says what came back (stateless, restart-safe)."""
    del tools
    start = max(i for i, m in enumerate(messages) if m.role == "user")
    name, payload, after = ASKED[messages[start].content]
    results = [m.content for m in messages[start + 1 :] if m.role == "tool"]
    if not results:
        return ModelReply(calls=(RequestedCall(name, json.loads(json.dumps(payload))),))
    return ModelReply(text=after)


def asking_agent() -> AgentSpec:
    return AgentSpec(
        tools=[approval_tool(), form_tool()],
        registrations=[ask_user_registration(), approval_registration(), form_registration()],
        provider=ScriptedProvider(asking_script),
        name="asking-test",
    )
