"""The client's error base, and the errors its models raise while checking a request.

A leaf, so that the modules the wire models are built from (``identity``,
``form_schema``) can raise them without importing ``bot.client.errors``,
whose API and outcome errors carry a ``QuestionObject`` of ``models``.
``bot.client.errors`` re-exports them with the rest: import them from there.
"""

from __future__ import annotations


class BridgeError(Exception):
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
