"""The agents API client: ask a person through the bridge from any agent or script.

The boundary: this package imports neither the server nor anything else under
``bot`` outside ``bot.client``, and depends only on aiohttp and pydantic, so an
agent can install and import it alone. The bridge imports its wire models
(``bot.client.models``) and form checks (``bot.client.form_schema``) from here,
never the reverse.
"""
