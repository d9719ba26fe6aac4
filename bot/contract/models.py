"""The agents API's wire models: what ``/v1`` takes and what it answers.

The bridge validates request bodies with these very models and builds its
OpenAPI document from them, so the client and the server cannot drift.
Requests forbid unknown fields and coerce nothing; responses ignore fields
they do not know, so a newer bridge can add one without breaking an older
client. The payload models are the server's own (``bot/contract/payloads.py``,
which the server imports): this package must load without the server.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal, Self

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from bot.contract.answers import Answer, answer_of
from bot.contract.decisions import Decision
from bot.contract.identity import PLAIN_ADDRESS, canonical, compared, email_address, person_of
from bot.contract.payloads import Allow

# Re-exported: the payloads are wire models too (``bot.contract.payloads``).
from bot.contract.payloads import ApprovalPayload as ApprovalPayload
from bot.contract.payloads import AskUserItem as AskUserItem
from bot.contract.payloads import AskUserOption as AskUserOption
from bot.contract.payloads import AskUserPayload as AskUserPayload
from bot.contract.payloads import FormPayload as FormPayload
from bot.contract.routes import MAX_ROUTES as MAX_ROUTES
from bot.contract.routes import Route as Route
from bot.contract.routes import Surface as Surface
from bot.contract.routes import one_route

MAX_METADATA_BYTES = 4096
MIN_TTL_SECONDS = 60
MAX_TTL_SECONDS = 7 * 24 * 3600
DEFAULT_TTL_SECONDS = 24 * 3600
MAX_ANSWERERS = 50
ANYONE = "anyone"

Kind = Literal["ask_user", "approval", "form"]
Status = Literal["open", "answered", "expired", "cancelled"]
Timestamp = Annotated[
    str,
    Field(
        pattern=r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$",
        description="RFC 3339 in UTC, e.g. 2026-12-01T17:00:00Z.",
    ),
]

_REQUEST = ConfigDict(extra="forbid", strict=True)
_RESPONSE = ConfigDict(extra="ignore")


# Validated with this context, a stored policy is read as stored: its ids were
# taken before they were canonicalized, and a question once accepted stays readable.
STORED = {"stored": True}


def _canonical(value: str, info: ValidationInfo) -> str:
    if isinstance(info.context, dict) and info.context.get("stored"):
        return compared(value)
    return canonical(value)


_ANSWERER = Annotated[str, Field(min_length=1, max_length=200), AfterValidator(_canonical)]
_ANSWERERS_HELP = (
    "Canonical ids (slack:<team>:<user>, teams:<tenant>:<aad id> with both GUIDs, "
    "console:<name>, email:<address> with one plain address, link:<id> for an answer link, "
    "or a bare Slack user id), groups, or 'anyone'."
)
MAX_ESCALATION_STEPS = 10


class EscalationStep(BaseModel):
    """One rung of the ladder: after ``after_seconds`` unanswered, ``answerers`` are added."""

    model_config = _REQUEST
    after_seconds: int = Field(ge=1, description="Seconds after the question was asked.")
    answerers: list[_ANSWERER] = Field(
        min_length=1, max_length=MAX_ANSWERERS, description=f"Added answerers. {_ANSWERERS_HELP}"
    )


class Policy(BaseModel):
    """How a question is decided: quorum, rejection, reminders, escalation, expiry."""

    model_config = _REQUEST
    quorum: int = Field(
        default=1, ge=1, le=MAX_ANSWERERS, description="Distinct people who must approve."
    )
    reject: Literal["any", "quorum"] = Field(
        default="any", description="'any': one reject rejects; 'quorum': as many as approve."
    )
    remind_after_seconds: int | None = Field(
        default=None, ge=1, description="Remind those who have not answered after this long."
    )
    max_reminders: int | None = Field(
        default=None, ge=0, description="How many reminders at most; 1 when reminders are on."
    )
    escalate: list[EscalationStep] = Field(
        default_factory=list, max_length=MAX_ESCALATION_STEPS, description="The ladder, in order."
    )
    requester: _ANSWERER | None = Field(
        default=None, description="Who asked for the action, as an answerer id."
    )
    requester_may_answer: bool = Field(
        default=True, description="false: the requester may neither approve nor reject."
    )
    on_expire: Literal["expire", "reject"] = Field(
        default="expire", description="'reject': an expiry stores a rejection as the answer."
    )

    @model_validator(mode="after")
    def _filled(self) -> Self:
        if self.max_reminders is None:
            self.max_reminders = 1 if self.remind_after_seconds is not None else 0
        afters = [step.after_seconds for step in self.escalate]
        if afters != sorted(set(afters)):
            raise ValueError("escalate steps must come in increasing order of after_seconds")
        return self

    def named(self, answerers: list[str] | None) -> set[str] | None:
        """The distinct answerers named with the ladder's; None when anyone may answer."""
        # Counted by person: U0ALICE and slack:T1:U0ALICE are one person, not two.
        named = {person_of(a) for a in answerers or ()}
        for step in self.escalate:
            named.update(person_of(a) for a in step.answerers)
        if answerers is None or ANYONE in named:
            return None
        return named


