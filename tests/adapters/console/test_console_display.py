"""What the console serves is what is asked: hidden controls arrive visible, answers as asked."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from bot.contract.answers import answer_json
from bot.contract.models import Policy
from bot.display import has_hidden
from bot.service.answering.outcomes import Counted, Responder
from bot.service.answering.policy import RequesterOrApprovers
from tests.adapters.console.console_support import CID, Console, ConsoleFactory
from tests.asking_support import (
    MARKUP,
    RLO,
    TROJAN_ASK,
    TROJAN_LABEL,
    TROJAN_QUESTION,
    asking_agent,
)

# Where the page is given an original to send back, never to show.
ORIGINAL_SLOTS = {"key", "value", "values"}


def hidden_strings(data: Any, path: str = "") -> Iterator[str]:
    """The path of every string (keys too) in ``data`` that still hides a control."""
    if isinstance(data, str):
        if has_hidden(data):
            yield path
    elif isinstance(data, dict):
        for key, value in data.items():
            if has_hidden(key):
                yield f"{path}/<key {key!r}>"
            yield from hidden_strings(value, f"{path}/{key}")
    elif isinstance(data, list):
        for index, value in enumerate(data):
            yield from hidden_strings(value, f"{path}/{index}")


def shown_only(data: Any) -> list[str]:
    """Hidden controls outside the originals' slots: what the page could show raw."""
    return [p for p in hidden_strings(data) if not set(p.split("/")) & ORIGINAL_SLOTS]


async def asking_console(make_console: ConsoleFactory, **options: Any) -> Console:
    return await make_console(spec=asking_agent(), **options)


async def test_a_question_option_approval_and_form_are_served_with_controls_visible(
    make_console: ConsoleFactory,
) -> None:
    """U+202E in a question, an option, an approval's arguments and a form: none served raw."""
    console = await asking_console(make_console)
    for cid, text in (
        ("c-ask", "trojan ask"),
        ("c-app", "trojan approve"),
        ("c-form", "trojan form"),
    ):
        assert (await console.send(text, cid=cid)).status == 202
    listed = await (await console.client.get("/api/conversations")).json()
    assert shown_only(listed) == [], listed
    ask, approval, form = [await console.open_question(cid) for cid in ("c-ask", "c-app", "c-form")]
    for question in (ask, approval, form):
        assert shown_only(await console.feed(question_cid(question))) == []

    (item,) = ask["payload"]["questions"]
    assert item["question"] == "Deploy web to prod⟨U+202E⟩gnits?"
    assert item["header"] == "Env⟨U+2066⟩ironment"
    assert [o["label"] for o in item["options"]] == ["staging⟨U+202E⟩", "production"]
    assert item["options"][1]["description"] == "customers see it⟨U+2069⟩⟨U+202E⟩"
    # Markup is left for textContent to show as typed: no escaping of it here.
    assert MARKUP in item["options"][0]["description"]
    assert approval["payload"]["arguments"] == {
        "target⟨U+202E⟩": "prod⟨U+202E⟩gnits",
        "flags": {"force⟨U+200F⟩": ["yes⟨U+061C⟩"]},
    }
    assert approval["payload"]["action"] == "deploy⟨U+202E⟩"
    assert form["payload"]["title"] == "Sign⟨U+202E⟩ up"
    props = form["payload"]["schema"]["properties"]
    assert props["name⟨U+202E⟩"]["title"] == "Your⟨U+202E⟩ name"
    assert props["plan"]["enum"] == ["free⟨U+202E⟩", "pro"]
    assert form["payload"]["schema"]["required"] == ["name⟨U+202E⟩"]


def question_cid(question: dict[str, Any]) -> str:
    return {"ask_user": "c-ask", "approval": "c-app", "form": "c-form"}[question["kind"]]


async def test_the_originals_sit_only_where_an_answer_names_them(
    make_console: ConsoleFactory,
) -> None:
    """A question's ``key``, an option's ``value``, a property's ``key`` and enum ``values``."""
    console = await asking_console(make_console)
    await console.send("trojan ask", cid="c-ask")
    await console.send("trojan form", cid="c-form")
    ask = await console.open_question("c-ask")
    (item,) = ask["payload"]["questions"]
    assert item["key"] == TROJAN_QUESTION
    assert [o["value"] for o in item["options"]] == [TROJAN_LABEL, "production"]
    assert sorted(hidden_strings(ask)) == [
        "/payload/questions/0/key",
        "/payload/questions/0/options/0/value",
    ]
    form = await console.open_question("c-form")
    props = form["payload"]["schema"]["properties"]
    assert [spec["key"] for spec in props.values()] == [f"name{RLO}", "plan", "regions"]
    assert props["plan"]["values"] == [f"free{RLO}", "pro"]
    assert props["regions"]["items"]["values"] == [f"eu{RLO}", "us"]


