"""The open question a click or a submission on a surface is for, found one way everywhere.

A surface's action carries the question's token, which names the question
(signed: its id, run and call), and arrives from a conversation (the scope
an answer from there carries). The question is read by that id, never by
scanning a conversation's history: a question asked through ``/v1`` is kept
under its first route's conversation, whatever thread or surface a person
answers it from. It is found only where it was posted, on its first route
or on one of its further posts (``bot.questions.posts``), and shown as that
post's surface sees it; or anywhere, for an interaction whose answers may come
from another scope, shown as its first route. What the action says is only
read here; whether the answer counts is still decided by ``RunService.redeem``.

Not finding a question leaves a surface nothing to shape an answer with, so
it is not found only where ``redeem`` refuses any answer to that token (it
does not read, names a question that is no longer open, or comes from a
scope the question was not posted in) or where the action contradicts its
own token, never because of where the question was stored.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from bot.human.capability import HumanInteractionCapability
from bot.human.tokens import TokenClaims, TokenError
from bot.questions import posts
from bot.questions.records import Question, QuestionStatus, RunRecord
from bot.service.running.known import KnownRuns
from bot.stores.ports import Stores

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class PostedQuestion:
    """An open question and its run, as the post an action came from shows them."""

    run: RunRecord
    question: Question


class PostedQuestions:
    """Finds the open question a token names, posted where the action came from."""

    def __init__(
        self, capability: HumanInteractionCapability, stores: Stores, known: KnownRuns
    ) -> None:
        self._capability = capability
        self._stores = stores
        self._known = known

    async def find(
        self, token: str, *, surface: str, scope: str, interrupt_id: str = ""
    ) -> PostedQuestion | None:
        """The open question ``token`` answers, posted on ``surface`` in ``scope``; None if
        the token does not read, the question is closed, or it was never posted there.
        ``interrupt_id``: an id the action carries besides the token, which must agree."""
        claims = self._claims(token)
        if claims is None or interrupt_id not in ("", claims.jti):
            return None
        question = await self._stores.ledger.get(claims.jti)
        if (
            question is None
            or question.status is not QuestionStatus.OUTSTANDING
            or (question.run_id, question.tool_call_id) != (claims.sub, claims.call)
        ):
            return None
        run = await self._known.origin(question.run_id)
        if run is None:
            return None
        if run.surface == surface and question.scope == scope:
            return PostedQuestion(run, question)
        for index, post in enumerate(question.posts):
            if post.surface == surface and post.scope == scope:
                there = posts.on_post(run, question, index)
                return PostedQuestion(*there) if there is not None else None
        registration = self._capability.registration(question.name)
        if registration is not None and registration.cross_scope_allowed:
            return PostedQuestion(run, question)  # answered from elsewhere, as redeem allows
        return None

    def _claims(self, token: str) -> TokenClaims | None:
        """What the capability's own reader says the token names; None if it refuses it."""
        decode = self._capability.decode_token
        if not token or decode is None:
            return None
        try:
            return decode(token)
        except TokenError:
            return None
        except Exception as error:  # noqa: BLE001 - any crash of the reader is a refusal
            # Its message may quote what was sent; the redeem that follows names the reader.
            log.warning("the capability's reader raised %s on a token", type(error).__name__)
            return None
