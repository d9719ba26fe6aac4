"""The gateway's one setting: the path of its file (``BOT_MCP_GATEWAY``).

Read by ``python -m bot mcp-gateway`` (stdio, asking the bridge as ``python -m
bot mcp`` does, with ``BOT_MCP_BRIDGE_URL`` and ``BOT_MCP_API_KEY``) and by the
bridge itself, which serves the gateway at ``/mcp/gateway`` when it is set.
This module imports no ``mcp``: the bridge reads it whether or not the extra is
installed. See docs/agents/mcp-gateway.md.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from bot.component_settings import ComponentSettings


class GatewaySettings(ComponentSettings):
    """Where the gateway's file is; unset, there is no gateway."""

    file: Path | None = Field(None, alias="BOT_MCP_GATEWAY")
