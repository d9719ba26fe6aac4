"""A pydantic model as a form schema, or a refusal naming the field."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from bot.contract.form_schema import check_form_schema

_TOP = ("type", "properties", "required", "title", "description")


def form_schema_of(
    *, schema: Mapping[str, Any] | None, model: type[BaseModel] | None
) -> dict[str, Any]:
    """The schema a ``form(schema=...)`` or ``form(model=...)`` call asks with, checked
    before anything is asked; exactly one of the two must be given."""
    if (schema is None) == (model is None):
        raise ValueError("form() takes exactly one of schema= or model=")
    if model is not None:
        return model_form_schema(model)
    form_schema = dict(schema or {})
    check_form_schema(form_schema)
    return form_schema


def model_form_schema(model: type[BaseModel]) -> dict[str, Any]:
    """``model``'s JSON schema in the elicitation subset.

    Pydantic writes an enum as a ``$ref`` to a definition and an optional
    field as ``anyOf`` with ``null``; both have a flat equivalent, so they
    are inlined first. Whatever is still outside the subset (a nested model,
    a list of free text, an exclusive bound) is refused, naming the field.
    """
    raw = model.model_json_schema()
    definitions: dict[str, Any] = raw.get("$defs", {})
    properties = {
        name: _flatten(prop, definitions) for name, prop in raw.get("properties", {}).items()
    }
    schema = {key: raw[key] for key in _TOP if key in raw}
    schema["properties"] = properties
    check_form_schema(schema)
    return schema


def _flatten(prop: dict[str, Any], definitions: dict[str, Any]) -> dict[str, Any]:
    prop = _inline(prop, definitions)
    branches = prop.get("anyOf")
    if isinstance(branches, list):
        kept = [b for b in branches if b != {"type": "null"}]
        if len(kept) == 1 and len(kept) < len(branches):
            rest = {k: v for k, v in prop.items() if k != "anyOf"}
            prop = {**_inline(kept[0], definitions), **rest}
            if prop.get("default", "") is None:
                del prop["default"]
    if prop.get("type") == "array" and isinstance(prop.get("items"), dict):
        prop = {**prop, "items": _inline(prop["items"], definitions)}
    return prop


def _inline(prop: dict[str, Any], definitions: dict[str, Any]) -> dict[str, Any]:
    ref = prop.get("$ref")
    if not isinstance(ref, str) and isinstance(prop.get("allOf"), list) and len(prop["allOf"]) == 1:
        ref = prop["allOf"][0].get("$ref")
        prop = {k: v for k, v in prop.items() if k != "allOf"}
    if not isinstance(ref, str) or not ref.startswith("#/$defs/"):
        return prop
    target = definitions.get(ref.removeprefix("#/$defs/"), {})
    own = {k: v for k, v in prop.items() if k != "$ref"}
    return {**target, **own}
