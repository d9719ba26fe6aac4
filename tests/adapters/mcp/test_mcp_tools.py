"""The MCP tools through the SDK's in-memory client, answered on the console page."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

from tests.adapters.mcp._harness import CONVERSATION, DEPLOY, rig
from tests.e2e._client import APPROVE, NAME

REJECT = {"decision": "reject", "comment": "not during the freeze"}


async def test_an_approval_pauses_the_call_until_a_person_approves(tmp_path: Path) -> None:
    """request_approval waits; the console's Approve returns approved with who decided."""
    async with rig(tmp_path) as r:
        call = asyncio.create_task(r.tool("request_approval", DEPLOY))
        asked = await r.console.outstanding(CONVERSATION, "approval")
        assert not call.done()
        assert asked["payload"]["arguments"] == DEPLOY["arguments"]
        await r.console.answer_ok(asked["token"], APPROVE)
        result = await call
        assert result["status"] == "answered"
        assert result["approved"] is True and result["decision"] == "approve"
        assert result["answered_by"] == NAME


async def test_a_rejection_is_returned_as_a_rejection_with_its_comment(tmp_path: Path) -> None:
    """Reject on the console: approved false, decision reject, the person's comment."""
    async with rig(tmp_path) as r:
        call = asyncio.create_task(r.tool("request_approval", DEPLOY))
        asked = await r.console.outstanding(CONVERSATION, "approval")
        await r.console.answer_ok(asked["token"], REJECT)
        result = await call
        assert result["status"] == "answered"
        assert result["approved"] is False and result["decision"] == "reject"
        assert result["comment"] == "not during the freeze"


async def test_an_edit_returns_approved_with_the_arguments_to_run(tmp_path: Path) -> None:
    """Where the bridge allows edits (BOT_ALLOW), the console's edit comes back approved,
    decision edit, with the person's arguments; the asked ones are in the question."""
    async with rig(tmp_path, BOT_ALLOW="approval=approve,reject,edit,respond") as r:
        call = asyncio.create_task(r.tool("request_approval", DEPLOY))
        asked = await r.console.outstanding(CONVERSATION, "approval")
        fields = {f["key"]: f["original"] for f in asked["payload"]["edit_fields"]}
        assert fields == {"service": "web", "version": "1.5"}
        edit = {"decision": "edit", "arguments": {**fields, "version": "1.4"}}
        await r.console.answer_ok(asked["token"], edit)
        result = await call
        assert result["approved"] is True and result["decision"] == "edit"
        assert result["arguments"] == {"service": "web", "version": "1.4"}


async def test_a_response_is_not_an_approval_and_carries_the_message(tmp_path: Path) -> None:
    """respond: approved false, decision respond, the person's message for the model."""
    async with rig(tmp_path, BOT_ALLOW="approval=approve,reject,edit,respond") as r:
        call = asyncio.create_task(r.tool("request_approval", DEPLOY))
        asked = await r.console.outstanding(CONVERSATION, "approval")
        await r.console.answer_ok(asked["token"], {"decision": "respond", "message": "use 1.4"})
        result = await call
        assert result["approved"] is False and result["decision"] == "respond"
        assert result["message"] == "use 1.4"


async def test_ask_human_returns_the_persons_answers(tmp_path: Path) -> None:
    """ask_human with options: the console's choice comes back keyed by the question."""
    question = "Which environment?"
    async with rig(tmp_path) as r:
        items = [{"question": question, "options": [{"label": "staging"}, {"label": "prod"}]}]
        call = asyncio.create_task(r.tool("ask_human", {"questions": items}))
        asked = await r.console.outstanding(CONVERSATION, "ask_user")
        await r.console.answer_ok(asked["token"], {"answers": {question: "staging"}})
        result = await call
        assert result["status"] == "answered" and result["kind"] == "ask_user"
        assert result["answers"] == {question: "staging"}
        assert result["approved"] is None


