"""``approval``: a deployment's own typed interaction, bound under its own tool.

It exists to prove that an interaction the capability knows nothing about
pauses and resumes exactly as ``ask_user`` does.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

# The payload is defined once, with the client, for every door.
from bot.client.payloads import ApprovalPayload as ApprovalPayload
from bot.human.capability import InteractionRegistration
from bot.human.contribution import InteractionToolSpec
from bot.kernel.tools import Tool, bind_contributed_tool

APPROVAL = "approval"
APPROVAL_REFUSAL = (
    "Approval could not be requested: this run cannot pause, or the call did not fit "
    "(action, summary, arguments, risk of low/medium/high). Do not perform the action."
)


class ApprovalResponse(BaseModel):
    """Approve or reject, with an optional comment."""

    model_config = ConfigDict(extra="forbid")
    decision: Literal["approve", "reject"]
    comment: str = Field(default="", max_length=1000)


def approval_registration(*, ttl: timedelta | None = None) -> InteractionRegistration:
    return InteractionRegistration(
        name=APPROVAL,
        payload_schema=ApprovalPayload,
        response_schema=ApprovalResponse,
        ttl=ttl,
    )


def approval_tool() -> Tool:
    """The deployment's door to ``approval``, with the payload's own schema."""

    async def approval(**_arguments: Any) -> str:
        return APPROVAL_REFUSAL

    spec = InteractionToolSpec(
        name=APPROVAL,
        description=(
            "Ask a person to approve an action before you take it. Stop until they "
            "approve or reject; never perform the action on a rejection."
        ),
        coroutine=approval,
        parameters=("action", "summary", "arguments", "risk"),
    )
    return bind_contributed_tool(spec, parameters_schema=ApprovalPayload.model_json_schema())
