"""The composition root: settings, the agent spec, the aiohttp app, ``check`` and its probes.

Nothing below this package imports it: it imports every component and wires
them (``root.create_app``); the settings of each component live beside it
and are composed here (``settings.Settings``).
"""

from bot.app.agent_spec import AgentSpec, load_factory
from bot.app.root import agent_spec, create_app
from bot.app.settings import Settings, SettingsError, load_settings

__all__ = [
    "AgentSpec",
    "Settings",
    "SettingsError",
    "agent_spec",
    "create_app",
    "load_factory",
    "load_settings",
]
