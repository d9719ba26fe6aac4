"""The embedded demo: an ops assistant over an in-process fleet.

"deploy web" asks which environment (``ask_user`` with options), asks for
an ``approval``, deploys, and reports. Without a model configured the
scripted provider plays the model by reading the transcript, so it is
stateless and survives a restart between a question and its answer.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from bot.app.agent_spec import AgentSpec
from bot.app.settings import Settings
from bot.human.capability import ASK_USER
from bot.human.factory import ask_user_registration
from bot.interactions.approval import APPROVAL, approval_registration, approval_tool
from bot.kernel.journal import current_call
from bot.kernel.messages import Message, ModelReply, RequestedCall, ToolDefinition
from bot.kernel.tools import Tool, function_tool

ENVIRONMENTS = ("staging", "production")
HELP = (
    "I'm the ops assistant demo. Try `deploy web`, `roll back api` or `status worker` "
    "(services: web, api, worker)."
)
SYSTEM_PROMPT = (
    "You are an ops assistant. Use service_status, deploy and rollback. Before deploying "
    "or rolling back, ask which environment with ask_user (options staging, production) "
    "unless the person named it, then request approval and act only on 'approve'."
)
# What the person types (and reads back) and the tool that does it.
TOOL_FOR_VERB = {"deploy": "deploy", "roll back": "rollback"}


@dataclass
class Fleet:
    """Versions per service and environment, and the release waiting to ship."""

    running: dict[str, dict[str, str]] = field(
        default_factory=lambda: {
            "web": {"staging": "1.4.2", "production": "1.4.1"},
            "api": {"staging": "2.0.0", "production": "1.9.7"},
            "worker": {"staging": "0.9.3", "production": "0.9.3"},
        }
    )
    candidate: dict[str, str] = field(
        default_factory=lambda: {"web": "1.5.0", "api": "2.0.1", "worker": "0.9.4"}
    )
    previous: dict[tuple[str, str], str] = field(default_factory=dict)
    # Results by idempotency key: a change replayed after a crash is not made twice.
    applied: dict[str, str] = field(default_factory=dict)

    def tools(self) -> list[Tool]:
        service = {"type": "string", "enum": sorted(self.running)}
        environment = {"type": "string", "enum": list(ENVIRONMENTS)}

        async def service_status(service: str) -> str:
            envs = self._service(service)
            shown = ", ".join(f"{env} {version}" for env, version in envs.items())
            return f"{service}: {shown}; all healthy."

        async def deploy(service: str, environment: str) -> str:
            return self._once(lambda: self._deploy(service, environment))

        async def rollback(service: str, environment: str) -> str:
            return self._once(lambda: self._rollback(service, environment))

        one = {"type": "object", "properties": {"service": service}, "required": ["service"]}
        two = {
            "type": "object",
            "properties": {"service": service, "environment": environment},
            "required": ["service", "environment"],
        }
        return [
            function_tool(
                service_status,
                name="service_status",
                description="Versions and health of a service.",
                parameters=one,
            ),
            function_tool(
                deploy, name="deploy", description="Ship the waiting release.", parameters=two
            ),
            function_tool(
                rollback, name="rollback", description="Undo the last deploy.", parameters=two
            ),
        ]

    def _once(self, change: Callable[[], str]) -> str:
        """Apply a change once per idempotency key, as a real deploy API would."""
        call = current_call()
        if call is None:
            return change()
        if call.idempotency_key not in self.applied:
            self.applied[call.idempotency_key] = change()
        return self.applied[call.idempotency_key]

    def _deploy(self, service: str, environment: str) -> str:
        envs = self._service(service)
        was, new = envs[environment], self.candidate[service]
        self.previous[(service, environment)] = was
        envs[environment] = new
        return f"Deployed {service} {new} to {environment} (was {was}). Health checks green."

    def _rollback(self, service: str, environment: str) -> str:
        envs = self._service(service)
        back = self.previous.pop((service, environment), None)
        if back is None:
            return f"Nothing to roll back: {service} on {environment} has no earlier deploy."
        envs[environment] = back
        return f"Rolled {service} on {environment} back to {back}."

    def _service(self, service: str) -> dict[str, str]:
        if service not in self.running:
            raise KeyError(f"unknown service {service!r}; known: {', '.join(self.running)}")
        return self.running[service]


def demo_script(messages: Sequence[Message], tools: Sequence[ToolDefinition]) -> ModelReply:
    """Play the model for the demo from the transcript alone."""
    del tools
    start = max(i for i, m in enumerate(messages) if m.role == "user")
    request = messages[start].content.strip().lower()
    results = _results(messages[start + 1 :])
    # "rollback api" (the noun typed as a verb) is read as "roll back api" too.
    intent = re.match(r"(deploy|roll ?back|status)\s+(\w+)", request)
    if intent is None:
        return ModelReply(text=HELP)
    verb, service = intent.groups()
    if verb == "rollback":
        verb = "roll back"
    if service not in Fleet().running:
        return ModelReply(text=f"I don't know a service called {service!r}. {HELP}")
    if verb == "status":
        if not results:
            return _call("service_status", service=service)
        return ModelReply(text=results[-1][1])
    return _change_step(verb, service, results)


def _change_step(verb: str, service: str, results: list[tuple[str, str]]) -> ModelReply:
    tool = TOOL_FOR_VERB[verb]
    if not results:
        return _call(
            ASK_USER,
            questions=[
                {
                    "question": f"Which environment should I {verb} {service} in?",
                    "header": "Environment",
                    "options": [
                        {"label": "staging", "description": "safe to try"},
                        {"label": "production", "description": "customers see it"},
                    ],
                    "multi_select": False,
                }
            ],
        )
    name, observation = results[-1]
    closed = _closed(observation) if name in (ASK_USER, APPROVAL) else {}
    if name in (ASK_USER, APPROVAL) and closed.get("status") != "answered":
        why = "it was cancelled" if closed.get("status") == "cancelled" else "it expired unanswered"
        return ModelReply(text=f"No decision arrived, so I did not {verb} {service}: {why}.")
    if name == ASK_USER:
        environment = _environment_from(results)
        fleet = Fleet()
        summary = (
            f"Deploy {service} {fleet.candidate[service]} to {environment}"
            if verb == "deploy"
            else f"Roll {service} on {environment} back to its previous release"
        )
        return _call(
            APPROVAL,
            action=f"{verb} {service}",
            summary=summary,
            arguments={"service": service, "environment": environment},
            risk="high" if environment == "production" else "low",
        )
    if name == APPROVAL:
        decision = closed.get("answer") or {}
        if decision.get("decision") == "edit":
            # Approved with changes: the call runs with the approver's arguments.
            edited = decision.get("arguments") or {}
            return _call(tool, **edited)
        if decision.get("decision") == "respond":
            return ModelReply(
                text=f"I did not {verb} {service}; you said: {decision.get('message')}"
            )
        if decision.get("decision") != "approve":
            comment = decision.get("comment") or "no reason given"
            return ModelReply(text=f"Rejected ({comment}); I did not {verb} {service}.")
        return _call(tool, service=service, environment=_environment_from(results))
    return ModelReply(text=observation)


def _results(after: Sequence[Message]) -> list[tuple[str, str]]:
    """(tool name, observation) pairs in order, joined on call ids."""
    names = {call.call_id: call.name for m in after for call in m.tool_calls}
    return [(names.get(m.tool_call_id, ""), m.content) for m in after if m.role == "tool"]


def _closed(observation: str) -> dict[str, Any]:
    """A closed question's observation, read as the JSON data it is (anything else: {})."""
    try:
        data = json.loads(observation)
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def _environment_from(results: list[tuple[str, str]]) -> str:
    """The environment the person picked: a value in the answers, never parsed from prose."""
    for name, observation in results:
        if name != ASK_USER:
            continue
        for item in _closed(observation).get("answers", ()):
            answer = item.get("answer") if isinstance(item, dict) else None
            if answer in ENVIRONMENTS:
                return str(answer)
    return "staging"


def _call(name: str, **arguments: object) -> ModelReply:
    return ModelReply(calls=(RequestedCall(name, dict(arguments)),))


def demo_agent(settings: Settings) -> AgentSpec:
    """The demo's spec: scripted unless an OpenAI-compatible model is configured."""
    from bot.providers.scripted import ScriptedProvider

    scripted = settings.provider.base_url is None
    return AgentSpec(
        tools=[*Fleet().tools(), approval_tool()],
        registrations=[
            ask_user_registration(),
            approval_registration(allow=settings.policy.allowed(APPROVAL)),
        ],
        system_prompt=SYSTEM_PROMPT,
        provider=ScriptedProvider(demo_script) if scripted else None,
        name="ops-demo",
    )
