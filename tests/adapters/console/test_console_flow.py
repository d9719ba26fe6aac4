"""The whole path of a console conversation through the HTTP API."""

from __future__ import annotations

from typing import Any

from bot.service.answering.outcomes import Responder
from tests.adapters.console.console_support import CID, DEPLOYED, WHICH_ENV, Console


async def start_deploy(console: Console) -> dict[str, Any]:
    response = await console.send("deploy web")
    assert response.status == 202
    return await console.open_question()


async def test_message_question_answer_approval_final_text(console: Console) -> None:
    """A message pauses on ask_user, then approval; both answers lead to the final text."""
    origin = str(console.client.make_url("/")).rstrip("/")
    response = await console.client.post(
        f"/api/conversations/{CID}/messages",
        json={"text": "deploy web"},
        headers={"Origin": origin},
    )
    assert response.status == 202
    run_id = (await response.json())["run_id"]
    await console.service.wait_idle()

    asked = await console.open_question()
    assert asked["kind"] == "ask_user"
    assert asked["payload"]["questions"][0]["question"] == WHICH_ENV
    assert asked["token"]
    answered = await console.answer(asked["token"], {"answers": {WHICH_ENV: "staging"}})
    assert answered.status == 200
    assert await answered.json() == {"ok": True, "message": "Answer recorded."}

    approval = await console.open_question()
    assert approval["kind"] == "approval"
    assert approval["payload"]["arguments"] == {"service": "web", "environment": "staging"}
    approved = await console.answer(approval["token"], {"decision": "approve", "comment": "go"})
    assert approved.status == 200

    feed = await console.feed()
    (run,) = feed["runs"]
    assert (run["run_id"], run["text"], run["status"]) == (run_id, "deploy web", "completed")
    assert run["final_text"] == DEPLOYED
    assert [q["status"] for q in run["questions"]] == ["answered", "answered"]
    assert all(q["closed_text"].startswith("Answered by Ana at ") for q in run["questions"])
    assert all(q["token"] is None for q in run["questions"])
    assert run["questions"][0]["answer"] == {"answers": {WHICH_ENV: "staging"}}


async def test_conversations_list_names_the_conversation(console: Console) -> None:
    """The list shows each console conversation with its first message as title."""
    await console.send("deploy web")
    await console.send("status api", cid="c-other")
    response = await console.client.get("/api/conversations")
    listed = {c["id"]: c["title"] for c in (await response.json())["conversations"]}
    assert listed == {CID: "deploy web", "c-other": "status api"}


async def test_a_new_conversation_is_empty(console: Console) -> None:
    """A conversation id the page just made up reads as one with no runs yet."""
    assert await console.feed("c-brand-new") == {"id": "c-brand-new", "runs": []}


async def test_second_answer_with_same_token_is_refused(console: Console) -> None:
    """Replaying a spent token says who answered it and changes nothing."""
    asked = await start_deploy(console)
    await console.answer(asked["token"], {"answers": {WHICH_ENV: "staging"}})
    again = await console.answer(asked["token"], {"answers": {WHICH_ENV: "production"}})
    assert again.status == 409
    body = await again.json()
    assert body["ok"] is False
    assert "already answered by Ana" in body["error"]
    first = (await console.questions())[0]
    assert first["answer"] == {"answers": {WHICH_ENV: "staging"}}


async def test_forged_token_is_refused_and_question_stays_open(console: Console) -> None:
    """A tampered token gets 403; the real one is unspent and still answers."""
    asked = await start_deploy(console)
    header, claims, signature = asked["token"].split(".")
    flipped = ("B" if signature[0] == "A" else "A") + signature[1:]
    forged = await console.answer(f"{header}.{claims}.{flipped}", {"answers": {WHICH_ENV: "x"}})
    assert forged.status == 403
    assert "not valid" in (await forged.json())["error"]
    still = await console.open_question()
    assert still["interrupt_id"] == asked["interrupt_id"]
    assert still["token"]
    real = await console.answer(still["token"], {"answers": {WHICH_ENV: "staging"}})
    assert real.status == 200


async def test_invalid_answer_names_the_field_and_spends_nothing(console: Console) -> None:
    """An option that was not offered gets 422 naming the field; the token still works."""
    asked = await start_deploy(console)
    wrong = await console.answer(asked["token"], {"answers": {WHICH_ENV: "mars"}})
    assert wrong.status == 422
    body = await wrong.json()
    assert body["ok"] is False
    assert body["fields"]
    assert "mars" in body["error"]
    assert "Environment" in body["error"]
    assert (await console.open_question())["status"] == "outstanding"
    right = await console.answer(asked["token"], {"answers": {WHICH_ENV: "staging"}})
    assert right.status == 200


async def test_cancelled_question_shows_who_cancelled(console: Console) -> None:
    """An admin's cancel closes the question with its sentence; answering it is refused."""
    asked = await start_deploy(console)
    assert await console.service.cancel(asked["interrupt_id"], by=Responder("admin", "Root"))
    await console.service.wait_idle()
    first = (await console.questions())[0]
    assert first["status"] == "cancelled"
    assert first["closed_text"].startswith("Cancelled by Root at ")
    late = await console.answer(asked["token"], {"answers": {WHICH_ENV: "staging"}})
    assert late.status == 409
    assert "cancelled by Root" in (await late.json())["error"]


async def test_expired_question_shows_expiry(console: Console) -> None:
    """A swept question reads as expired, and its token is refused as expired."""
    asked = await start_deploy(console)
    console.clock.advance(asked["expires_at"] - console.clock() + 1)
    assert await console.service.sweep() == 1
    await console.service.wait_idle()
    first = (await console.questions())[0]
    assert first["closed_text"].startswith("Expired at ")
    late = await console.answer(asked["token"], {"answers": {WHICH_ENV: "staging"}})
    assert late.status == 409
    assert "expired" in (await late.json())["error"]
