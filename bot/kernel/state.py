"""A turn's request and its state, and their checkpoint form.

Checkpoint versions (refuse any other at once):
  1: request, messages, round, reserved calls and their known observations.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bot.errors import BotError
from bot.kernel.messages import Message, ToolCall

CHECKPOINT_VERSION = 1


class CheckpointVersionError(BotError):
    """A checkpoint was written by a version of the bot this one cannot read."""


@dataclass(frozen=True, slots=True)
class TurnRequest:
    """One turn of one run: who it belongs to and what the person wrote."""

    text: str
    scope: str
    run_id: str
    root_run_id: str = ""
    session_id: str = ""
    thread_id: str = ""
    pin: str | None = None
    history: tuple[Message, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "scope": self.scope,
            "run_id": self.run_id,
            "root_run_id": self.root_run_id,
            "session_id": self.session_id,
            "thread_id": self.thread_id,
            "pin": self.pin,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TurnRequest:
        return cls(**{key: data[key] for key in cls.__slots__ if key in data})


@dataclass(slots=True)
class TurnState:
    """The transcript so far and the open round, if a round is open.

    ``reserved`` holds the calls of a round that has not finished;
    ``observations`` the ones already known (answers, dispatched results).
    """

    messages: list[Message] = field(default_factory=list)
    round: int = 0
    reserved: list[ToolCall] = field(default_factory=list)
    observations: dict[str, str] = field(default_factory=dict)


def snapshot(request: TurnRequest, state: TurnState) -> dict[str, Any]:
    """The JSON a checkpoint stores for a paused turn."""
    return {
        "version": CHECKPOINT_VERSION,
        "request": request.to_json(),
        "messages": [message.to_json() for message in state.messages],
        "round": state.round,
        "reserved": [call.to_json() for call in state.reserved],
        "observations": dict(state.observations),
    }


def restore(data: dict[str, Any]) -> tuple[TurnRequest, TurnState]:
    """Rebuild a paused turn; an unknown version is refused, not guessed at."""
    version = data.get("version")
    if version != CHECKPOINT_VERSION:
        raise CheckpointVersionError(
            f"checkpoint version {version!r} is not one this bot reads (it reads "
            f"{CHECKPOINT_VERSION}); run the bot version that wrote it, or cancel the run."
        )
    state = TurnState(
        messages=[Message.from_json(m) for m in data["messages"]],
        round=int(data["round"]),
        reserved=[ToolCall.from_json(c) for c in data["reserved"]],
        observations=dict(data["observations"]),
    )
    return TurnRequest.from_json(data["request"]), state
