"""The MCP server's settings: where questions go, who may approve, how long a call waits.

Read by ``python -m bot mcp`` (stdio, with the bridge's URL and an API key)
and by the bridge itself for ``/mcp`` (``BOT_MCP_HTTP``), where each caller
brings its own API key. This module imports no ``mcp``: the bridge reads it
whether or not the extra is installed.
"""

from __future__ import annotations

from pydantic import Field, field_validator

from bot.component_settings import ComponentSettings, CsvList, Secret

# Under most MCP clients' tool timeouts, which are a minute or more.
DEFAULT_WAIT_SECONDS = 45.0


class McpSettings(ComponentSettings):
    """The MCP tools' route and answerers, the wait per call, and (stdio) the bridge to call."""

    http: bool = Field(False, alias="BOT_MCP_HTTP")
    bridge_url: str | None = Field(None, alias="BOT_MCP_BRIDGE_URL")
    api_key: Secret = Field(None, alias="BOT_MCP_API_KEY")
    route: str | None = Field(None, alias="BOT_MCP_ROUTE")
    answerers: CsvList = Field(default_factory=list, alias="BOT_MCP_ANSWERERS")
    wait_seconds: float = Field(DEFAULT_WAIT_SECONDS, alias="BOT_MCP_WAIT_SECONDS", ge=0, le=3600)

    @field_validator("route")
    @classmethod
    def _route_reads(cls, value: str | None) -> str | None:
        if value is not None:
            surface, sep, conversation = value.partition(":")
            if not sep or not surface or not conversation:
                raise ValueError("must read surface:conversation, e.g. slack:C123 or console:ops")
        return value

    @field_validator("bridge_url")
    @classmethod
    def _url_reads(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError("must be the bridge's http(s) URL, e.g. http://127.0.0.1:8000")
        return value
