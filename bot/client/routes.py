"""``bot.contract.routes``, where the server and the client share it; kept importable from
here so code written against the client's old module path still runs."""

from bot.contract.routes import *  # noqa: F403
