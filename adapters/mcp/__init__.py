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
from adapters._renamed import old_names

if TYPE_CHECKING:
    from adapters.mcp._http import behind_api_keys, mount_mcp, presented_key
    from adapters.mcp._stdio import McpConfigError, serve_stdio
    from adapters.mcp._tools import BridgeTools, ToolResult, build_server, tool_result_of

__all__ = [
    "BridgeTools",
    "McpConfigError",
    "ToolResult",
    "behind_api_keys",
    "build_server",
    "mount_mcp",
    "presented_key",
    "serve_stdio",
    "tool_result_of",
]

_HOME = {
    "BridgeTools": "_tools",
    "McpConfigError": "_stdio",
    "ToolResult": "_tools",
    "behind_api_keys": "_http",
    "build_server": "_tools",
    "mount_mcp": "_http",
    "presented_key": "_http",
    "tool_result_of": "_tools",
    "serve_stdio": "_stdio",
}


# ``Outcome`` was also the client's exception for a question closed without the answer needed.
_old_name = old_names(__name__, {"Outcome": "ToolResult", "outcome_of": "tool_result_of"})


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        return _old_name(name)
    with needs_extra(__name__, "mcp", "mcp"):
        return getattr(importlib.import_module(f"{__name__}.{_HOME[name]}"), name)
