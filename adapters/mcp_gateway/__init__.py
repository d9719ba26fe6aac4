"""The MCP approval gateway: an MCP server in front of other MCP servers, whose risky calls
wait for a person's approval through the bridge.

The boundary: a client of ``/v1`` through ``bot.client`` (as ``adapters.mcp`` is),
and of its upstream servers through the ``mcp`` SDK; served over stdio
(``python -m bot mcp-gateway``) or on the bridge at ``/mcp/gateway``. Needs the
``mcp`` extra, so the names below load on first use; ``settings`` imports no
``mcp``. See docs/agents/mcp-gateway.md.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from adapters._extras import needs_extra

if TYPE_CHECKING:
    from adapters.mcp_gateway._config import GatewayConfigError, GatewayFile, load_gateway_file
    from adapters.mcp_gateway._gateway import Caller, Gateway
    from adapters.mcp_gateway._http import mount_gateway
    from adapters.mcp_gateway._start import new_gateway
    from adapters.mcp_gateway._stdio import serve_gateway_stdio

__all__ = [
    "Caller",
    "Gateway",
    "GatewayConfigError",
    "GatewayFile",
    "load_gateway_file",
    "mount_gateway",
    "new_gateway",
    "serve_gateway_stdio",
]

_HOME = {
    "Caller": "_gateway",
    "Gateway": "_gateway",
    "GatewayConfigError": "_config",
    "GatewayFile": "_config",
    "load_gateway_file": "_config",
    "mount_gateway": "_http",
    "new_gateway": "_start",
    "serve_gateway_stdio": "_stdio",
}


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    with needs_extra(__name__, "mcp", "mcp"):
        return getattr(importlib.import_module(f"{__name__}.{_HOME[name]}"), name)
