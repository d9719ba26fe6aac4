"""How often the serving process signs a checkpoint of the audit's chains."""

from __future__ import annotations

from pydantic import Field

from bot.component_settings import ComponentSettings


class AuditSettings(ComponentSettings):
    """Minutes between checkpoints (one is also signed at every clean stop)."""

    checkpoint_minutes: float = Field(5.0, alias="BOT_AUDIT_CHECKPOINT_MINUTES", gt=0, le=1440)
