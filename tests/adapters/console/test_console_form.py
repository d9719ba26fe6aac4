"""A ``form`` question on the console: drawn from its schema, answered with the schema's object."""

from __future__ import annotations

import json

from bot.service.answering.outcomes import AnswerInvalid
from bot.service.delivering.messages import refusal_text
from tests.adapters.console.console_support import Console, ConsoleFactory
from tests.adapters.console.test_console_security import BO_PASSWORD, PASSWORD, USERS, basic
from tests.form_support import GOOD, PAYLOAD, form_agent


async def form_console(make_console: ConsoleFactory) -> Console:
    return await make_console(spec=form_agent(None))  # type: ignore[arg-type]


async def test_a_form_is_shown_with_its_schema_and_answered_with_its_object(
    make_console: ConsoleFactory,
) -> None:
    """The page gets kind ``form`` and the schema; the run hears the object; the feed shows it."""
    console = await form_console(make_console)
    assert (await console.send("sign up")).status == 202
    asked = await console.open_question()
    assert asked["kind"] == "form"
    props = asked["payload"]["schema"]["properties"]
    # Beside each property, the name and enum values an answer must carry as asked.
    assert {name: spec.pop("key") for name, spec in props.items()} == {n: n for n in props}
    assert props["plan"].pop("values") == ["free", "pro"]
    assert props["regions"]["items"].pop("values") == ["eu", "us", "apac"]
    assert asked["payload"] == PAYLOAD
    assert asked["yours"] and asked["token"]

    answered = await console.answer(asked["token"], {**GOOD, "age": 36.0})
    assert answered.status == 200, await answered.text()
    (run,) = (await console.feed())["runs"]
    (question,) = run["questions"]
    assert question["status"] == "answered"
    assert question["answer"] == GOOD  # 36.0 kept as the integer the schema asks for
    assert question["closed_text"].startswith("Answered by Ana at ")
    assert run["final_text"] == f"Signed up: {json.dumps(GOOD, sort_keys=True)}"


async def test_a_bad_form_answer_is_refused_with_the_sentence_and_spends_nothing(
    make_console: ConsoleFactory,
) -> None:
    """Each wrong field is named in the one sentence; the token still answers afterwards."""
    console = await form_console(make_console)
    await console.send("sign up")
    asked = await console.open_question()
    bad = {"name": "Ada", "age": 200, "agree": "yes", "email": "not-an-address", "x": 1}
    refused = await console.answer(asked["token"], bad)
    assert refused.status == 422
    body = await refused.json()
    fields = {
        "x": "is not in the form",
        "email": "is not a valid email",
        "age": "must be at most 150",
        "agree": "must be true or false",
    }
    assert body == {"ok": False, "error": refusal_text(AnswerInvalid(fields)), "fields": fields}
    still = await console.open_question()
    assert still["interrupt_id"] == asked["interrupt_id"] and still["token"] == asked["token"]
    assert (await console.answer(asked["token"], GOOD)).status == 200


async def test_a_form_missing_a_required_field_is_refused(make_console: ConsoleFactory) -> None:
    console = await form_console(make_console)
    await console.send("sign up")
    asked = await console.open_question()
    refused = await console.answer(asked["token"], {"name": "Ada", "agree": False})
    assert refused.status == 422
    assert (await refused.json())["fields"] == {"age": "is required"}


async def test_the_page_loads_the_form_script(make_console: ConsoleFactory) -> None:
    """index.html names form.js before app.js, and the console serves it."""
    console = await form_console(make_console)
    page = await (await console.client.get("/")).text()
    assert page.index("/static/form.js") < page.index("/static/app.js")
    script = await console.client.get("/static/form.js")
    assert script.status == 200 and "function formForm(" in await script.text()


async def test_someone_else_is_refused_a_form_as_any_question(
    make_console: ConsoleFactory,
) -> None:
    """The same policy as every kind: Bo may not answer Ana's form; her token still works."""
    console = await make_console(users=USERS, spec=form_agent(None))  # type: ignore[arg-type]
    ana, bo = basic("ana", PASSWORD), basic("bo", BO_PASSWORD)
    assert (await console.send("sign up", headers=ana)).status == 202
    feed = (await console.feed(headers=bo))["runs"][0]["questions"][0]
    assert feed["kind"] == "form" and feed["yours"] is False
    asked = (await console.feed(headers=ana))["runs"][0]["questions"][0]
    refused = await console.answer(asked["token"], GOOD, headers=bo)
    assert refused.status == 403
    assert "not yours to answer" in (await refused.json())["error"]
    assert (await console.answer(asked["token"], GOOD, headers=ana)).status == 200
