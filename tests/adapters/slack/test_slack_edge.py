"""The door's form reader: an interaction's one field read as the standard parser reads it."""

from __future__ import annotations

import json
import urllib.parse

import pytest
from hypothesis import given
from hypothesis import strategies as st

from adapters.slack._edge import FORM, NotAPayload, _form, parse


def _standard(text: str) -> dict[str, str] | None:
    """What ``urllib.parse.parse_qsl`` (strict, as ``_form`` calls it) makes of ``text``."""
    try:
        pairs = urllib.parse.parse_qsl(
            text, keep_blank_values=True, strict_parsing=bool(text), errors="strict"
        )
    except (ValueError, UnicodeDecodeError):
        return None
    return dict(pairs)


def _ours(text: str) -> dict[str, str] | None:
    try:
        return _form(text)
    except NotAPayload:
        return None


@given(st.text(max_size=200))
def test_any_interaction_value_reads_as_the_standard_parser_reads_it(value: str) -> None:
    quoted = "payload=" + urllib.parse.quote_plus(value)
    assert _ours(quoted) == _standard(quoted) == {"payload": value}


# Escapes the standard parser keeps as they are, or refuses (not UTF-8).
ODD = st.sampled_from(["%", "%4", "%zz", "%%41", "%e2%82", "%C3%A9", "\\x41", "\\", "+", "é", "%0"])


@given(st.lists(st.one_of(ODD, st.text(alphabet="ab%=+\\0123456789ABCDEFéx", max_size=6))))
def test_odd_escapes_read_as_the_standard_parser_reads_them(parts: list[str]) -> None:
    text = "payload=" + "".join(parts)
    assert _ours(text) == _standard(text)


def test_a_click_body_parses_to_its_payload() -> None:
    payload = {"type": "block_actions", "user": {"id": "U1"}, "actions": [{"action_id": "a:1"}]}
    body = urllib.parse.urlencode({"payload": json.dumps({**payload, "text": "a+b %41 ü"})})
    assert parse(body.encode(), FORM) == {**payload, "text": "a+b %41 ü"}


@pytest.mark.parametrize("body", ["payload=%ff", "payload=%C3"])
def test_a_value_that_is_not_utf8_is_not_a_payload(body: str) -> None:
    with pytest.raises(NotAPayload):
        parse(body.encode(), FORM)
