"""Answer links: a signed URL that opens one question's page for one answerer (``/q/...``).

A link is a capability handed to a person outside chat (in an email, a
ticket, a PR comment): whoever holds it may answer that one question as
that one answerer, from the page it opens, until the question expires.
So the link token

- is signed with the deployment's keys (``BOT_SIGNING_KEYS``, the first
  signs, all verify) under an audience of its own: a resume token is never
  a link and a link is never a resume token, though both use the same keys;
- names the question (``jti``) and the answerer (``sub``), and the answer
  the page shows chosen (``pre``, never an answer by itself);
- expires with the question (``exp``); the page also honours a question an
  admin extended since (``LinkClaims.expired``), since its expiry is the
  question's and not the link's;
- never carries the resume token, which stays inside the bridge: the page
  re-derives it from the question's row when a person answers.

It is not single-use: a mail scanner that opens it, or a person who opens
it twice, only reads the page (answering is a POST from the page). A
token is a secret and never reaches a log (``bot.logs`` keeps ``/q/...``
paths out of the access log).
"""

from __future__ import annotations

import hashlib
import math
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import jwt
from aiohttp import web

from bot.human.tokens import (
    DEFAULT_ISSUER,
    SigningConfigError,
    SigningKey,
    TokenExpiredError,
    TokenInvalidError,
)
from bot.questions.quorum import MayAnswer
from bot.questions.records import Question, QuestionStatus, RunRecord

LINK_AUDIENCE = "chatops-bridge/answer-link"
# The page's per-page form value (its CSRF value): signed too, bound to the link it was drawn for.
PAGE_AUDIENCE = "chatops-bridge/answer-page"
# How long a drawn page may wait before its form is sent; past it, the person reloads.
PAGE_SECONDS = 86_400
LINK_PATH = "/q/"
# Far more than any link needs (ids are at most a few hundred characters); a longer
# path segment is refused before it is parsed.
MAX_LINK_TOKEN_CHARS = 2000


class LinkInvalidError(TokenInvalidError):
    """Not a link this bridge signed: forged, tampered, another audience, or not a token."""


class LinkExpiredError(TokenExpiredError):
    """A link this bridge signed, past its question's expiry."""


@dataclass(frozen=True, slots=True)
class LinkClaims:
    """What a link says: which question, whose answer, until when, and what to show chosen."""

    interrupt_id: str
    answerer: str
    expires_at: int
    preselect: str | None = None

    def expired(self, now: float, question: Question | None = None) -> bool:
        """Past its expiry. Given ``question``, the one it names, the question's row decides
        while it can: expired by the sweeper (though the link's own time may not have come),
        or open until its expiry (which an admin may have extended)."""
        if question is None or question.interrupt_id != self.interrupt_id:
            return now >= self.expires_at
        match question.status:
            case QuestionStatus.EXPIRED:
                return True
            case QuestionStatus.OUTSTANDING:
                return now >= question.expires_at
            case _:
                return now >= self.expires_at


