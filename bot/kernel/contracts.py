"""What a capability hands the kernel, and the fold that checks it.

A capability never edits a turn directly: it contributes stages (code that
runs at a fixed phase of a round) and tool specs (doors the model can call).
``fold_contributions`` is the one place those are checked against what the
plan granted, so a capability cannot quietly take an effect it was not given.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Generic, Protocol, TypeVar

from bot.errors import BotError

T = TypeVar("T")


class Phase(StrEnum):
    """Where in a round a stage runs."""

    PRE_MODEL = "pre-model"
    POST_MODEL = "post-model"
    PRE_TOOL = "pre-tool"
    POST_TOOL = "post-tool"


class EffectFamily(StrEnum):
    """Kinds of side effect a stage may have; a plan grants them per capability."""

    NETWORK = "network"
    FILESYSTEM = "filesystem"
    MESSAGING = "messaging"
    MEMORY = "memory"


@dataclass(frozen=True, slots=True)
class StageDescriptor:
    """A stage's identity and the one effect family it needs, if any."""

    stage_id: str
    phase: Phase
    capability: str
    effect_family: EffectFamily | None = None


@dataclass(frozen=True, slots=True)
class StageResult(Generic[T]):
    """What a stage did: ``changed`` with a value, or nothing with a reason."""

    changed: bool
    reason: str = ""
    value: T | None = None


def no_change(reason: str) -> StageResult[Any]:
    """A stage looked and had nothing to do; the reason lands in the trace."""
    return StageResult(changed=False, reason=reason)


StageHandler = Callable[[Any], Awaitable[StageResult[Any]]]


class ContributedToolSpec(Protocol):
    """A tool described by a capability; the composition root binds it."""

    @property
    def name(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def coroutine(self) -> Callable[..., Awaitable[Any]]: ...
    @property
    def parameters(self) -> tuple[str, ...]: ...


@dataclass(frozen=True, slots=True)
class CapabilityRequest:
    """What the plan asks of one capability, with the effect families it grants."""

    capability: str
    grants: frozenset[EffectFamily] = frozenset()


@dataclass(frozen=True, slots=True)
class CapabilityContribution:
    """A capability's stages, their handlers and its tool specs.

    An empty contribution still names its capability so a plan can tell
    "folded and found nothing to offer" from "never folded".
    """

    capability: str
    stages: tuple[StageDescriptor, ...] = ()
    handlers: Mapping[str, StageHandler] = field(default_factory=dict)
    tools: tuple[ContributedToolSpec, ...] = ()


class Capability(Protocol):
    """Anything an Agent can fold: it names itself and contributes on request."""

    @property
    def name(self) -> str: ...

    def contribute(self, request: CapabilityRequest) -> CapabilityContribution: ...


@dataclass(frozen=True, slots=True)
class FoldedPlan:
    """Every contribution merged, in contribution order."""

    capabilities: tuple[str, ...]
    stages: tuple[StageDescriptor, ...]
    handlers: Mapping[str, StageHandler]
    tools: tuple[ContributedToolSpec, ...]
    # Each phase's stages, sorted out once: a turn asks for them at every phase.
    _by_phase: Mapping[Phase, tuple[StageDescriptor, ...]] = field(
        init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        by_phase = {phase: tuple(s for s in self.stages if s.phase is phase) for phase in Phase}
        object.__setattr__(self, "_by_phase", by_phase)

    def stages_at(self, phase: Phase) -> tuple[StageDescriptor, ...]:
        return self._by_phase[phase]


class ContributionError(BotError):
    """A contribution does not fit the plan; the message names the piece."""


def fold_contributions(
    contributions: Iterable[CapabilityContribution],
    requests: Sequence[CapabilityRequest],
) -> FoldedPlan:
    """Merge contributions, refusing ungranted effects and duplicate names."""
    grants = {request.capability: request.grants for request in requests}
    names: list[str] = []
    stages: list[StageDescriptor] = []
    handlers: dict[str, StageHandler] = {}
    tools: dict[str, ContributedToolSpec] = {}
    for contribution in contributions:
        names.append(contribution.capability)
        granted = grants.get(contribution.capability, frozenset())
        for stage in contribution.stages:
            if stage.effect_family is not None and stage.effect_family not in granted:
                raise ContributionError(
                    f"stage {stage.stage_id!r} of {contribution.capability!r} declares the "
                    f"{stage.effect_family.value!r} effect family, which the plan did not "
                    "grant. Grant it in the CapabilityRequest or drop it from the stage."
                )
            if stage.stage_id in handlers:
                raise ContributionError(
                    f"stage id {stage.stage_id!r} is contributed twice; stage ids must be unique."
                )
            handler = contribution.handlers.get(stage.stage_id)
            if handler is None:
                raise ContributionError(
                    f"stage {stage.stage_id!r} of {contribution.capability!r} has no handler."
                )
            stages.append(stage)
            handlers[stage.stage_id] = handler
        for tool in contribution.tools:
            if tool.name in tools:
                raise ContributionError(
                    f"tool {tool.name!r} is contributed twice; tool names must be unique."
                )
            tools[tool.name] = tool
    return FoldedPlan(
        capabilities=tuple(names),
        stages=tuple(stages),
        handlers=handlers,
        tools=tuple(tools.values()),
    )