def _quorum_fits(policy: Policy | None, answerers: list[str] | None) -> None:
    if answerers is not None:
        people = [person_of(a) for a in answerers]
        twice = sorted({a for a, p in zip(answerers, people, strict=True) if people.count(p) > 1})
        if twice:
            raise ValueError(f"answerers name {twice[0]} more than once; name each person once")
    if policy is None:
        return
    named = policy.named(answerers)
    if named is not None and policy.quorum > len(named):
        raise ValueError(
            f"policy.quorum is {policy.quorum} but only {len(named)} distinct answerers are named"
        )


def _links_named(routes: list[Route], answerers: list[str] | None) -> None:
    """A ``link`` route posts nothing: only ``link:<id>`` answerers can reach the question."""
    if any(route.surface == "link" for route in routes) and not any(
        a.startswith("link:") for a in answerers or ()
    ):
        raise ValueError(
            'a "link" route posts nothing; name each link to hand out in answerers as link:<id>'
        )


class _CreateBase(BaseModel):
    model_config = _REQUEST
    idempotency_key: str = Field(
        min_length=1,
        max_length=200,
        description="The same key with the same body returns the same question; per API key.",
    )
    route: Route | None = Field(default=None, description="Where the question is posted.")
    routes: list[Route] | None = Field(
        default=None,
        max_length=MAX_ROUTES,
        description="Instead of route: several places, each posted; the first answer decides.",
    )
    ttl_seconds: int = Field(
        default=DEFAULT_TTL_SECONDS,
        ge=MIN_TTL_SECONDS,
        le=MAX_TTL_SECONDS,
        description="Seconds until the question expires unanswered.",
    )
    callback_url: str | None = Field(
        default=None,
        max_length=2048,
        description="An http(s) URL that gets the signed webhook when the question closes.",
    )
    metadata: dict[str, Any] | None = Field(
        default=None,
        description=f"Echoed back; at most {MAX_METADATA_BYTES} bytes as compact JSON.",
    )
    run_ref: str | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        description="A string to group and find questions by.",
    )
    policy: Policy | None = Field(
        default=None, description="Quorum, reminders, escalation, self-approval, expiry."
    )

    @property
    def posted_on(self) -> list[Route]:
        """Every route the question is posted on, the first first."""
        return list(self.routes or ()) if self.route is None else [self.route]

    @field_validator("route", "routes")
    @classmethod
    def _one_recipient(cls, value: Route | list[Route] | None) -> Route | list[Route] | None:
        # A mail goes to the address its route names and its links answer as that address,
        # so a route is one plain address: a list would mail one link to several inboxes.
        for route in [value] if isinstance(value, Route) else value or ():
            if route.surface == "email" and email_address(route.conversation) is None:
                raise ValueError(
                    f"the email route {route.conversation!r} is not one plain address; give "
                    f"each recipient a route of its own, such as ana@example.com ({PLAIN_ADDRESS})"
                )
        return value

    @field_validator("callback_url")
    @classmethod
    def _http_only(cls, url: str | None) -> str | None:
        if url is None:
            return None
        scheme, sep, rest = url.partition("://")
        host = rest.split("/", 1)[0].split("?", 1)[0].rsplit("@", 1)[-1]
        if not sep or scheme.lower() not in ("http", "https") or not host:
            raise ValueError("callback_url must be an http or https URL with a host")
        return url

    @field_validator("metadata")
    @classmethod
    def _small(cls, metadata: dict[str, Any] | None) -> dict[str, Any] | None:
        if metadata is not None and metadata_size(metadata) > MAX_METADATA_BYTES:
            raise ValueError(f"metadata must be at most {MAX_METADATA_BYTES} bytes as JSON")
        return metadata

    @model_validator(mode="after")
    def _quorum_possible(self) -> Self:
        one_route(self.route, self.routes)
        if (
            self.policy is not None
            and self.policy.quorum > 1
            and getattr(self, "kind", "") != "approval"
        ):
            # Only an approval's answer is a decision that ballots can count.
            raise ValueError("policy.quorum above 1 applies to approval questions only")
        _quorum_fits(self.policy, getattr(self, "answerers", None))
        _links_named(self.posted_on, getattr(self, "answerers", None))
        return self


