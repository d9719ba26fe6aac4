"""The transcript a model reads, and what a model answers."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Role = Literal["system", "user", "assistant", "tool"]


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call, identified by a call id the kernel reserved."""

    call_id: str
    name: str
    arguments: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {"call_id": self.call_id, "name": self.name, "arguments": self.arguments}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ToolCall:
        return cls(call_id=data["call_id"], name=data["name"], arguments=dict(data["arguments"]))


@dataclass(frozen=True, slots=True)
class Message:
    """One transcript entry; ``tool`` messages join a call by ``tool_call_id``."""

    role: Role
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str = ""

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            data["tool_calls"] = [call.to_json() for call in self.tool_calls]
        if self.tool_call_id:
            data["tool_call_id"] = self.tool_call_id
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Message:
        return cls(
            role=data["role"],
            content=data.get("content", ""),
            tool_calls=tuple(ToolCall.from_json(c) for c in data.get("tool_calls", ())),
            tool_call_id=data.get("tool_call_id", ""),
        )


@dataclass(frozen=True, slots=True)
class RequestedCall:
    """A call as the model asked for it, before the kernel reserves an id."""

    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ModelReply:
    """The model's answer: text, tool calls, or both."""

    text: str = ""
    calls: tuple[RequestedCall, ...] = ()


@dataclass(frozen=True, slots=True)
class ToolDefinition:
    """What the model is told about a tool."""

    name: str
    description: str
    parameters: dict[str, Any] = field(default_factory=dict)
