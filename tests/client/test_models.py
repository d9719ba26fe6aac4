"""The wire models: what POST /v1/questions accepts, refuses, and what it answers."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import ValidationError

from bot.contract.models import (
    CREATE_QUESTION,
    CancelRequest,
    CreateApproval,
    CreateAskUser,
    CreateForm,
    ErrorEnvelope,
    QuestionObject,
    WebhookEvent,
    validation_sentence,
)

ROUTE = {"surface": "slack", "conversation": "C123"}
ASK = {"questions": [{"question": "Ship it?", "header": "Deploy", "options": [{"label": "Yes"}]}]}
APPROVE = {
    "action": "deploy",
    "summary": "Deploy 1.2 to prod",
    "arguments": {"v": "1.2"},
    "risk": "high",
}
FORM = {
    "title": "Details",
    "message": "Tell us",
    "schema": {"type": "object", "properties": {"age": {"type": "integer"}}},
}


def _body(kind: str, payload: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"idempotency_key": "k1", "kind": kind, "route": ROUTE, "payload": payload, **extra}


def _refusal(body: Any) -> str:
    with pytest.raises(ValidationError) as caught:
        CREATE_QUESTION.validate_json(json.dumps(body))
    return validation_sentence(caught.value)


def test_each_kind_is_picked_by_its_tag() -> None:
    """The discriminator picks the model; defaults are the contract's."""
    ask = CREATE_QUESTION.validate_json(json.dumps(_body("ask_user", ASK)))
    approval = CREATE_QUESTION.validate_python(_body("approval", APPROVE, answerers=["U1"]))
    form = CREATE_QUESTION.validate_python(_body("form", FORM))
    assert isinstance(ask, CreateAskUser)
    assert ask.ttl_seconds == 86400
    assert ask.answerers is None
    assert isinstance(approval, CreateApproval)
    assert approval.answerers == ["U1"]
    assert isinstance(form, CreateForm)
    assert form.payload.form_schema["properties"]["age"] == {"type": "integer"}


def test_form_payload_keeps_its_wire_name() -> None:
    """``schema`` goes out as ``schema``, in dumps and in the JSON schema."""
    form = CREATE_QUESTION.validate_python(_body("form", FORM))
    assert form.model_dump(mode="json")["payload"]["schema"] == FORM["schema"]
    assert "schema" in CreateForm.model_json_schema()["$defs"]["FormPayload"]["properties"]


REFUSED: list[tuple[dict[str, Any], str]] = [
    (_body("poll", ASK), "kind"),
    (_body("approval", APPROVE), "answerers"),
    (_body("approval", APPROVE, answerers=[]), "answerers"),
    (_body("ask_user", ASK, answerers=[""]), "answerers"),
    (_body("ask_user", ASK, ttl_seconds=59), "ttl_seconds"),
    (_body("ask_user", ASK, ttl_seconds=604801), "ttl_seconds"),
    (_body("ask_user", ASK, ttl_seconds="600"), "ttl_seconds"),
    (_body("ask_user", ASK, callback_url="ftp://example.org/x"), "callback_url"),
    (_body("ask_user", ASK, callback_url="https:///nohost"), "callback_url"),
    (_body("ask_user", ASK, metadata={"x": "y" * 4090}), "metadata"),
    (_body("ask_user", ASK, metadata=["not", "an", "object"]), "metadata"),
    (_body("ask_user", ASK, run_ref=""), "run_ref"),
    (_body("ask_user", ASK, colour="red"), "colour"),
    ({**_body("ask_user", ASK), "idempotency_key": ""}, "idempotency_key"),
    ({**_body("ask_user", ASK), "idempotency_key": "k" * 201}, "idempotency_key"),
    (
        {**_body("ask_user", ASK), "route": {"surface": "fax", "conversation": "x"}},
        "route.surface",
    ),
    (
        {**_body("ask_user", ASK), "route": {"surface": "slack", "conversation": ""}},
        "route.conversation",
    ),
    (_body("ask_user", {"questions": []}), "payload.questions"),
    (
        _body("ask_user", {"questions": [{"question": f"q{i}"} for i in range(6)]}),
        "payload.questions",
    ),
    (_body("ask_user", {"questions": [{"question": "a"}, {"question": "a"}]}), "distinct"),
    (_body("ask_user", {"questions": [{"question": "a", "multi_select": True}]}), "multi_select"),
    (
        _body(
            "ask_user",
            {"questions": [{"question": "a", "options": [{"label": "x"}, {"label": "x"}]}]},
        ),
        "unique",
    ),
    (_body("ask_user", {"questions": [{"question": "a", "header": "h" * 31}]}), "header"),
    (
        _body("ask_user", {"questions": [{"question": "a", "options": [{"label": "l" * 76}]}]}),
        "label",
    ),
    (_body("approval", {**APPROVE, "risk": "extreme"}, answerers=["U1"]), "payload.risk"),
    (_body("approval", {**APPROVE, "action": ""}, answerers=["U1"]), "payload.action"),
    (
        _body(
            "form",
            {**FORM, "schema": {"type": "object", "properties": {"age": {"type": "object"}}}},
        ),
        "property 'age'",
    ),
    (_body("form", {**FORM, "title": ""}), "payload.title"),
]


