"""What the MCP process tests share: the approval their tool calls ask for, and how a tool
result is read."""

from __future__ import annotations

from typing import Any

DEPLOY = {
    "action": "deploy",
    "summary": "Deploy web 1.5 to prod",
    "arguments": {"service": "web", "version": "1.5"},
    "risk": "high",
}


def structured(result: Any) -> dict[str, Any]:
    """A tool call's structured content, once it is known not to be an error."""
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return dict(result.structured_content)
