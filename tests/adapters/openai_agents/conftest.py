"""The Agents SDK under test exports no traces: nothing here may reach the network."""

from __future__ import annotations

from agents import set_tracing_disabled

set_tracing_disabled(True)
