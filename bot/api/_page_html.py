"""The question page (``/q/<link token>``) as HTML: a pure function of the question's record.

It draws from what the console draws from: the one ``Question`` row (its
payload per kind, the quorum's tally, the escalation level, how it ended)
and the run that asked it (who asked). Every string that an agent, a model
or a person wrote passes ``display(..., markup="html")`` here and nowhere
else, so the page shows what was asked as typed, tags and bidi controls
included, and no script, handler or link can come from it.

The page is a plain HTML form posted to itself: no script at all (the
Content-Security-Policy allows none), one inline stylesheet (allowed by its
hash), and a layout that reads at 390 px as at 1280 px. Form fields are
named by position (``q0``, ``f3``), never by the text asked, so what an
agent wrote never becomes a field name; ``read_answer`` maps them back.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar, assert_never

from bot.contract.answers import decision_of
from bot.contract.payloads import (
    ApprovalPayload,
    AskUserPayload,
    FormToolPayload,
    OtherPayload,
    Payload,
)
from bot.display import display
from bot.errors import BotError
from bot.interactions.approval import APPROVAL
from bot.questions.quorum import tally_line
from bot.questions.records import Question, QuestionStatus, RunRecord
from bot.service.delivering.messages import (
    answered_text,
    closed_text,
    expires_text,
    level_text,
    when,
)

V = TypeVar("V")

CSRF_FIELD = "csrf"
# The answer of a question of another kind, typed as JSON by the person.
JSON_FIELD = "answer_json"

STYLE = """
:root { color-scheme: light dark; font-family: system-ui, sans-serif; line-height: 1.45; }
body { margin: 0; padding: 16px; }
main { max-width: 42rem; margin: 0 auto; }
h1 { font-size: 1.3rem; margin: 0 0 .5rem; overflow-wrap: anywhere; }
p, li, dd, label, legend { overflow-wrap: anywhere; }
.meta { color: GrayText; font-size: .9rem; margin: .2rem 0; }
.notice, .error { border-radius: 6px; padding: .6rem .8rem; margin: .8rem 0; }
.notice { border: 1px solid GrayText; }
.error { border: 2px solid #b3261e; }
.risk-high { color: #b3261e; font-weight: 600; }
fieldset { border: 1px solid GrayText; border-radius: 6px; margin: .8rem 0; padding: .5rem .8rem; }
label.choice { display: flex; gap: .5rem; align-items: flex-start; padding: .35rem 0; }
label.field { display: block; margin-top: .6rem; font-weight: 600; }
input[type=text], input[type=email], input[type=url], input[type=number], input[type=date],
input[type=datetime-local], textarea, select { box-sizing: border-box; width: 100%;
  font: inherit; padding: .5rem; margin-top: .25rem; }
textarea { min-height: 5rem; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; font-size: .9rem; padding: .5rem;
  border: 1px solid GrayText; border-radius: 6px; }
button { font: inherit; padding: .7rem 1.2rem; margin-top: 1rem; width: 100%; border-radius: 6px;
  border: 1px solid GrayText; cursor: pointer; }
.hint { font-weight: normal; color: GrayText; font-size: .9rem; }
"""
STYLE_HASH = "sha256-" + base64.b64encode(hashlib.sha256(STYLE.encode()).digest()).decode()


def html(text: object) -> str:
    """Outside text as the page shows it (the one display function, HTML markup)."""
    return display(text, markup="html")


@dataclass(frozen=True, slots=True)
class PageState:
    """What the page says beside the question: whom it is for, and what just happened.

    ``notice`` and ``error`` are the bridge's own sentences (refusals from
    ``bot.service.delivering.messages``), shown through ``html`` too since they quote
    names people wrote. ``field_errors`` are keyed by the answer's own keys.
    """

    answerer: str
    csrf: str = ""
    preselect: str | None = None
    notice: str = ""
    error: str = ""
    field_errors: Mapping[str, str] = field(default_factory=dict)
    expired: bool = False


def question_page(record: Question, run: RunRecord | None, state: PageState) -> str:
    """The whole page: the question, who asked, its tally and level, a form while it is open."""
    parts: list[str] = [f"<h1>{html(_title(record))}</h1>"]
    if run is not None:
        parts.append(f'<p class="meta">Asked by {html(run.requester)}</p>')
    parts.append(f'<p class="meta">For {html(state.answerer)}</p>')
    tally = tally_line(record) if record.status is QuestionStatus.OUTSTANDING else ""
    if tally:
        parts.append(f'<p class="meta">{html(tally)}</p>')
    level = level_text(record.level)
    if level:
        parts.append(f'<p class="meta">{html(level)}</p>')
    parts.append(_body(record.payload))
    if state.notice:
        parts.append(f'<p class="notice" role="status">{html(state.notice)}</p>')
    if state.error:
        parts.append(f'<p class="error" role="alert">{html(state.error)}</p>')
    closed = closed_text(record, answered=_answered_text)
    if state.expired and record.status is QuestionStatus.OUTSTANDING:
        parts.append(f'<p class="notice" role="status">{html(LINK_EXPIRED)}</p>')
    elif closed is not None:
        parts.append(f'<p class="notice" role="status">{html(closed)}</p>')
        if state.expired:
            parts.append(f'<p class="meta">{html(LINK_EXPIRED)}</p>')
    else:
        parts.append(f'<p class="meta">{html(expires_text(record.expires_at))}</p>')
        parts.append(_form(record, state))
    return _document(_title(record), "\n".join(parts))


LINK_EXPIRED = "This link has expired: the question is no longer open to answers."
LINK_INVALID = (
    "This link is not valid: it may have been cut short or changed. Open the link exactly as "
    "you received it."
)
QUESTION_GONE = "The question this link was for is no longer kept by the bridge."


def message_page(title: str, sentence: str) -> str:
    """A page with one sentence: a link that is not valid, or names no question we keep."""
    return _document(title, f'<h1>{html(title)}</h1>\n<p class="notice">{html(sentence)}</p>')


def _answered_text(record: Question, at: float) -> str:
    """An answer as the page words it: an approval says who approved or rejected it."""
    decided = decision_of(record.answer)
    if record.name == APPROVAL and decided in ("approve", "reject"):
        verb = "Approved" if decided == "approve" else "Rejected"
        return f"{verb} by {record.closed_by} at {when(at)}."
    return answered_text(record.closed_by, at)


def _document(title: str, body: str) -> str:
    return (
        "<!doctype html>\n"
        '<html lang="en"><head><meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="referrer" content="no-referrer">\n'
        f"<title>{html(title)}</title>\n<style>{STYLE}</style></head>\n"
        f"<body><main>\n{body}\n</main></body></html>\n"
    )


def _title(record: Question) -> str:
    match record.payload:
        case ApprovalPayload(action=action):
            return f"Approve: {action}"
        case FormToolPayload(title=title):
            return title or "A form to fill in"
        case AskUserPayload():
            return "A question for you"
        case OtherPayload():
            return f"A question: {record.name}"
        case _:
            assert_never(record.payload)


def _body(payload: Payload) -> str:
    match payload:
        case ApprovalPayload(risk=risk, arguments=arguments, summary=summary):
            shown = json.dumps(arguments, indent=2, ensure_ascii=False, sort_keys=True)
            return (
                f"<p>{html(summary)}</p>\n"
                f'<p class="risk-{html(risk)}">Risk: {html(risk)}</p>\n'
                + (f"<pre>{html(shown)}</pre>" if arguments else "")
            )
        case FormToolPayload(message=message):
            return f"<p>{html(message)}</p>" if message else ""
        case AskUserPayload():
            return ""
        case OtherPayload(values=values):
            shown = json.dumps(dict(values), indent=2, ensure_ascii=False, sort_keys=True)
            return f"<pre>{html(shown)}</pre>"
        case _:
            assert_never(payload)


def _form(record: Question, state: PageState) -> str:
    fields: str
    match record.payload:
        case ApprovalPayload():
            fields = _approval_fields(state)
        case AskUserPayload():
            fields = _ask_user_fields(record.payload, state)
        case FormToolPayload():
            fields = _form_fields(record.payload, state)
        case OtherPayload():
            fields = _json_fields(record, state)
        case _:
            assert_never(record.payload)
    return (
        '<form method="post" autocomplete="off">\n'
        f'<input type="hidden" name="{CSRF_FIELD}" value="{html(state.csrf)}">\n'
        f'{fields}\n<button type="submit">Send answer</button>\n</form>'
    )


def _approval_fields(state: PageState) -> str:
    chosen = state.preselect if state.preselect in ("approve", "reject") else None
    choices = "".join(
        f'<label class="choice"><input type="radio" name="decision" value="{value}" required'
        f"{' checked' if chosen == value else ''}> {label}</label>\n"
        for value, label in (("approve", "Approve"), ("reject", "Reject"))
    )
    return (
        f"<fieldset><legend>Your decision</legend>\n{choices}</fieldset>\n"
        '<label class="field" for="comment">Comment <span class="hint">(optional)</span></label>\n'
        '<textarea id="comment" name="comment" maxlength="1000"></textarea>'
        + _field_error(state, "comment")
        + _field_error(state, "decision")
    )


def _ask_user_fields(payload: AskUserPayload, state: PageState) -> str:
    out: list[str] = []
    for index, item in enumerate(payload.questions):
        name = f"q{index}"
        text, header, options = item.question, item.header, item.options
        legend = html(text) + (f' <span class="hint">{html(header)}</span>' if header else "")
        if not options:
            out.append(
                f'<label class="field" for="{name}">{legend}</label>\n'
                f'<textarea id="{name}" name="{name}" required maxlength="2000"></textarea>'
            )
        else:
            multi = item.multi_select
            kind = "checkbox" if multi else "radio"
            chosen = state.preselect if index == 0 else None
            rows = "".join(
                f'<label class="choice"><input type="{kind}" name="{name}" value="{position}"'
                f"{'' if multi else ' required'}"
                f"{' checked' if chosen is not None and chosen == option.label else ''}>"
                f" <span>{html(option.label)}"
                + (
                    f'<br><span class="hint">{html(option.description)}</span>'
                    if option.description
                    else ""
                )
                + "</span></label>\n"
                for position, option in enumerate(options)
            )
            out.append(f"<fieldset><legend>{legend}</legend>\n{rows}</fieldset>")
        out.append(_field_error(state, text))
    return "\n".join(out)


_INPUT_TYPES = {"email": "email", "uri": "url", "date": "date", "date-time": "datetime-local"}


def _form_fields(payload: FormToolPayload, state: PageState) -> str:
    schema = payload.form_schema
    required = set(schema.get("required") or [])
    out: list[str] = []
    for index, (key, spec) in enumerate((schema.get("properties") or {}).items()):
        name = f"f{index}"
        label = html(spec.get("title") or key)
        hint = spec.get("description")
        need = " required" if key in required else ""
        heading = label + (f' <span class="hint">{html(hint)}</span>' if hint else "")
        kind = spec.get("type")
        values, labels = _enum_of(spec)
        default = spec.get("default")
        if kind == "array":
            item_values, item_labels = _enum_of(spec.get("items") or {})
            chosen = set(default) if isinstance(default, list) else set()
            rows = "".join(
                f'<label class="choice"><input type="checkbox" name="{name}" value="{position}"'
                f"{' checked' if value in chosen else ''}> {html(text)}</label>\n"
                for position, (value, text) in enumerate(zip(item_values, item_labels, strict=True))
            )
            out.append(f"<fieldset><legend>{heading}</legend>\n{rows}</fieldset>")
        elif values:
            options = "".join(
                f'<option value="{position}"{" selected" if value == default else ""}>'
                f"{html(text)}</option>"
                for position, (value, text) in enumerate(zip(values, labels, strict=True))
            )
            blank = "" if need else '<option value="">(none)</option>'
            out.append(
                f'<label class="field" for="{name}">{heading}</label>\n'
                f'<select id="{name}" name="{name}"{need}>{blank}{options}</select>'
            )
        elif kind == "boolean":
            out.append(
                f'<label class="choice"><input type="checkbox" name="{name}" value="true"'
                f"{' checked' if default is True else ''}> {heading}</label>"
            )
        elif kind in ("number", "integer"):
            bounds = "".join(
                f' {attribute}="{html(spec[bound])}"'
                for bound, attribute in (("minimum", "min"), ("maximum", "max"))
                if bound in spec
            )
            step = "1" if kind == "integer" else "any"
            value = f' value="{html(default)}"' if isinstance(default, int | float) else ""
            out.append(
                f'<label class="field" for="{name}">{heading}</label>\n'
                f'<input type="number" id="{name}" name="{name}" step="{step}"'
                f"{bounds}{value}{need}>"
            )
        else:
            input_type = _INPUT_TYPES.get(str(spec.get("format")), "text")
            lengths = "".join(
                f' {attribute}="{int(spec[bound])}"'
                for bound, attribute in (("minLength", "minlength"), ("maxLength", "maxlength"))
                if isinstance(spec.get(bound), int)
            )
            value = f' value="{html(default)}"' if isinstance(default, str) else ""
            out.append(
                f'<label class="field" for="{name}">{heading}</label>\n'
                f'<input type="{input_type}" id="{name}" name="{name}"{lengths}{value}{need}>'
            )
        out.append(_field_error(state, key))
    return "\n".join(out)


def _json_fields(record: Question, state: PageState) -> str:
    return (
        f'<label class="field" for="{JSON_FIELD}">Your answer, as JSON '
        f'<span class="hint">(an object for {html(record.name)})</span></label>\n'
        f'<textarea id="{JSON_FIELD}" name="{JSON_FIELD}" required>{{}}</textarea>'
        + "".join(_field_error(state, key) for key in state.field_errors)
    )


def _enum_of(spec: Mapping[str, Any]) -> tuple[list[Any], list[str]]:
    """An enum property's values and the words shown for them (``enumNames``, ``oneOf`` titles)."""
    if isinstance(spec.get("enum"), list):
        values = list(spec["enum"])
        names = spec.get("enumNames")
        shown = names if isinstance(names, list) and len(names) == len(values) else values
        return values, [str(name) for name in shown]
    if isinstance(spec.get("oneOf"), list):
        pairs = [item for item in spec["oneOf"] if isinstance(item, dict) and "const" in item]
        return [item["const"] for item in pairs], [
            str(item.get("title", item["const"])) for item in pairs
        ]
    return [], []


def _field_error(state: PageState, key: str) -> str:
    error = state.field_errors.get(key)
    return f'<p class="error" role="alert">{html(key)}: {html(error)}</p>' if error else ""


class PageFormError(BotError):
    """What the person sent does not fit the form drawn (a tampered or stale page)."""


def read_answer(record: Question, form: Mapping[str, Sequence[str]]) -> dict[str, Any]:
    """The answer, in the interaction's own shape, from the page's posted fields.

    Only the shape is read here (which option a position names, a number
    from its text); whether the answer is valid is the registration's call,
    made where every surface's answers are checked (``RunService.redeem``).
    """
    match record.payload:
        case ApprovalPayload():
            return {"decision": _one(form, "decision"), "comment": _one(form, "comment")}
        case AskUserPayload(questions=questions):
            answers: dict[str, str | list[str]] = {}
            for index, item in enumerate(questions):
                name = f"q{index}"
                if not item.options:
                    answers[item.question] = _one(form, name)
                    continue
                labels = [option.label for option in _chosen(item.options, form.get(name, ()))]
                if item.multi_select:
                    answers[item.question] = labels
                elif labels:
                    answers[item.question] = labels[0]
            return {"answers": answers}
        case FormToolPayload(form_schema=schema):
            return _form_answer(schema, form)
        case OtherPayload():
            try:
                value = json.loads(_one(form, JSON_FIELD) or "{}")
            except ValueError:
                raise PageFormError("The answer is not valid JSON; write a JSON object.") from None
            if not isinstance(value, dict):
                raise PageFormError("The answer must be a JSON object, in braces.")
            return value
        case _:
            assert_never(record.payload)


def _chosen(options: Sequence[V], positions: Sequence[str]) -> list[V]:
    """The options the page's positions name."""
    return [_option(options, position) for position in positions]


def _form_answer(schema: Mapping[str, Any], form: Mapping[str, Sequence[str]]) -> dict[str, Any]:
    answer: dict[str, Any] = {}
    for index, (key, spec) in enumerate((schema.get("properties") or {}).items()):
        name, kind = f"f{index}", spec.get("type")
        sent = list(form.get(name, ()))
        if kind == "array":
            values, _ = _enum_of(spec.get("items") or {})
            answer[key] = [_option(values, position) for position in sent]
            continue
        if kind == "boolean":
            answer[key] = sent == ["true"]
            continue
        text = sent[0] if sent else ""
        if text == "":
            continue  # left blank: absent, and the schema says whether that is allowed
        values, _ = _enum_of(spec)
        if values:
            answer[key] = _option(values, text)
        elif kind == "integer":
            answer[key] = _number(text, int)
        elif kind == "number":
            answer[key] = _number(text, float)
        elif spec.get("format") == "date-time" and len(text) == 16:
            answer[key] = f"{text}:00Z"  # a datetime-local input's minutes, read as UTC
        else:
            answer[key] = text
    return answer


def _one(form: Mapping[str, Sequence[str]], name: str) -> str:
    values = form.get(name, ())
    return values[0] if values else ""


def _option(options: Sequence[Any], position: str) -> Any:
    if not position.isdigit() or int(position) >= len(options):
        raise PageFormError("The page sent a choice it did not offer; reload the page.")
    option = options[int(position)]
    return option.get("label") if isinstance(option, dict) else option


def _number(text: str, kind: type[int] | type[float]) -> int | float | str:
    try:
        value = float(text)
    except ValueError:
        return text  # the registration names the field and says what it wants
    if kind is int and value.is_integer():
        return int(value)
    return value
