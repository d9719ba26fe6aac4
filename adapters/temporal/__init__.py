"""Temporal workflows ask a person through the bridge and wait for the answer durably.

The boundary: a thin client of ``/v1`` through ``bot.client``. Workflow code
calls ``hitl.ask_human`` / ``hitl.request_approval`` / ``hitl.form``; the
worker registers ``BridgeActivities``; the close comes back through
``Receiver`` (the bridge's webhook as a Temporal update) or a long-poll
activity. The server never imports this package. See docs/agents/temporal.md.
"""

from adapters._extras import needs_extra

with needs_extra("adapters.temporal", "temporal", "temporalio"):
    from temporalio import workflow

    # Workflow code imports this package inside Temporal's sandbox; what it
    # brings is passed through, so the sandbox never re-imports aiohttp or pydantic.
    with workflow.unsafe.imports_passed_through():
        from adapters.temporal import hitl
        from adapters.temporal._activities import BridgeActivities
        from adapters.temporal._receiver import Receipt, Receiver, serve_receiver

__all__ = [
    "BridgeActivities",
    "Receipt",
    "Receiver",
    "hitl",
    "serve_receiver",
]
