"""The human-interaction capability: pause a turn on a question, resume on the answer.

Public names are re-exported here; the contribution/pausing split mirrors
declaration (what a compiler is offered) and behaviour (what a pause does).
"""

from bot.human.capability import (
    ASK_USER,
    CAPABILITY_NAME,
    AnswerValidationError,
    HumanInteractionCapability,
    HumanInteractionError,
    InteractionConfigurationError,
    InteractionRegistration,
    PauseEvent,
)
from bot.human.contribution import (
    PAUSE_STAGE_ID,
    REFUSAL,
    InteractionToolSpec,
    ask_user_tool_spec,
    build_contribution,
    pause_stage,
)
from bot.human.factory import (
    AskUserItem,
    AskUserOption,
    AskUserPayload,
    AskUserResponse,
    ask_user_registration,
    human_interaction,
    redemption_is_shared,
)
from bot.human.live_binding import current_run_binding
from bot.human.pausing import PauseBinding, pause_handler
from bot.human.tokens import (
    MintedToken,
    SigningKey,
    TokenClaims,
    TokenError,
    TokenExpiredError,
    TokenInvalidError,
    TokenSigner,
    parse_signing_keys,
)
from bot.human.ttl import DEFAULT_TTL, TTLPolicy, TTLSettings

__all__ = [
    "ASK_USER",
    "CAPABILITY_NAME",
    "DEFAULT_TTL",
    "PAUSE_STAGE_ID",
    "REFUSAL",
    "AnswerValidationError",
    "AskUserItem",
    "AskUserOption",
    "AskUserPayload",
    "AskUserResponse",
    "HumanInteractionCapability",
    "HumanInteractionError",
    "InteractionConfigurationError",
    "InteractionRegistration",
    "InteractionToolSpec",
    "MintedToken",
    "PauseBinding",
    "PauseEvent",
    "SigningKey",
    "TTLPolicy",
    "TTLSettings",
    "TokenClaims",
    "TokenError",
    "TokenExpiredError",
    "TokenInvalidError",
    "TokenSigner",
    "ask_user_registration",
    "ask_user_tool_spec",
    "build_contribution",
    "current_run_binding",
    "human_interaction",
    "parse_signing_keys",
    "pause_handler",
    "pause_stage",
    "redemption_is_shared",
]