# ``ask_user`` and ``form`` questions: answerable by anyone in the conversation unless named.
_OPTIONAL_ANSWERERS = Annotated[
    list[_ANSWERER] | None,
    Field(
        min_length=1,
        max_length=MAX_ANSWERERS,
        description=f"{_ANSWERERS_HELP} Omitted: anyone in the conversation.",
    ),
]


class CreateAskUser(_CreateBase):
    """``POST /v1/questions`` for an ``ask_user`` question."""

    kind: Literal["ask_user"]
    payload: AskUserPayload
    answerers: _OPTIONAL_ANSWERERS = None


class CreateApproval(_CreateBase):
    """``POST /v1/questions`` for an ``approval``; answerers are required."""

    kind: Literal["approval"]
    payload: ApprovalPayload
    answerers: list[_ANSWERER] = Field(
        min_length=1, max_length=MAX_ANSWERERS, description=f"{_ANSWERERS_HELP} Required."
    )
    allow: Allow | None = Field(
        default=None,
        description=(
            "The decisions the approver may make: approve, reject, edit (the arguments), "
            'respond (a message in the tool\'s place). Omitted: ["approve", "reject"].'
        ),
    )

    @model_validator(mode="after")
    def _allow_once(self) -> Self:
        if self.allow is not None and self.payload.allow not in (None, self.allow):
            raise ValueError("allow is given twice, beside policy and in the payload; give one")
        return self

    @property
    def allowed(self) -> list[Decision] | None:
        """The decisions asked for, wherever the request named them."""
        return self.allow if self.allow is not None else self.payload.allow


class CreateForm(_CreateBase):
    """``POST /v1/questions`` for a ``form`` question."""

    kind: Literal["form"]
    payload: FormPayload
    answerers: _OPTIONAL_ANSWERERS = None


CreateQuestion = Annotated[CreateAskUser | CreateApproval | CreateForm, Field(discriminator="kind")]
CREATE_QUESTION: TypeAdapter[CreateAskUser | CreateApproval | CreateForm] = TypeAdapter(
    CreateQuestion
)


class AnsweredBy(BaseModel):
    """The person, as the platform authenticated them."""

    model_config = _RESPONSE
    id: str = Field(description="The platform's user id.")
    name: str = Field(description="The platform's display name.")


class AskUserAnswer(BaseModel):
    """An ``ask_user`` answer: each question's text to its answer."""

    model_config = _RESPONSE
    answers: dict[str, str | list[str]]


class ApprovalAnswer(BaseModel):
    """An approval's answer: ``edit`` carries the edited ``arguments`` beside the
    ``original_arguments``; ``respond`` carries the ``message`` the model reads instead."""

    model_config = _RESPONSE
    decision: Decision
    comment: str = ""
    arguments: dict[str, Any] | None = Field(
        default=None, description="For edit: the arguments the action runs with."
    )
    original_arguments: dict[str, Any] | None = Field(
        default=None, description="For edit: the arguments as asked."
    )
    message: str | None = Field(
        default=None, description="For respond: what the model reads in place of the result."
    )


class Delivery(BaseModel):
    """Whether the chat message got posted."""

    model_config = _RESPONSE
    status: Literal["pending", "posted", "failed"]
    message: str | None = Field(default=None, description="The surface's sentence on a failure.")


class Tally(BaseModel):
    """The answers counted so far under a quorum, ids as the answerers list gives them: the
    one tally type, as the question object shows it and as the question stores it.

    ``approve`` and ``reject`` are what the ``/v1`` object shows. The rest is
    what the bridge keeps for its own messages, never on the wire: each voter's
    display name (``names``), an edited proposal's arguments and what they
    change (``proposal``, ``changes``), who approved an earlier proposal
    (``superseded``), and whether the latest ballot restarted the count.
    ``stored`` gives the JSON the question stores.
    """

    # Lists, as the client's users have always read them.
    model_config = ConfigDict(extra="ignore", frozen=True)
    approve: list[str] = Field(default_factory=list)
    reject: list[str] = Field(default_factory=list)
    names: dict[str, str] = Field(default_factory=dict, exclude=True)
    superseded: list[str] = Field(default_factory=list, exclude=True)
    restarted: bool = Field(default=False, exclude=True)
    proposal: dict[str, Any] | None = Field(default=None, exclude=True)
    changes: str = Field(default="", exclude=True)

    def stored(self) -> dict[str, Any]:
        """The tally as the question's row holds it: what is set, in the order it was
        always written (``superseded``, ``restarted``, ``proposal`` and ``changes`` only
        when there are any)."""
        stored: dict[str, Any] = {
            "approve": list(self.approve),
            "reject": list(self.reject),
            "names": dict(self.names),
        }
        if self.superseded:
            stored["superseded"] = list(self.superseded)
        if self.restarted:
            stored["restarted"] = True
        if self.proposal is not None:
            stored["proposal"] = dict(self.proposal)
            stored["changes"] = self.changes
        return stored

    def voters(self) -> set[str]:
        """Who has a ballot that counts: not those whose approval an edit set aside."""
        return {*self.approve, *self.reject}


