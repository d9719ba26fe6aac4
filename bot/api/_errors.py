"""The API's refusals: one error type, its status and code, and every sentence it says."""

from __future__ import annotations

from typing import Any

from bot.errors import BotError

STATUS_OF_CODE = {
    "invalid_request": 400,
    "unauthorized": 401,
    "forbidden": 403,
    "not_found": 404,
    "conflict": 409,
    "payload_too_large": 413,
    "unprocessable": 422,
    "rate_limited": 429,
    # Not the input's fault: the store failed; the request may be sent again as is.
    "unavailable": 503,
}

NO_KEY = "Send your API key as 'Authorization: Bearer <key>'."
WRONG_KEY = (
    "That API key is not known here; check it, or make one with 'python -m bot api-key create'."
)
ROUTE_FORBIDDEN = "This API key may not post to {route}; use a key whose routes include it."
NOT_FOUND = "No question {id} was asked with this API key."
NO_LINKS = (
    "This bridge hands out no answer links; serve it with `python -m bot` (which sets "
    "BOT_PUBLIC_URL's links up), or name answerers other than link:<id>."
)
LINKS_NEED_SIGN_IN = (
    "Here whoever opens an answer link must sign in as its answerer (BOT_LINK_SIGNIN), and "
    "nobody can sign in as link:<id>; name people instead, such as email:<address> on an "
    "email route."
)
NO_SUCH_PATH = "There is no such API path; see /v1/openapi.json."
SAME_KEY_OTHER_BODY = (
    "The idempotency key {key!r} was used before with a different body; use a new key for a "
    "new question."
)
ALREADY_CLOSED = "The question is already {status}; nothing was changed."
NOT_JSON = "The body must be a JSON object."
OTHER_ORIGIN = "A page on another site sent this request; send it from an MCP client instead."
TOO_LARGE = "The body is larger than {limit} bytes; send a smaller one."
BAD_WAIT = "wait must be a whole number of seconds from 0 to 30."
BAD_LIMIT = "limit must be a whole number from 1 to 100."
BAD_STATUS = "status must be one of open, answered, expired or cancelled."
BAD_PARAMETER = "{name} is not a parameter of this request."
UNSIGNABLE_CALLBACK = (
    "The bridge has no BOT_WEBHOOK_SECRET, so it cannot sign webhooks; leave out callback_url "
    "or ask its operator to set one."
)
# The field and the character (as U+0000): the character itself would carry on into logs.
UNSTORABLE = "{field} contains the character {code}, which the bridge does not store; remove it."
# A number JSON cannot carry (``bot/contract/json_values.py``), named by where it is.
UNKEPT_NUMBER = (
    "{field} must be a finite number within ±1e308 (NaN and Infinity are not JSON); "
    "send one that is."
)
STORE_BUSY = "The bridge could not store that just now; nothing was changed. Try again."
RATE_LIMITED = (
    "This API key may create questions at {limit} a minute; nothing was created, so send "
    "it again in {seconds} seconds (Retry-After)."
)


class ApiRefusal(BotError):
    """A refused API request: an HTTP status, a code from the contract, one sentence."""

    def __init__(
        self,
        code: str,
        message: str,
        *,
        question: dict[str, Any] | None = None,
        retry_after: int | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.status = STATUS_OF_CODE[code]
        self.message = message
        self.question = question
        # Whole seconds, sent as Retry-After (a rate_limited refusal).
        self.retry_after = retry_after

    def body(self) -> dict[str, Any]:
        body: dict[str, Any] = {"error": {"code": self.code, "message": self.message}}
        if self.question is not None:
            body["question"] = self.question
        return body
