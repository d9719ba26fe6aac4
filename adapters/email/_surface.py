"""Email as a Surface: each route's recipient gets the question as one message, sent by SMTP.

An email cannot be edited once sent, so a close shows nowhere but the
question's page (the links open it; it says how the question ended), and
reminders and escalations are replies that thread under the question.
A send goes through the outbox like every post: a 4xx reply or a dropped
connection raises a transient ``DeliveryError`` (retried with backoff), a
5xx a permanent one (the post fails). SMTP has no idempotency key: if the
process dies after the server took the message and before the outbox row is
marked, the next process sends it again, with the same ``Message-ID``, so a
recipient gets it at most twice and mail clients fold the two.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from email.message import EmailMessage
from typing import Any, Protocol

import aiosmtplib

from adapters.email._message import (
    Choice,
    Mailed,
    answers_of,
    message_id,
    nudge_message,
    question_message,
)
from adapters.email.settings import SmtpServer, untrusted_certificate
from bot.contract.identity import ANYONE, IdentityError, canonical, same_person
from bot.questions.quorum import MayAnswer, policy_of, tally_line
from bot.questions.quorum import voters as voters_of
from bot.questions.records import Question, RunRecord
from bot.service.delivering.messages import nudge_text
from bot.service.delivering.surfaces import DeliveryError

log = logging.getLogger(__name__)

SURFACE = "email"
NO_RECIPIENT = "The question's route names no email address; it cannot be mailed."


class Links(Protocol):
    """Mints a question's answer links; the email surface relies on it (``bot.api.links``)."""

    def url_for(self, question: Question, answerer: str, *, preselect: str | None = None) -> str:
        """The absolute URL of ``question``'s page for ``answerer``, ``preselect`` chosen."""
        ...


class EmailSurface:
    """Sends through one SMTP server; decides nothing."""

    name = SURFACE

    def __init__(
        self,
        server: SmtpServer,
        *,
        sender: str,
        links: Links,
        timeout: float = 30.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.server = server
        self.sender = sender
        self.links = links
        self.timeout = timeout
        self.clock = clock

    async def publish_question(
        self, run: RunRecord, question: Question, *, token: str, may: MayAnswer
    ) -> dict[str, Any] | None:
        """Mail the question; its links carry their own tokens (``Links``), so ``token`` is
        not used, and whoever follows one is checked by the redeem (``may``)."""
        recipient = _recipient(run)
        mailed = self._mailed(run, question, recipient)
        await self.send(question_message(mailed, sender=self.sender))
        return {"to": recipient, "message_id": self._message_id(question.interrupt_id, recipient)}

    async def show_closed(self, run: RunRecord, record: Question) -> None:
        """Nothing to edit: a sent email stays as it is, and its links open the page, which
        says how the question ended."""

    async def post_outcome(self, run: RunRecord, text: str, *, failed: bool = False) -> None:
        """Nothing to send: an emailed question's asker is an agent, which reads the outcome
        from ``/v1``, and the recipient's page shows it."""

    # Redraws (bot.service.delivering.surfaces.RedrawsQuestions): a sent email stays as it is; the
    # page its links open reads the question (its tally, its new expiry) afresh.
    async def refresh_question(
        self,
        run: RunRecord,
        question: Question,
        ref: dict[str, Any],
        *,
        token: str,
        may: MayAnswer,
    ) -> None:
        """Nothing to redraw: the page shows the tally and the expiry as they are now."""

    async def show_moved(
        self, run: RunRecord, record: Question, previous_ref: dict[str, Any]
    ) -> None:
        """Nothing to point: a repost mails the question again, with links that work."""

    async def post_nudge(self, run: RunRecord, record: Question, nudge: dict[str, Any]) -> None:
        """A reminder or an escalation, in reply to the question's message; not sent to a
        recipient who has already answered (under a quorum, their vote is counted)."""
        recipient = _recipient(run)
        if _voted(record, recipient):
            return
        kind = str(nudge.get("kind", "reminded"))
        text = nudge_text(nudge, [], [])
        # One id per nudge: the level for an escalation, the count for a reminder.
        count = record.level if kind == "escalated" else record.reminders
        part = f"{kind}.{count}"
        mailed = self._mailed(run, record, recipient)
        await self.send(nudge_message(mailed, sender=self.sender, text=text, part=part))

    async def send(self, message: EmailMessage) -> None:
        """One SMTP session and one message; ``DeliveryError`` saying whether to retry."""
        server = self.server
        try:
            await aiosmtplib.send(
                message,
                hostname=server.host,
                port=server.port,
                username=server.username,
                password=server.password,
                use_tls=server.security == "tls",
                start_tls=server.security == "starttls",
                timeout=self.timeout,
            )
        except aiosmtplib.SMTPRecipientsRefused as refused:
            codes = [r.code for r in refused.recipients]
            permanent = bool(codes) and all(500 <= code < 600 for code in codes)
            reason = "; ".join(f"{r.code} {r.message}" for r in refused.recipients)
            raise self._failed(
                f"the SMTP server refused the recipient ({reason})", permanent
            ) from None
        except aiosmtplib.SMTPResponseException as error:
            # 4xx: try again later (greylisting, a full queue); 5xx: it will not take it.
            permanent = 500 <= error.code < 600
            raise self._failed(
                f"the SMTP server answered {error.code} {error.message}", permanent
            ) from None
        except (aiosmtplib.SMTPException, OSError) as error:
            # A refused or dropped connection, a timeout, a TLS failure: worth another try
            # (a certificate may be renewed meanwhile), with the sentence that says which.
            certificate = untrusted_certificate(error)
            if certificate:
                raise self._failed(f"the SMTP server's TLS failed: {certificate}", False) from None
            raise self._failed(f"could not reach the SMTP server ({error})", False) from None

    def _failed(self, reason: str, permanent: bool) -> DeliveryError:
        level = logging.ERROR if permanent else logging.WARNING
        log.log(level, "email delivery failed: %s", reason)
        return DeliveryError(reason, permanent=permanent)

    def _message_id(self, interrupt_id: str, recipient: str) -> str:
        return message_id(interrupt_id, recipient, self.sender.rpartition("@")[2])

    def _mailed(self, run: RunRecord, question: Question, recipient: str) -> Mailed:
        answerer = f"email:{recipient}"
        choices = [
            Choice(label, self.links.url_for(question, answerer, preselect=preselect))
            for label, preselect in answers_of(question.payload)
        ]
        return Mailed(
            interrupt_id=question.interrupt_id,
            name=question.name,
            payload=question.payload,
            expires_at=question.expires_at,
            asked_by=_asked_by(run, question),
            recipient=recipient,
            choices=choices,
            tally=tally_line(question),
            level=question.level,
            sent_at=self.clock(),
        )


def _recipient(run: RunRecord) -> str:
    """The address this post goes to: the route's conversation, as its identity spells it."""
    address = str(run.conversation.get("key", ""))
    try:
        return canonical(f"email:{address}").partition(":")[2]
    except IdentityError:
        raise DeliveryError(NO_RECIPIENT, permanent=True) from None


def _asked_by(run: RunRecord, question: Question) -> str:
    requester = policy_of(question).requester
    if requester:
        return f"{requester} (through {run.requester})"
    return run.requester


def _voted(record: Question, recipient: str) -> bool:
    voters = voters_of(record)
    return any(same_person(f"email:{recipient}", voter) for voter in voters if voter != ANYONE)
