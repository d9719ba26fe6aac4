"""The OpenAPI 3.1 document of ``/v1``, generated from the wire models the handlers use.

Nothing here restates a field: schemas come from ``bot.contract.models``
(pydantic's JSON Schema, which OpenAPI 3.1 takes as it is); only the paths,
their parameters and which status answers with which model are written.
"""

from __future__ import annotations

import functools
from typing import Any

from pydantic.json_schema import models_json_schema

from bot.contract.models import (
    ApprovalAnswer,
    CancelRequest,
    CreateApproval,
    CreateAskUser,
    CreateForm,
    ErrorEnvelope,
    QuestionObject,
    QuestionPage,
    WebhookEvent,
)

_REF = "#/components/schemas/{model}"
_ERRORS = {
    "400": "The body or a parameter is wrong (invalid_request).",
    "401": "No API key, or an unknown one (unauthorized).",
    "403": "The key may not use this route (forbidden).",
    "404": "No such question for this key (not_found).",
    "409": "A conflict: an idempotency key reused with another body, or already closed.",
    "413": "The body is too large (payload_too_large).",
    "422": "Well-formed, but the bridge cannot act on it (unprocessable).",
    "429": "The key created too many questions this minute (rate_limited).",
}
_RETRY_AFTER = {
    "description": "Whole seconds until the key may create again.",
    "schema": {"type": "integer", "minimum": 1},
}


def _ref(name: str) -> dict[str, Any]:
    return {"$ref": _REF.format(model=name)}


def _json(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _errors(*statuses: str) -> dict[str, Any]:
    answers = {status: _json(_ref("ErrorEnvelope"), _ERRORS[status]) for status in statuses}
    if "429" in answers:
        answers["429"]["headers"] = {"Retry-After": _RETRY_AFTER}
    return answers


def _id_parameter() -> dict[str, Any]:
    return {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}


@functools.cache
def openapi_document() -> dict[str, Any]:
    models = [
        (CreateAskUser, "validation"),
        (CreateApproval, "validation"),
        (CreateForm, "validation"),
        (CancelRequest, "validation"),
        (QuestionObject, "serialization"),
        # An approval's answer, edit and respond included: the shape ``answer`` takes.
        (ApprovalAnswer, "serialization"),
        (QuestionPage, "serialization"),
        (ErrorEnvelope, "serialization"),
        (WebhookEvent, "serialization"),
    ]
    _, schemas = models_json_schema(models, ref_template=_REF)  # type: ignore[arg-type]
    create = {
        "oneOf": [_ref("CreateAskUser"), _ref("CreateApproval"), _ref("CreateForm")],
        "discriminator": {
            "propertyName": "kind",
            "mapping": {
                "ask_user": _REF.format(model="CreateAskUser"),
                "approval": _REF.format(model="CreateApproval"),
                "form": _REF.format(model="CreateForm"),
            },
        },
    }
    question = _ref("QuestionObject")
    security: list[dict[str, list[str]]] = [{"bearer": []}]
    paths = {
        "/v1/questions": {
            "post": {
                "operationId": "createQuestion",
                "summary": "Ask a person a question in chat.",
                "security": security,
                "requestBody": {
                    "required": True,
                    "content": {"application/json": {"schema": create}},
                },
                "responses": {
                    "201": _json(question, "Asked; Location names the question."),
                    "200": _json(question, "Asked before with this idempotency key and body."),
                    **_errors("400", "401", "403", "409", "413", "422", "429"),
                },
            },
            "get": {
                "operationId": "listQuestions",
                "summary": "This key's questions, newest first.",
                "security": security,
                "parameters": [
                    {
                        "name": "status",
                        "in": "query",
                        "schema": {"enum": ["open", "answered", "expired", "cancelled"]},
                    },
                    {"name": "run_ref", "in": "query", "schema": {"type": "string"}},
                    {
                        "name": "limit",
                        "in": "query",
                        "schema": {"type": "integer", "minimum": 1, "maximum": 100, "default": 50},
                    },
                    {"name": "cursor", "in": "query", "schema": {"type": "string"}},
                ],
                "responses": {
                    "200": _json(_ref("QuestionPage"), "A page of questions."),
                    **_errors("400", "401"),
                },
            },
        },
        "/v1/questions/{id}": {
            "get": {
                "operationId": "getQuestion",
                "summary": "A question; with wait=N, held until it closes or N seconds pass.",
                "security": security,
                "parameters": [
                    _id_parameter(),
                    {
                        "name": "wait",
                        "in": "query",
                        "schema": {"type": "integer", "minimum": 0, "maximum": 30, "default": 0},
                    },
                ],
                "responses": {
                    "200": _json(question, "The question as it stands."),
                    **_errors("400", "401", "404"),
                },
            },
        },
        "/v1/questions/{id}/cancel": {
            "post": {
                "operationId": "cancelQuestion",
                "summary": "Cancel an open question; its chat message is edited.",
                "security": security,
                "parameters": [_id_parameter()],
                "requestBody": {
                    "required": False,
                    "content": {"application/json": {"schema": _ref("CancelRequest")}},
                },
                "responses": {
                    "200": _json(question, "Cancelled."),
                    **_errors("400", "401", "404", "409"),
                },
            },
        },
    }
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Human-in-the-loop bridge: agents API",
            "version": "1",
            "description": "Ask a person in Slack, Teams or the console; wait for the answer.",
        },
        "paths": paths,
        "webhooks": {
            "questionClosed": {
                "post": {
                    "summary": "Sent signed (Standard Webhooks) when a question closes.",
                    "requestBody": {
                        "content": {"application/json": {"schema": _ref("WebhookEvent")}}
                    },
                    "responses": {"200": {"description": "Any 2xx acknowledges it."}},
                }
            }
        },
        "components": {
            "schemas": schemas["$defs"],
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
    }
