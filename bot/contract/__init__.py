"""What the server and the client agree on: the ``/v1`` contract, defined once.

Identities (``identity``), approval decisions (``decisions``) and edits
(``edits``), what each kind of question asks (``payloads``), form schemas and
their answers (``form_schema``), JSON as the bridge keeps it
(``json_values``), routes (``routes``), the options any question is asked
with (``asking``), the ``/v1`` wire models and the stored policy
(``models``), and the errors they raise under the project's one root
(``errors``).

The boundary: this package imports nothing of ``bot`` outside
``bot.contract`` (neither the server nor the client) and depends only on
pydantic, so the server validates with these very models and the client
(``bot.client``, which re-exports the names its users import) loads without
the server.
"""

from bot.contract import (
    asking,
    decisions,
    edits,
    errors,
    form_schema,
    identity,
    json_values,
    models,
    payloads,
    routes,
)

__all__ = [
    "asking",
    "decisions",
    "edits",
    "errors",
    "form_schema",
    "identity",
    "json_values",
    "models",
    "payloads",
    "routes",
]