async def test_two_approvals_are_two_questions_and_only_the_approved_one_runs(
    tmp_path: Path,
) -> None:
    """Two calls in one turn: two questions; approve one, reject the other, one action runs."""
    ran: list[str] = []
    restart = DEPLOY | {"action": "restart", "summary": "Restart the web pods"}

    async def guarded(arguments: dict[str, object]) -> None:
        result = await r.tool("request_approval", arguments)
        if result["approved"]:
            ran.append(str(arguments["action"]))

    async with rig(tmp_path) as r:
        calls = asyncio.gather(guarded(DEPLOY), guarded(restart))

        def both(feed: dict[str, Any]) -> dict[str, str] | None:
            tokens = {
                q["payload"]["action"]: q["token"]
                for run in feed["runs"]
                for q in run.get("questions", [])
                if q["status"] == "outstanding" and q.get("token")
            }
            return tokens if len(tokens) == 2 else None

        tokens = await r.console.wait(CONVERSATION, both, what="two approvals")
        await r.console.answer_ok(tokens["deploy"], APPROVE)
        await r.console.answer_ok(tokens["restart"], REJECT)
        await calls
        assert ran == ["deploy"]
        assert len(await r.questions()) == 2


async def test_a_call_that_outlasts_its_wait_returns_the_id_and_get_answer_the_answer(
    tmp_path: Path,
) -> None:
    """Wait 0: status open with the id; a retry is the same question; get_answer answers once."""
    async with rig(tmp_path, wait_seconds=0) as r:
        first = await r.tool("request_approval", DEPLOY)
        assert first["status"] == "open" and first["question_id"] in first["next"]
        retried = await r.tool("request_approval", DEPLOY)
        assert retried["question_id"] == first["question_id"]
        asked = await r.console.outstanding(CONVERSATION, "approval")
        await r.console.answer_ok(asked["token"], APPROVE)
        answer = await r.tool("get_answer", {"question_id": first["question_id"]})
        assert answer["approved"] is True and answer["question_id"] == first["question_id"]
        assert len(await r.questions()) == 1
        # Once its outcome was handed back, the same call later asks anew.
        again = await r.tool("request_approval", DEPLOY)
        assert again["status"] == "open" and again["question_id"] != first["question_id"]


async def test_an_unknown_question_id_is_a_tool_error_in_one_sentence(tmp_path: Path) -> None:
    """get_answer of an id the key never made: is_error with the API's sentence."""
    async with rig(tmp_path) as r:
        result = await r.client.call_tool("get_answer", {"question_id": "q_nope"})
        assert result.is_error
        text = result.content[0].text  # type: ignore[union-attr]
        assert "q_nope" in text or "not" in text.lower(), text


REFUSED_CALLS = [
    ("ask_human", {"questions": []}, "questions: List should have at least 1 item"),
    (
        "ask_human",
        {"questions": [{"question": f"Question {n}?"} for n in range(6)]},
        "questions: List should have at most 5 items",
    ),
    (
        "request_approval",
        {**DEPLOY, "summary": "x" * 50_000},
        "summary: String should have at most 1000 characters",
    ),
    ("ask_human", {"questions": [{"question": "Which\x00 env?"}]}, "U+0000"),
    # Refused by the SDK's own check of the arguments, before the tool runs.
    ("ask_human", {}, "questions: Field required."),
    ("request_approval", {"summary": "Deploy web"}, "action: Field required."),
    ("request_approval", {**DEPLOY, "risk": "extreme"}, "risk: Input should be"),
    ("get_answer", {"question_id": 7}, "question_id: Input should be a valid string."),
]


async def test_a_call_the_bridge_refuses_is_its_sentence_and_one_log_line(tmp_path: Path) -> None:
    """Too few or many questions, a 50 KB summary, a NUL: is_error with the sentence, no trace."""
    async with rig(tmp_path) as r:
        for tool, arguments, sentence in REFUSED_CALLS:
            records: list[logging.LogRecord] = []
            handler = _Recording(records)
            logging.getLogger().addHandler(handler)
            try:
                result = await r.client.call_tool(tool, arguments)
            finally:
                logging.getLogger().removeHandler(handler)
            assert result.is_error, (tool, result)
            text = result.content[0].text  # type: ignore[union-attr]
            assert sentence in text and "\n" not in text and text.endswith("."), text
            assert not [x for x in records if x.exc_info or x.levelno >= logging.WARNING], [
                x.getMessage() for x in records
            ]
            assert len([x for x in records if x.name.startswith("mcp")]) <= 1, records
        assert await r.questions() == []


class _Recording(logging.Handler):
    def __init__(self, records: list[logging.LogRecord]) -> None:
        super().__init__(logging.DEBUG)
        self.records = records

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)