async def test_an_option_whose_label_hides_a_control_is_answered_as_asked(
    make_console: ConsoleFactory,
) -> None:
    """The page sends the served key and value back; the run hears the original label."""
    console = await asking_console(make_console)
    await console.send("trojan ask")
    ask = await console.open_question()
    (item,) = ask["payload"]["questions"]
    answer = {"answers": {item["key"]: item["options"][0]["value"]}}
    answered = await console.answer(ask["token"], answer)
    assert answered.status == 200, await answered.text()
    ((run, (question,)),) = [
        (view.run, view.questions) for view in await console.service.history("console", CID)
    ]
    assert answer_json(question.answer) == {"answers": {TROJAN_QUESTION: TROJAN_LABEL}}
    assert run.final_text == "Asked."
    # The closed question reads the answer shown, keyed as its question is shown.
    (closed,) = await console.questions()
    assert closed["answer"] == {"answers": {"Deploy web to prod⟨U+202E⟩gnits?": "staging⟨U+202E⟩"}}
    assert TROJAN_ASK["questions"][0]["question"] == TROJAN_QUESTION  # the script asked it raw


async def test_the_displayed_label_is_not_an_answer(make_console: ConsoleFactory) -> None:
    """Sending back what was shown, not what was asked, is refused: nothing is guessed."""
    console = await asking_console(make_console)
    await console.send("trojan ask")
    ask = await console.open_question()
    (item,) = ask["payload"]["questions"]
    refused = await console.answer(
        ask["token"], {"answers": {item["key"]: item["options"][0]["label"]}}
    )
    assert refused.status == 422
    body = await refused.json()
    assert shown_only(body) == [], body
    assert (await console.open_question())["token"] == ask["token"]


async def test_a_refusal_and_a_quorum_tally_name_people_as_shown(
    make_console: ConsoleFactory,
) -> None:
    """Voters named with a U+202E read visibly in the tally, the close and "already answered"."""
    bo = Responder(id="console:bo", name=f"bo{RLO}")
    cy = Responder(id="console:cy", name=f"cy{RLO}")
    console = await asking_console(
        make_console,
        policy=RequesterOrApprovers(anyone=True),
        policies={"approval": Policy(quorum=2)},
    )
    await console.send("trojan approve")
    approval = await console.open_question()
    vote = await console.service.redeem(
        approval["token"], {"decision": "approve"}, responder=bo, scope="console"
    )
    assert isinstance(vote, Counted)
    tallied = await console.open_question()
    assert tallied["tally"] == "1 of 2 approved: @bo⟨U+202E⟩"
    await console.service.redeem(
        approval["token"], {"decision": "reject"}, responder=cy, scope="console"
    )
    await console.service.wait_idle()
    late = await console.answer(approval["token"], {"decision": "approve"})
    assert late.status == 409
    body = await late.json()
    assert shown_only(body) == [] and "cy⟨U+202E⟩" in body["error"], body
    (closed,) = await console.questions()
    assert shown_only(closed) == [] and closed["tally"] == ""
    assert "cy⟨U+202E⟩" in closed["closed_text"]


async def test_the_admin_panel_serves_every_text_visible(make_console: ConsoleFactory) -> None:
    """/api/admin/pending and /api/admin/questions/{id}: payloads and names, no raw control."""
    console = await asking_console(make_console, admin=True)
    for cid, text in (
        ("c-ask", "trojan ask"),
        ("c-app", "trojan approve"),
        ("c-form", "trojan form"),
    ):
        await console.send(text, cid=cid)
    pending = await console.client.get("/api/admin/pending")
    body = await pending.json()
    assert pending.status == 200 and len(body["items"]) == 3, body
    assert list(hidden_strings(body)) == []
    assert "Deploy web to prod⟨U+202E⟩gnits?" in str(body)
    for item in body["items"]:
        shown = await console.client.get(f"/api/admin/questions/{item['question']['interrupt_id']}")
        assert shown.status == 200
        assert list(hidden_strings(await shown.json())) == []
