"""Runtime tools, and the step that turns a contributed spec into one."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from bot.kernel.contracts import ContributedToolSpec
from bot.kernel.messages import ToolDefinition

ToolBody = Callable[..., Awaitable[Any]]


@dataclass(frozen=True, slots=True)
class Tool:
    """A callable the turn loop dispatches by name with the model's arguments."""

    name: str
    description: str
    parameters: Mapping[str, Any]
    body: ToolBody

    def definition(self) -> ToolDefinition:
        return ToolDefinition(self.name, self.description, dict(self.parameters))

    async def call(self, arguments: Mapping[str, Any]) -> str:
        result = await self.body(**arguments)
        return result if isinstance(result, str) else str(result)


def bind_contributed_tool(
    spec: ContributedToolSpec, *, parameters_schema: Mapping[str, Any] | None = None
) -> Tool:
    """Wrap a capability's tool spec as a runtime tool.

    A spec only names its parameters; the JSON schema the model sees comes
    from whoever knows the payload's shape (the registration), so it is an
    argument here rather than a guess.
    """
    schema = parameters_schema or {
        "type": "object",
        "properties": {name: {} for name in spec.parameters},
        "required": list(spec.parameters),
    }
    return Tool(
        name=spec.name,
        description=spec.description,
        parameters=schema,
        body=spec.coroutine,
    )


def function_tool(
    body: ToolBody, *, name: str, description: str, parameters: Mapping[str, Any]
) -> Tool:
    """A plain tool from an async function and its JSON schema."""
    return Tool(name=name, description=description, parameters=parameters, body=body)