class QuestionObject(BaseModel):
    """A question as the API shows it. The token never appears in it."""

    model_config = _RESPONSE
    id: str
    kind: Kind
    status: Status
    payload: dict[str, Any] = Field(description="The kind's payload as asked.")
    route: Route = Field(description="Where it is posted (the first of routes).")
    routes: list[Route] = Field(default_factory=list, description="Every route it is posted on.")
    answerers: list[str] = Field(description="The answerers in force.")
    created_at: Timestamp
    expires_at: Timestamp
    closed_at: Timestamp | None = None
    answer: dict[str, Any] | None = Field(
        default=None,
        description=(
            "{'answers': ...} for ask_user, {'decision', 'comment'} for approval (with "
            "'arguments' and 'original_arguments' for edit, 'message' for respond), "
            "the schema's object for form; null while open."
        ),
    )
    answered_by: AnsweredBy | None = None
    cancel_reason: str | None = None
    delivery: Delivery
    metadata: dict[str, Any] | None = None
    run_ref: str | None = None
    idempotency_key: str
    policy: dict[str, Any] = Field(
        default_factory=dict, description="The policy in force, defaults filled in."
    )
    tally: Tally | None = Field(
        default=None,
        description="Under a quorum, who approved and rejected so far; null without one.",
    )
    level: int = Field(default=0, description="0; 1 after the first escalation step, and so on.")
    links: dict[str, str] | None = Field(
        default=None,
        description=(
            "Only in the 201 that created it: for each link:<id> answerer, its answer link "
            "(<BOT_PUBLIC_URL>/q/...), keyed by the id; null in every other answer. Keep it: "
            "it is never shown again."
        ),
    )

    @property
    def closed(self) -> bool:
        return self.status != "open"

    @property
    def typed_answer(self) -> Answer | None:
        """``answer`` typed by the question's kind and status (``bot.contract.answers``):
        what the bridge's own readers match; ``answer`` stays the JSON the wire carries."""
        return answer_of(self.kind, self.status, self.answer)


class QuestionPage(BaseModel):
    """``GET /v1/questions``: newest first; ``next_cursor`` is null on the last page."""

    model_config = _RESPONSE
    data: list[QuestionObject]
    next_cursor: str | None = None


class CancelRequest(BaseModel):
    """``POST /v1/questions/{id}/cancel``."""

    model_config = _REQUEST
    reason: str = Field(default="", max_length=500, description="Shown in chat and echoed back.")


ErrorCode = Literal[
    "invalid_request",
    "unauthorized",
    "forbidden",
    "not_found",
    "conflict",
    "payload_too_large",
    "unprocessable",
    "rate_limited",
]


class ErrorDetail(BaseModel):
    model_config = _RESPONSE
    code: ErrorCode
    message: str = Field(description="One sentence saying what is wrong.")


class ErrorEnvelope(BaseModel):
    """Every non-2xx body; a 409 on cancel carries the closed ``question``."""

    model_config = _RESPONSE
    error: ErrorDetail
    question: QuestionObject | None = None


class WebhookEvent(BaseModel):
    """The body POSTed to ``callback_url`` when a question closes."""

    model_config = _RESPONSE
    type: Literal["question.answered", "question.expired", "question.cancelled"]
    timestamp: Timestamp
    data: QuestionObject


def metadata_size(metadata: dict[str, Any]) -> int:
    """Bytes of ``metadata`` as compact JSON, the measure the limit applies to."""
    return len(json.dumps(metadata, separators=(",", ":")).encode())


def validation_sentence(error: ValidationError) -> str:
    """One sentence for a 400 from the first thing pydantic refused."""
    first = error.errors(include_url=False)[0]
    where = ".".join(str(part) for part in first["loc"] if part not in _UNION_TAGS)
    message = str(first["msg"]).removeprefix("Value error, ")
    text = f"{where}: {message}" if where else message
    return text if text.endswith(".") else f"{text}."


# Discriminated unions put the tag in the location; the sentence needs only the field.
_UNION_TAGS = frozenset({"ask_user", "approval", "form"})
