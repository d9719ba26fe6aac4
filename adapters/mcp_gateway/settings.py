"""The gateway's one setting: the path of its file (``BOT_MCP_GATEWAY``).

Read by ``python -m bot mcp-gateway`` (stdio, asking the bridge as ``python -m
bot mcp`` does, with ``BOT_MCP_BRIDGE_URL`` and ``BOT_MCP_API_KEY``) and by the
bridge itself, which serves the gateway at ``/mcp/gateway`` when it is set.
This module imports no ``mcp``: the bridge reads it whether or not the extra is
installed. See docs/agents/mcp-gateway.md.
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import Field

from bot.component_settings import ComponentSettings


class GatewaySettings(ComponentSettings):
    """Where the gateway's file is; unset, there is no gateway."""

    file: Path | None = Field(None, alias="BOT_MCP_GATEWAY")

    def secret_values(self) -> list[str]:
        """The secrets the file hands its upstreams (``env`` and ``headers`` values, read from
        the environment), so the log filter hides them as it hides every other setting's; a
        file that cannot be read has none here, and is refused where it is loaded."""
        if self.file is None:
            return []
        from adapters.mcp_gateway._config import (
            GatewayConfigError,
            load_gateway_file,
            variables_in,
        )

        try:
            loaded = load_gateway_file(self.file)
        except GatewayConfigError:
            return []
        given = [
            secret.get_secret_value()
            for upstream in loaded.upstreams
            for secret in (*upstream.env.values(), *upstream.headers.values())
        ]
        # Each ${VAR} on its own too: a log line may carry the token without "Bearer ".
        named = [os.environ.get(name, "") for name in variables_in(self.file.read_text())]
        return [value for value in (*given, *named) if value]
