"""Every card the Teams renderers draw, by name: ordinary ones, and ones at the payload limits.

Shared by the renderer test (each must pass Microsoft's renderer), the size test (none may
pass Teams' limit) and the pictures test (docs/pictures/teams/ is drawn from ``pictured``).
Built from the code each time, so a change to a renderer shows in all three.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel

from adapters.teams import CardContext, closed_card, question_card, refusal_card
from adapters.teams._admin import admin_card, moved_card
from bot.admin import USAGES, results
from bot.contract.form_schema import MAX_OPTIONS, MAX_PROPERTIES, MAX_STRING
from bot.questions.records import (
    AuditEvent,
    DeliveryKind,
    DeliveryState,
    OutboxRow,
    Question,
    QuestionStats,
    QuestionStatus,
    RunRecord,
)
from tests.support import closed_question, open_question, pending_item

Json = dict[str, Any]

# A signed token as long as one may get (the design keeps it under 1,000 characters).
TOKEN = "eyJhbGciOiJIUzI1NiJ9." + "t" * 940 + ".sig"
ASKED_AT = 1_800_000_000.0
EXPIRES = ASKED_AT + 3600
CLOSED_AT = ASKED_AT + 120
WHO = "Ana (or an approver) may answer."
# The costliest characters per character shown: an astral emoji goes on the wire as two
# \\u escapes (12 bytes), and a bidi control becomes the marker ⟨U+202E⟩ (9 characters).
HEAVY = "🚀\u202e"


def asked(name: str, payload: Json, **extra: Any) -> CardContext:
    level = extra.pop("level", 0)
    question = open_question(
        name, payload, expires_at=EXPIRES, interrupt_id="int_5f2a9c", level=level
    )
    return CardContext(question=question, token=TOKEN, asked_for="Ana", who_may_answer=WHO, **extra)


def option(label: str, description: str = "") -> Json:
    return {"label": label, "description": description}


def ask(text: str, *options: Json, header: str = "", multi: bool = False) -> Json:
    return {"question": text, "header": header, "options": list(options), "multi_select": multi}


def record(
    name: str,
    payload: Json,
    status: QuestionStatus,
    answer: Json | None = None,
    *,
    by: str = "Bo",
) -> Question:
    who = by if status is not QuestionStatus.EXPIRED else ""
    closed = closed_question(name, payload, status, answer, closed_at=CLOSED_AT, closed_by=who)
    # The catalogue's own ids and times, as the cards (and their pictures) show them.
    return dataclasses.replace(
        closed,
        interrupt_id="int_5f2a9c",
        run_id="run_81d0",
        scope="tenant/19:ops",
        checkpoint_id="cp_1",
        issued_at=ASKED_AT,
        expires_at=EXPIRES,
    )


class Rollout(BaseModel):
    """A deployment's own interaction's answer: one of each kind of field."""

    strategy: Literal["canary", "blue-green"]
    regions: list[Literal["eu", "us"]]
    percent: int
    notify: bool = False
    note: str = ""


DEPLOY = ask(
    "Which environment should I deploy web 1.5.0 to?",
    option("staging"),
    option("production"),
    header="Environment",
)
DESCRIBED = ask(
    "Which rollout should I use?",
    option("canary", "5% of traffic first, then the rest after 10 minutes"),
    option("blue-green", "a full second fleet, switched at once"),
    option("all at once", "fastest; no way back but a redeploy"),
)
REGION = ask(
    "Which region should the new cluster run in?",
    *[
        option(r)
        for r in (
            "eu-west-1",
            "eu-central-1",
            "us-east-1",
            "us-west-2",
            "ap-south-1",
            "ap-northeast-1",
        )
    ],
)
CHECKS = ask(
    "Which checks should run before the deploy?",
    option("lint"),
    option("unit tests"),
    option("integration tests"),
    option("load test"),
    header="Checks",
    multi=True,
)
WHY = ask("What should the release note say?", header="Release note")
APPROVAL = {
    "action": "deploy web",
    "summary": "Deploy web 1.5.0 to production (now 1.4.2); 12 pods, rolling.",
    "arguments": {"service": "web", "version": "1.5.0", "replicas": 12, "canary": True},
    "risk": "high",
}
EDITABLE = {**APPROVAL, "allow": ["approve", "reject", "edit", "respond"]}
EDITED = {
    "decision": "edit",
    "comment": "",
    "arguments": {**APPROVAL["arguments"], "replicas": 4},  # type: ignore[dict-item]
    "original_arguments": APPROVAL["arguments"],
}
FORM = {
    "title": "New service account",
    "message": "Fill in the account the deploy job will use.",
    "schema": {
        "type": "object",
        "properties": {
            "name": {"type": "string", "title": "Name", "minLength": 3, "maxLength": 40},
            "owner": {"type": "string", "title": "Owner's email", "format": "email"},
            "docs": {"type": "string", "title": "Runbook", "format": "uri"},
            "start": {"type": "string", "title": "Start date", "format": "date"},
            "review": {"type": "string", "title": "Review at", "format": "date-time"},
            "purpose": {
                "type": "string",
                "title": "Purpose",
                "description": "One or two sentences, for the audit log.",
            },
            "quota": {"type": "integer", "title": "Quota (GB)", "minimum": 1, "maximum": 500},
            "ratio": {"type": "number", "title": "Sampling ratio", "default": 0.5},
            "admin": {"type": "boolean", "title": "Administrator", "default": False},
            "tier": {"type": "string", "title": "Tier", "enum": ["bronze", "silver", "gold"]},
            "zone": {
                "type": "string",
                "title": "Zone",
                "enum": ["a", "b"],
                "enumNames": ["Zone A (primary)", "Zone B (standby)"],
            },
            "team": {
                "type": "string",
                "title": "Team",
                "oneOf": [{"const": f"t{i}", "title": f"Team {i}"} for i in range(20)],
            },
            "scopes": {
                "type": "array",
                "title": "Scopes",
                "items": {"type": "string", "enum": ["read", "write", "deploy"]},
                "default": ["read"],
            },
            "alerts": {
                "type": "array",
                "title": "Alert channels",
                "items": {
                    "anyOf": [{"const": "mail", "title": "Mail"}, {"const": "sms", "title": "SMS"}]
                },
            },
        },
        "required": ["name", "owner", "tier"],
    },
}


def _admin_question() -> Question:
    return record("approval", APPROVAL, QuestionStatus.OUTSTANDING)


def _run() -> RunRecord:
    return RunRecord(
        run_id="run_81d0",
        scope="tenant/19:ops",
        surface="teams",
        requester="teams:tenant:aad-ana",
        text="deploy web",
        created_at=ASKED_AT,
    )


def _events(count: int, detail: str) -> tuple[AuditEvent, ...]:
    return tuple(
        AuditEvent(
            at=ASKED_AT + i,
            kind="paused" if i == 0 else "refused",
            run_id="run_81d0",
            interrupt_id="int_5f2a9c",
            actor="" if i == 0 else "teams:tenant:aad-bo",
            detail={} if i == 0 else {"reason": detail},
        )
        for i in range(count)
    )


def _deliveries(count: int, error: str) -> tuple[OutboxRow, ...]:
    return tuple(
        OutboxRow(
            delivery_id=i + 1,
            run_id="run_81d0",
            surface="teams",
            kind=DeliveryKind.PUBLISH,
            attempts=i,
            state=DeliveryState.DONE if not error else DeliveryState.FAILED,
            last_error=error,
        )
        for i in range(count)
    )


def _open(payload: Json, index: int = 0) -> results.PendingItem:
    return pending_item(
        index,
        scope="tenant/19:ops",
        name="approval",
        payload=payload,
        requester="teams:tenant:aad-ana",
        may_answer=("teams:tenant:aad-bo",),
        message_ref={"conversation_id": "19:ops", "activity_id": f"{index}"},
        issued_at=ASKED_AT,
        expires_at=EXPIRES,
    )


STATS = QuestionStats(
    issued=12,
    outstanding=2,
    answered=8,
    expired=1,
    cancelled=1,
    refusals={"not_yours": 2},
    answer_seconds_p50=95.0,
    answer_seconds_p90=1800.0,
    deliveries_failed=0,
    deliveries_retrying=1,
    escalations=1,
)

Builder = Callable[[], Json]

# The cards the docs show (docs/pictures.md): one of each kind a person meets.
PICTURED: dict[str, Builder] = {
    "ask-buttons": lambda: question_card(asked("ask_user", {"questions": [DEPLOY]})),
    "ask-choices": lambda: question_card(asked("ask_user", {"questions": [REGION]})),
    "ask-multi-select": lambda: question_card(asked("ask_user", {"questions": [CHECKS]})),
    "ask-free-text": lambda: question_card(asked("ask_user", {"questions": [WHY]})),
    "ask-several": lambda: question_card(asked("ask_user", {"questions": [REGION, CHECKS, WHY]})),
    "approval": lambda: question_card(asked("approval", APPROVAL)),
    "approval-quorum": lambda: question_card(
        asked("approval", APPROVAL, tally="1 of 2 approved: Bo", level=1)
    ),
    "form": lambda: question_card(asked("form", FORM)),
    "answered": lambda: closed_card(
        record("approval", APPROVAL, QuestionStatus.ANSWERED, {"decision": "approve"})
    ),
    "expired": lambda: closed_card(record("approval", APPROVAL, QuestionStatus.EXPIRED)),
    "cancelled": lambda: closed_card(
        record(
            "approval",
            APPROVAL,
            QuestionStatus.CANCELLED,
            {"reason": "superseded by 1.5.1"},
            by="Cy",
        )
    ),
}

# Every other card, drawn once each for the renderer.
OTHERS: dict[str, Builder] = {
    "approval-editable": lambda: question_card(asked("approval", EDITABLE)),
    # An edit input Teams sent empty, refused: drawn again empty, the problem under it.
    "approval-editable-emptied": lambda: question_card(
        asked("approval", EDITABLE, errors={"a1": "is required"})
    ),
    "approved-with-changes": lambda: closed_card(
        record("approval", EDITABLE, QuestionStatus.ANSWERED, EDITED)
    ),
    "ask-described-buttons": lambda: question_card(asked("ask_user", {"questions": [DESCRIBED]})),
    "ask-long-list": lambda: question_card(
        asked("ask_user", {"questions": [ask("Pick one", *[option(f"o{i}") for i in range(10)])]})
    ),
    "ask-redrawn-with-errors": lambda: question_card(
        asked(
            "ask_user",
            {"questions": [REGION, WHY]},
            errors={"": "Answer every question.", "q0": "Choose an option."},
            values={"q1": "draft"},
        )
    ),
    "approval-no-arguments": lambda: question_card(
        asked("approval", {"action": "restart", "summary": "Restart web", "risk": "low"})
    ),
    "approval-escalated": lambda: question_card(asked("approval", APPROVAL, level=2)),
    "form-redrawn-with-errors": lambda: question_card(
        asked(
            "form",
            FORM,
            errors={"f_name": "must be at least 3 characters"},
            values={"f_name": "ab", "f_quota": "12"},
        )
    ),
    "custom-schema": lambda: question_card(
        asked("rollout", {"service": "api"}, response_schema=Rollout.model_json_schema())
    ),
    "rejected": lambda: closed_card(
        record(
            "approval",
            APPROVAL,
            QuestionStatus.ANSWERED,
            {"decision": "reject", "comment": "not before the freeze ends"},
        )
    ),
    "ask-answered": lambda: closed_card(
        record(
            "ask_user",
            {"questions": [REGION, CHECKS]},
            QuestionStatus.ANSWERED,
            {"answers": {REGION["question"]: "eu-west-1", CHECKS["question"]: ["lint"]}},
        )
    ),
    "form-answered": lambda: closed_card(
        record(
            "form",
            FORM,
            QuestionStatus.ANSWERED,
            {"name": "deployer", "owner": "ana@example.com", "tier": "gold", "admin": True},
        )
    ),
    "custom-answered": lambda: closed_card(
        record("rollout", {"service": "api"}, QuestionStatus.ANSWERED, {"strategy": "canary"})
    ),
    "refusal": lambda: refusal_card("Bo already answered this at 2027-01-15 08:02 UTC."),
    "moved": lambda: moved_card("https://teams.microsoft.com/l/message/19:ops/1700"),
    "admin-help": lambda: admin_card(results.HelpShown(usages=USAGES, admin=True)),
    "admin-help-not-admin": lambda: admin_card(results.HelpShown(usages=USAGES[:1], admin=False)),
    "admin-pending": lambda: admin_card(
        results.PendingPage(at=CLOSED_AT, items=(_open(APPROVAL),), next_after="c0")
    ),
    "admin-pending-none": lambda: admin_card(
        results.PendingPage(at=CLOSED_AT, items=(), next_after=None)
    ),
    "admin-show": lambda: admin_card(
        results.RecordShown(
            at=CLOSED_AT,
            record=_admin_question(),
            run=_run(),
            may_answer=("teams:tenant:aad-bo",),
            history=_events(3, "not yours"),
            deliveries=_deliveries(1, ""),
        )
    ),
    "admin-stats": lambda: admin_card(results.StatsShown(at=CLOSED_AT, stats=STATS)),
    "admin-audit": lambda: admin_card(
        results.AuditShown(run_id="run_81d0", events=_events(4, "x"))
    ),
    "admin-cancelled": lambda: admin_card(
        results.CancelDone(
            interrupt_id="int_5f2a9c", run_id="run_81d0", by="Cy", reason="superseded"
        )
    ),
    "admin-resent": lambda: admin_card(
        results.Resent(interrupt_id="int_5f2a9c", run_id="run_81d0")
    ),
    "admin-extended": lambda: admin_card(
        results.Extended(
            interrupt_id="int_5f2a9c",
            run_id="run_81d0",
            previous_expires_at=EXPIRES,
            expires_at=EXPIRES + 3600,
        )
    ),
    "admin-already-done": lambda: admin_card(
        results.AlreadyDone(command="cancel", interrupt_id="int_1")
    ),
    "admin-admins-only": lambda: admin_card(results.AdminsOnly(command="cancel")),
    "admin-invalid": lambda: admin_card(results.CommandInvalid(text="Usage: cancel <question-id>")),
    "admin-not-found": lambda: admin_card(results.UnknownId(text="No question int_9 here.")),
    "admin-not-open": lambda: admin_card(results.NotOpen(interrupt_id="int_1", status="answered")),
    "admin-too-long": lambda: admin_card(
        results.TooLong(interrupt_id="int_1", latest=EXPIRES + 86400)
    ),
}


def ordinary() -> dict[str, Json]:
    """Every ordinary card, by name."""
    return {name: build() for name, build in {**PICTURED, **OTHERS}.items()}


# -- at the payload limits ------------------------------------------------------------------


def _heavy(length: int, seed: str = "") -> str:
    """``length`` characters of the costliest text, unique by ``seed``."""
    return (seed + HEAVY * length)[:length]


def _biggest_ask(*, multi: bool, count: int = 10) -> Json:
    return {
        "questions": [
            ask(
                _heavy(500, f"q{q} "),
                *[option(_heavy(75, f"{q}.{o} "), _heavy(150)) for o in range(count)],
                header=_heavy(30),
                multi=multi,
            )
            for q in range(5)
        ]
    }


def _biggest_form(*, required: bool) -> Json:
    """50 fields of 100 choices each, every text at its longest: past what any card holds."""
    properties = {
        _heavy(100, f"f{f} "): {
            "type": "string",
            "title": _heavy(300, f"{f} "),
            "description": _heavy(MAX_STRING),
            "enum": [_heavy(200, f"{f}.{v} ") for v in range(MAX_OPTIONS)],
        }
        for f in range(MAX_PROPERTIES)
    }
    schema: Json = {"type": "object", "properties": properties}
    if required:
        schema["required"] = list(properties)
    return {"title": _heavy(150), "message": _heavy(3000), "schema": schema}


def _biggest_approval() -> Json:
    # The API takes a 64 KB body; a kernel agent's arguments have no bound at all.
    arguments = {_heavy(40, f"k{i} "): _heavy(400, f"v{i} ") for i in range(400)}
    return {"action": _heavy(100), "summary": _heavy(1000), "arguments": arguments, "risk": "high"}


def at_limits() -> dict[str, Json]:
    """Every kind of card with every payload at the largest the API accepts (or beyond)."""
    full = _biggest_ask(multi=False)
    buttons = {
        "questions": [
            ask(
                _heavy(500),
                *[option(_heavy(75, f"{o} "), _heavy(150)) for o in range(5)],
                header=_heavy(30),
            )
        ]
    }
    answers = {
        q["question"]: [o["label"] for o in q["options"]]
        for q in _biggest_ask(multi=True)["questions"]
    }
    form = _biggest_form(required=True)
    form_answer = {name: _heavy(MAX_STRING) for name in form["schema"]["properties"]}
    values = {f"q{i}": "x" * 2000 for i in range(5)}
    approval = _biggest_approval()
    reason = _heavy(500)
    long_events = _events(60, _heavy(2000))
    return {
        "ask-buttons": question_card(asked("ask_user", buttons)),
        "ask-choices": question_card(asked("ask_user", full)),
        "ask-multi-select": question_card(asked("ask_user", _biggest_ask(multi=True))),
        "ask-redrawn": question_card(
            asked("ask_user", full, errors={"": _heavy(2000), "q0": _heavy(2000)}, values=values)
        ),
        "ask-free-text": question_card(
            asked(
                "ask_user",
                {"questions": [ask(_heavy(500, f"{q} "), header=_heavy(30)) for q in range(5)]},
            )
        ),
        "approval": question_card(
            asked(
                "approval", approval, tally=_heavy(3000), level=10, values={"comment": "c" * 1000}
            )
        ),
        "approval-editable": question_card(
            asked(
                "approval",
                {**approval, "allow": ["approve", "reject", "edit", "respond"]},
                values={"comment": "c" * 1000, "message": "m" * 2000},
                errors={"a0": _heavy(2000), "message": _heavy(2000)},
            )
        ),
        "approved-with-changes": closed_card(
            record(
                "approval",
                approval,
                QuestionStatus.ANSWERED,
                {
                    "decision": "edit",
                    "arguments": {k: _heavy(400, "e ") for k in approval["arguments"]},
                    "original_arguments": approval["arguments"],
                },
                by=_heavy(200),
            )
        ),
        "form-required": question_card(asked("form", form)),
        "form-optional": question_card(asked("form", _biggest_form(required=False))),
        "custom-schema": question_card(
            asked("rollout", approval["arguments"], response_schema=Rollout.model_json_schema())
        ),
        "ask-answered": closed_card(
            record(
                "ask_user",
                _biggest_ask(multi=True),
                QuestionStatus.ANSWERED,
                {"answers": answers},
                by=_heavy(200),
            )
        ),
        "approval-rejected": closed_card(
            record(
                "approval",
                approval,
                QuestionStatus.ANSWERED,
                {"decision": "reject", "comment": _heavy(1000)},
                by=_heavy(200),
            )
        ),
        "cancelled": closed_card(
            record(
                "approval", approval, QuestionStatus.CANCELLED, {"reason": reason}, by=_heavy(200)
            )
        ),
        "form-answered": closed_card(record("form", form, QuestionStatus.ANSWERED, form_answer)),
        "custom-answered": closed_card(
            record("rollout", {}, QuestionStatus.ANSWERED, approval["arguments"])
        ),
        "refusal": refusal_card(_heavy(3000)),
        "admin-show": admin_card(
            results.RecordShown(
                at=CLOSED_AT,
                record=record("approval", approval, QuestionStatus.OUTSTANDING),
                run=_run(),
                may_answer=tuple(_heavy(200, f"{i}") for i in range(50)),
                history=long_events,
                deliveries=_deliveries(20, _heavy(500)),
            )
        ),
        "admin-audit": admin_card(results.AuditShown(run_id="run_81d0", events=long_events)),
        "admin-pending": admin_card(
            results.PendingPage(
                at=CLOSED_AT,
                items=tuple(_open(approval, i) for i in range(100)),
                next_after="c100",
            )
        ),
        "admin-cancelled": admin_card(
            results.CancelDone(
                interrupt_id="int_5f2a9c", run_id="run_81d0", by=_heavy(200), reason=reason
            )
        ),
    }