@pytest.mark.parametrize(("body", "named"), REFUSED)
def test_bad_bodies_are_refused_in_one_sentence_naming_the_field(
    body: dict[str, Any], named: str
) -> None:
    """Each refusal is one line that says which field is wrong."""
    sentence = _refusal(body)
    assert named in sentence
    assert "\n" not in sentence
    assert sentence.endswith(".")


def test_metadata_limit_is_measured_as_compact_json() -> None:
    """4,096 bytes compact passes even where pretty-printed JSON would be longer."""
    fits = {"x": "y" * (4096 - len('{"x":""}'))}
    assert CREATE_QUESTION.validate_python(_body("ask_user", ASK, metadata=fits)).metadata == fits
    over = {"x": "y" * (4097 - len('{"x":""}'))}
    assert "metadata" in _refusal(_body("ask_user", ASK, metadata=over))


QUESTION = {
    "id": "q_1",
    "kind": "approval",
    "status": "answered",
    "payload": APPROVE,
    "route": ROUTE,
    "answerers": ["U1"],
    "created_at": "2026-12-01T17:00:00Z",
    "expires_at": "2026-12-02T17:00:00Z",
    "closed_at": "2026-12-01T17:00:05.123Z",
    "answer": {"decision": "approve", "comment": ""},
    "answered_by": {"id": "U1", "name": "Ada"},
    "cancel_reason": None,
    "delivery": {"status": "posted", "message": None},
    "metadata": None,
    "run_ref": None,
    "idempotency_key": "k1",
}


def test_responses_parse_and_tolerate_new_fields() -> None:
    """A newer bridge may add a field; an older client still reads the object."""
    question = QuestionObject.model_validate({**QUESTION, "added_later": 1})
    assert question.closed
    assert question.answered_by is not None and question.answered_by.name == "Ada"
    event = WebhookEvent.model_validate(
        {"type": "question.answered", "timestamp": "2026-12-01T17:00:05Z", "data": QUESTION}
    )
    assert event.data.id == "q_1"
    envelope = ErrorEnvelope.model_validate(
        {"error": {"code": "conflict", "message": "Already closed."}, "question": QUESTION}
    )
    assert envelope.question is not None and envelope.question.status == "answered"


def test_timestamps_are_utc_rfc3339() -> None:
    """An offset other than Z is not the contract's timestamp."""
    with pytest.raises(ValidationError, match="created_at"):
        QuestionObject.model_validate({**QUESTION, "created_at": "2026-12-01T18:00:00+01:00"})


def test_cancel_reason_is_bounded() -> None:
    """A reason is shown in chat, so it is kept short."""
    assert CancelRequest.model_validate({}).reason == ""
    with pytest.raises(ValidationError, match="reason"):
        CancelRequest.model_validate({"reason": "r" * 501})


def test_the_create_union_documents_its_discriminator() -> None:
    """The OpenAPI document can name the kinds: the union's schema carries the mapping."""
    schema = CREATE_QUESTION.json_schema()
    assert schema["discriminator"]["propertyName"] == "kind"
    assert set(schema["discriminator"]["mapping"]) == {"ask_user", "approval", "form"}
    form = schema["$defs"]["CreateForm"]
    assert form["additionalProperties"] is False
    assert form["properties"]["ttl_seconds"]["minimum"] == 60
