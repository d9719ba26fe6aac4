"""A number typed into a form's text input, read as the JSON number its schema asks for.

Slack's and Teams' text inputs both hand back a string: an ``integer``
property reads ``"3"`` as 3 and ``"2.5"`` as 2.5 (which validation then
refuses as not whole), a ``number`` property reads either as a float.
"""

from __future__ import annotations


def typed_number(text: str, *, integer: bool) -> int | float | str:
    """``text`` as an ``integer`` (or else ``number``) property's value; unchanged when it is
    not a number, so that validation names the field."""
    for parse in (int, float) if integer else (float,):
        try:
            return parse(text)
        except ValueError:
            continue
    return text
