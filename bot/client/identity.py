"""``bot.contract.identity``, where the server and the client share it; kept importable from
here so code written against the client's old module path still runs."""

from bot.contract.identity import *  # noqa: F403
