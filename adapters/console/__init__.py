"""The console: a local web page that is the embedded default surface.

It translates page requests into ``RunService`` calls and nothing more:
whether a token is good, who may answer and whether an answer fits are
decided in ``bot/``, exactly as for Slack and Teams. The page itself is
static (``static/``) and draws everything from the JSON API.
"""

from adapters.console._hub import EventHub, Subscription
from adapters.console._mount import mount_console
from adapters.console._streams import ConsoleLimits
from adapters.console._surface import ConsoleSurface

__all__ = ["ConsoleLimits", "ConsoleSurface", "EventHub", "Subscription", "mount_console"]
