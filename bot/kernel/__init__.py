"""The agent runtime capabilities plug into: contracts, turns, tools, pauses."""

from bot.kernel.contracts import (
    CapabilityContribution,
    CapabilityRequest,
    ContributionError,
    EffectFamily,
    FoldedPlan,
    Phase,
    StageDescriptor,
    StageResult,
    fold_contributions,
    no_change,
)
from bot.kernel.interrupts import InvocationPaused, PendingInterrupt
from bot.kernel.journal import CallContext, Journal, NoJournal, current_call
from bot.kernel.messages import Message, ModelReply, RequestedCall, ToolCall, ToolDefinition
from bot.kernel.provider import Provider
from bot.kernel.state import CheckpointVersionError, TurnRequest, TurnState, restore, snapshot
from bot.kernel.tools import Tool, bind_contributed_tool, function_tool
from bot.kernel.turn import (
    Agent,
    ContractViolationError,
    StageContext,
    StageTrace,
    TraceStatus,
    TurnCompleted,
    TurnLimitError,
    TurnOutcome,
    TurnSuspended,
    current_turn,
    require_no_crashed_stage,
)

__all__ = [
    "Agent",
    "CallContext",
    "CapabilityContribution",
    "CapabilityRequest",
    "CheckpointVersionError",
    "ContractViolationError",
    "ContributionError",
    "EffectFamily",
    "FoldedPlan",
    "InvocationPaused",
    "Journal",
    "Message",
    "ModelReply",
    "NoJournal",
    "PendingInterrupt",
    "Phase",
    "Provider",
    "RequestedCall",
    "StageContext",
    "StageDescriptor",
    "StageResult",
    "StageTrace",
    "Tool",
    "ToolCall",
    "ToolDefinition",
    "TraceStatus",
    "TurnCompleted",
    "TurnLimitError",
    "TurnOutcome",
    "TurnRequest",
    "TurnState",
    "TurnSuspended",
    "bind_contributed_tool",
    "current_call",
    "current_turn",
    "fold_contributions",
    "function_tool",
    "no_change",
    "require_no_crashed_stage",
    "restore",
    "snapshot",
]