class AnswerLinks:
    """Mints and reads answer links; surfaces that hand links out get one from the app.

    ``public_url`` is ``BOT_PUBLIC_URL`` (the links are absolute: they leave
    the bridge); the keys are the resume tokens' (``keys_from``).
    """

    def __init__(self, keys: Sequence[SigningKey], *, public_url: str) -> None:
        if not keys:
            raise SigningConfigError("answer links need at least one signing key.")
        self._signing = keys[0]
        self._by_kid = {key.kid: key for key in keys}
        self.public_url = public_url.rstrip("/")

    def url_for(self, question: Question, answerer: str, *, preselect: str | None = None) -> str:
        """The absolute URL of ``question``'s page for ``answerer`` (a canonical identity)."""
        return (
            f"{self.public_url}{LINK_PATH}{self.token_for(question, answerer, preselect=preselect)}"
        )

    def token_for(self, question: Question, answerer: str, *, preselect: str | None = None) -> str:
        claims: dict[str, Any] = {
            "iss": DEFAULT_ISSUER,
            "aud": LINK_AUDIENCE,
            "jti": question.interrupt_id,
            "sub": answerer,
            # Whole seconds, rounded up: the link lives as long as the question, not shorter.
            "exp": math.ceil(question.expires_at),
        }
        if preselect is not None:
            claims["pre"] = preselect
        key = self._signing
        return jwt.encode(claims, key.signing, algorithm=key.algorithm, headers={"kid": key.kid})

    def read(self, token: str) -> LinkClaims:
        """The claims of a link this bridge signed, whatever the clock says.

        Expiry is the caller's to judge (``LinkClaims.expired``), against the
        question's row: an extended question keeps its links working.
        """
        if not isinstance(token, str) or not token or len(token) > MAX_LINK_TOKEN_CHARS:
            raise LinkInvalidError("not an answer link")
        try:
            key = self._key_of(token)
        except jwt.PyJWTError as error:
            raise LinkInvalidError("not an answer link") from error
        if key is None:
            raise LinkInvalidError("signed by a key this bot does not hold")
        try:
            # Expiry is the caller's to judge (above); no other time claim is minted.
            data = _decoded(token, key, LINK_AUDIENCE, ["jti", "sub", "exp", "aud", "iss"])
        except jwt.PyJWTError as error:
            raise LinkInvalidError("the link does not check out") from error
        interrupt_id, answerer = data.get("jti"), data.get("sub")
        expires_at, preselect = data.get("exp"), data.get("pre")
        if not (isinstance(interrupt_id, str) and interrupt_id and isinstance(answerer, str)):
            raise LinkInvalidError("the link names no question or no answerer")
        if not isinstance(expires_at, int) or isinstance(expires_at, bool):
            raise LinkInvalidError("the link's expiry has the wrong type")
        if preselect is not None and not isinstance(preselect, str):
            raise LinkInvalidError("the link's preselected answer has the wrong type")
        return LinkClaims(interrupt_id, answerer, expires_at, preselect)

    def page_value(self, token: str, *, now: float) -> str:
        """A fresh value for one drawing of ``token``'s page, its form's CSRF field.

        Signed (any replica checks it), bound to this link, and carrying a nonce
        of its own: the nonce is the answer's idempotency key, so the same form
        sent twice is one answer.
        """
        claims = {
            "iss": DEFAULT_ISSUER,
            "aud": PAGE_AUDIENCE,
            "sub": _digest(token),
            "jti": secrets.token_urlsafe(16),
            "iat": int(now),
            "exp": int(now) + PAGE_SECONDS,
        }
        key = self._signing
        return jwt.encode(claims, key.signing, algorithm=key.algorithm, headers={"kid": key.kid})

    def page_nonce(self, value: str, token: str, *, now: float) -> str | None:
        """The nonce of a page value drawn for ``token`` and still fresh; None otherwise."""
        if not isinstance(value, str) or not value or len(value) > MAX_LINK_TOKEN_CHARS:
            return None
        try:
            key = self._key_of(value)
            if key is None:
                return None
            # Times are judged by the bridge's clock, below, not by PyJWT's.
            data = _decoded(value, key, PAGE_AUDIENCE, ["jti", "sub", "exp"])
        except jwt.PyJWTError:
            return None
        nonce, expires_at = data.get("jti"), data.get("exp")
        if data.get("sub") != _digest(token) or not isinstance(nonce, str):
            return None
        if not isinstance(expires_at, int) or expires_at <= now:
            return None
        return nonce

    def _key_of(self, token: str) -> SigningKey | None:
        """The key of ours whose id the token's header names; None when we hold none such.
        Raises ``jwt.PyJWTError`` on a header that does not parse."""
        kid = jwt.get_unverified_header(token).get("kid")
        return self._by_kid.get(kid) if isinstance(kid, str) else None

    def read_live(self, token: str, *, now: float, question: Question | None = None) -> LinkClaims:
        """``read``, refusing (LinkExpiredError) a link past its question's expiry."""
        claims = self.read(token)
        if claims.expired(now, question):
            raise LinkExpiredError("the link is past its question's expiry")
        return claims


LINK_SURFACE = "link"
LINK_PREFIX = "link:"


def link_ids(answerers: Sequence[str]) -> list[str]:
    """The ids of the ``link:<id>`` answerers, in order: one answer link each."""
    return [a.removeprefix(LINK_PREFIX) for a in answerers if a.startswith(LINK_PREFIX)]


class LinkSurface:
    """The surface of a question routed to ``link:<id>``: nothing is posted anywhere.

    The agent got the links in the 201 and hands them out itself; the page
    (``/q/...``) reads the question's row, so there is nothing to edit on a
    close and no thread for an outcome.
    """

    name = LINK_SURFACE

    async def publish_question(
        self, run: RunRecord, question: Question, *, token: str, may: MayAnswer
    ) -> dict[str, Any] | None:
        # A reference all the same: the question counts as posted (its delivery "posted").
        return {"surface": LINK_SURFACE, "conversation": str(run.conversation.get("key", ""))}

    async def show_closed(self, run: RunRecord, record: Question) -> None:
        return None

    async def post_outcome(self, run: RunRecord, text: str, *, failed: bool = False) -> None:
        return None


def _decoded(token: str, key: SigningKey, audience: str, require: list[str]) -> dict[str, Any]:
    """The verified claims of a token we minted for ``audience``, with ``require`` present.

    The key decides the algorithm: ``alg: none`` or another is refused. No time
    claim is checked here: the caller judges times by the bridge's clock. Raises
    ``jwt.PyJWTError`` when the token does not verify.
    """
    return jwt.decode(
        token,
        key.verifying,
        algorithms=[key.algorithm],
        audience=audience,
        issuer=DEFAULT_ISSUER,
        options={
            "verify_exp": False,
            "verify_iat": False,
            "verify_nbf": False,
            "require": require,
        },
    )


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()[:32]


# Where the composition root (``bot.app.root``) keeps the app's one ``AnswerLinks``.
ANSWER_LINKS = web.AppKey("answer_links", AnswerLinks)
