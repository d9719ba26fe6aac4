"""Slack: runs started from mentions and DMs, questions as Block Kit, answers by button or modal.

A thin translation layer: whether a token is good, who may answer and
whether an answer fits are decided in ``bot/``. Rendering (``_render``,
``_modals``) is pure; ``SlackSurface`` does the Web API calls;
``SlackBridge`` mounts bolt on our aiohttp app and runs Socket Mode.
"""

from adapters.slack._bridge import SlackBridge
from adapters.slack._surface import SlackDirectory, SlackSurface

__all__ = ["SlackBridge", "SlackDirectory", "SlackSurface"]
