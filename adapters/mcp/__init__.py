"""The MCP server: ``ask_human``, ``request_approval`` and ``get_answer`` as MCP tools.

The boundary: a thin client of ``/v1`` through ``bot.client``, served over
stdio (``python -m bot mcp``) or on the bridge at ``/mcp``. Needs the ``mcp``
extra, so the names below load on first use: the bridge reads
``adapters.mcp.settings`` (which imports no ``mcp``) whether or not the
extra is installed, and imports the rest only when ``BOT_MCP_HTTP`` is on.
See docs/mcp.md.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from adapters._extras import needs_extra

if TYPE_CHECKING:
    from adapters.mcp._http import behind_api_keys, mount_mcp, presented_key
    from adapters.mcp._stdio import McpConfigError, serve_stdio
    from adapters.mcp._tools import BridgeTools, Outcome, build_server, outcome_of

__all__ = [
    "BridgeTools",
    "McpConfigError",
    "Outcome",
    "behind_api_keys",
    "build_server",
    "mount_mcp",
    "outcome_of",
    "presented_key",
    "serve_stdio",
]

_HOME = {
    "BridgeTools": "_tools",
    "McpConfigError": "_stdio",
    "Outcome": "_tools",
    "behind_api_keys": "_http",
    "build_server": "_tools",
    "mount_mcp": "_http",
    "outcome_of": "_tools",
    "presented_key": "_http",
    "serve_stdio": "_stdio",
}


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    with needs_extra(__name__, "mcp", "mcp"):
        return getattr(importlib.import_module(f"{__name__}.{_HOME[name]}"), name)
