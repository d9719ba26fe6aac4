"""The project's one error root, and the errors the contract raises while checking a request.

``BotError`` is the base of every error the server and the client raise on
purpose; ``BridgeError`` is the client's branch of it, which the contract's
own errors join so an agent catches them with the client's. They live here,
a leaf the contract's modules raise from, because the contract imports
neither the server (whose ``bot.errors`` re-exports ``BotError``) nor the
client (whose ``bot.client.errors`` re-exports the rest with its API and
outcome errors).
"""

from __future__ import annotations


class BotError(Exception):
    """Base of every error this package raises on purpose."""


class BridgeError(BotError):
    """Base of the client's errors; ``message`` is the API's one sentence."""

    status: int | None = None
    code: str | None = None

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class FormSchemaError(BridgeError, ValueError):
    """A form schema or answer outside the elicitation subset; names the property."""

    code = "invalid_request"


class FormAnswerError(FormSchemaError):
    """An answer that does not fit its form; ``fields`` holds each property's problem."""

    def __init__(self, fields: dict[str, str]) -> None:
        self.fields = fields
        name, problem = next(iter(fields.items()))
        joined = " " if problem.startswith("is ") else ": "
        super().__init__(f"property {name!r}{joined}{problem}.")


class JsonTextError(BridgeError, ValueError):
    """Text that is not JSON the bridge keeps; ``message`` is a phrase for beside the field,
    and ``syntax`` says the text is not JSON at all (rather than JSON holding NaN, Infinity, a
    number past a double, or nesting too deep)."""

    code = "invalid_request"

    def __init__(self, problem: str, *, syntax: bool = False) -> None:
        super().__init__(problem)
        self.syntax = syntax
