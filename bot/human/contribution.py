"""What the capability offers a compiler: a tool (the door) and a stage (the stop).

The model needs a tool to ask at all; the stop has to be a ``pre-tool``
stage because only there are the round's call ids reserved and nothing yet
dispatched, so the pause can be bound to the id its answer will join on.
The tool body runs only when that stage declined, which is why it answers
with a refusal the model can act on.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from bot.human.pausing import PauseBinding, Pauser, pause_handler
from bot.human.registration import ASK_USER, CAPABILITY_NAME
from bot.human.tokens import MintedToken
from bot.kernel.contracts import (
    CapabilityContribution,
    CapabilityRequest,
    Phase,
    StageDescriptor,
)

PAUSE_STAGE_ID = "human-interaction.pause"

REFUSAL = (
    "The question was not put to the person: either this run cannot pause, or the "
    "call did not fit ask_user (a list of questions, each with question, header, "
    "options of {label, description}, and multi_select). Fix the call, or carry on "
    "without the answer and say what you assumed."
)

__all__ = [
    "ASK_USER",
    "CAPABILITY_NAME",
    "PAUSE_STAGE_ID",
    "REFUSAL",
    "InteractionToolSpec",
    "PauseBinding",
    "ask_user_tool_spec",
    "build_contribution",
    "pause_handler",
    "pause_stage",
    "refusing_tool_spec",
]


class Offering(Pauser, Protocol):
    """What folding needs of the capability (``HumanInteractionCapability``): whether it is
    active, what it registers, and how ``ask_user`` is described to the model."""

    @property
    def active(self) -> bool: ...

    @property
    def ask_user_description(self) -> str | None: ...

    def names(self) -> tuple[str, ...]: ...


@dataclass(frozen=True, slots=True)
class InteractionToolSpec:
    """One interaction described as a tool; the composition root binds it.

    A description rather than a runtime tool, so this package does not
    decide the runtime's tool type.
    """

    name: str
    description: str
    coroutine: Callable[..., Awaitable[Any]]
    parameters: tuple[str, ...] = ()


def ask_user_tool_spec(refusal: str = REFUSAL) -> InteractionToolSpec:
    """The door for ``ask_user``, the one interaction whose shape we know.

    A deployment's own interaction binds its own tool under its registered
    name; guessing a signature for a schema we cannot read would advertise a
    tool the model could not call correctly.
    """

    return refusing_tool_spec(
        ASK_USER,
        (
            "Ask the person who started this run one or more questions and stop until "
            "they answer. Use it only when you cannot proceed correctly without a "
            "decision only they can make; offer options when the choices are known."
        ),
        refusal=refusal,
        parameters=("questions",),
    )


def refusing_tool_spec(
    name: str, description: str, *, refusal: str, parameters: tuple[str, ...]
) -> InteractionToolSpec:
    """An interaction's door: a tool whose body only ever answers ``refusal``, since the
    pause stage stops the run before the body of a call that fits is reached."""

    async def refuse(**arguments: Any) -> str:
        # Reached only when the stage declined, and often because the model's
        # arguments were wrong: a wrong key, extra keys or unparsed text must
        # still get the refusal, never a TypeError from the call itself.
        del arguments
        return refusal

    return InteractionToolSpec(
        name=name, description=description, coroutine=refuse, parameters=parameters
    )


def pause_stage() -> StageDescriptor:
    """The ``pre-tool`` stage a pause happens in; it declares no effect family.

    Minting a token and saving the turn use the capability's own ports, not
    an effect the plan grants; declaring one it was not granted would be
    refused at fold.
    """
    return StageDescriptor(
        stage_id=PAUSE_STAGE_ID, phase=Phase.PRE_TOOL, capability=CAPABILITY_NAME
    )


def build_contribution(
    capability: Offering,
    request: CapabilityRequest,
    *,
    binding: Callable[[], PauseBinding | None] | None,
    encode_token: Callable[[MintedToken], str] | None,
) -> CapabilityContribution:
    """Fold the capability into a stage, its handler and (if registered) ask_user."""
    del request  # Nothing here needs a grant; see pause_stage.
    if not capability.active or binding is None or encode_token is None:
        # Still named, so a plan shows the capability was folded and had
        # nothing to offer, rather than that it was forgotten.
        return CapabilityContribution(capability=CAPABILITY_NAME)
    stage = pause_stage()
    tools: tuple[InteractionToolSpec, ...] = ()
    if ASK_USER in capability.names():
        spec = ask_user_tool_spec()
        if capability.ask_user_description:
            spec = dataclasses.replace(spec, description=capability.ask_user_description)
        tools = (spec,)
    return CapabilityContribution(
        capability=CAPABILITY_NAME,
        stages=(stage,),
        handlers={stage.stage_id: pause_handler(capability, binding, encode_token)},
        tools=tools,
    )
