"""Every error the client raises, under one base so a caller can catch them once.

HTTP errors carry the API's status, code and one-sentence message; the
outcome errors (``Expired``, ``Cancelled``, ``Rejected``) say how a question
closed when the caller needed it answered or approved.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

# Defined in the contract, whose models raise them; public here, with the rest.
from bot.contract.errors import BridgeError as BridgeError
from bot.contract.errors import FormAnswerError as FormAnswerError
from bot.contract.errors import FormSchemaError as FormSchemaError
from bot.contract.errors import JsonTextError as JsonTextError

if TYPE_CHECKING:
    from bot.contract.models import QuestionObject


class InvalidWebhook(BridgeError):
    """A webhook whose signature, timestamp or body does not verify."""


class TransportError(BridgeError):
    """The bridge could not be reached or answered with something not JSON."""


class ApiError(BridgeError):
    """The bridge answered with an error envelope."""

    def __init__(self, message: str, *, question: QuestionObject | None = None) -> None:
        super().__init__(message)
        self.question = question


class InvalidRequest(ApiError):
    status = 400
    code = "invalid_request"


class Unauthorized(ApiError):
    status = 401
    code = "unauthorized"


class Forbidden(ApiError):
    status = 403
    code = "forbidden"


class NotFound(ApiError):
    status = 404
    code = "not_found"


class Conflict(ApiError):
    """409; ``question`` is the closed question when the body carries it."""

    status = 409
    code = "conflict"


class PayloadTooLarge(ApiError):
    status = 413
    code = "payload_too_large"


class Unprocessable(ApiError):
    status = 422
    code = "unprocessable"


class RateLimited(ApiError):
    """429; ``retry_after`` is the seconds the bridge said to wait (``Retry-After``), if any."""

    status = 429
    code = "rate_limited"

    def __init__(
        self,
        message: str,
        *,
        question: QuestionObject | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message, question=question)
        self.retry_after = retry_after


class UnexpectedStatus(ApiError):
    """A status the contract does not name (a proxy's 502, say)."""

    def __init__(self, message: str, *, status: int) -> None:
        super().__init__(message)
        self.status = status


class Outcome(BridgeError):
    """The question closed, but not with the answer the caller needed."""

    def __init__(self, message: str, *, question: QuestionObject) -> None:
        super().__init__(message)
        self.question = question


class WaitTimeout(BridgeError, TimeoutError):
    """``wait(timeout=...)`` ran out with the question still open; wait again to go on."""

    def __init__(self, message: str, *, question: QuestionObject) -> None:
        super().__init__(message)
        self.question = question


class Expired(Outcome):
    """Nobody answered before the question's TTL ran out."""


class Cancelled(Outcome):
    """Cancelled by the API, an admin, or a delivery that failed for good."""

    def __init__(self, reason: str, *, question: QuestionObject) -> None:
        super().__init__(reason or "The question was cancelled.", question=question)
        self.reason = reason


class Rejected(Outcome):
    """The approver rejected the action; ``comment`` is what they wrote."""

    def __init__(self, comment: str, *, question: QuestionObject) -> None:
        super().__init__(comment or "The action was rejected.", question=question)
        self.comment = comment


BY_CODE: dict[str, type[ApiError]] = {
    cls.code: cls
    for cls in (
        InvalidRequest,
        Unauthorized,
        Forbidden,
        NotFound,
        Conflict,
        PayloadTooLarge,
        Unprocessable,
        RateLimited,
    )
    if cls.code is not None
}
