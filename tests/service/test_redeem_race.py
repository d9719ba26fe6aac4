"""Two OS processes redeeming one token 200 times on one SQLite file: one success."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path

import pytest

from bot.contract.answers import answer_json
from bot.human import ASK_USER
from bot.human.tokens import SigningKey, TokenSigner
from bot.stores import QuestionStatus, open_stores
from bot.testing import FixedClock, call, calls, question
from tests import waiting
from tests.support import HarnessFactory

REPO = Path(__file__).resolve().parents[2]
SECRET = "race-secret-" + "r" * 40

# Each child composes the real capability with the shared key, waits for a
# line on its stdin, then redeems the token through the full Redeemer 100 times.
REDEEMER = """
import asyncio, json, sys, time
from bot.app.compose import build_agent
from bot.human.tokens import SigningKey, TokenSigner
from bot.service.answering.outcomes import Redeemed, Responder
from bot.service.answering.policy import RequesterOrApprovers
from bot.providers.scripted import ScriptedProvider
from bot.service.answering.redeem import Redeemer
from bot.stores import open_stores

async def main() -> None:
    path, secret, token = sys.argv[1:4]
    stores = await open_stores(f"sqlite:///{path}")
    try:
        signer = TokenSigner([SigningKey("k1", secret, secret)])
        _, capability = build_agent(
            provider=ScriptedProvider([]), stores=stores, signer=signer, clock=time.time
        )
        redeemer = Redeemer(
            capability=capability, stores=stores, policy=RequesterOrApprovers(), clock=time.time
        )
        who = Responder("test:alice", "Alice")
        answer = {"answers": {"Which environment?": "staging"}}
        print("ready", flush=True)
        sys.stdin.readline()  # "go", written to both children at once
        outcomes = {}
        for _ in range(100):
            outcome = await redeemer.redeem(token, answer, responder=who, scope="T1")
            name = type(outcome).__name__
            outcomes[name] = outcomes.get(name, 0) + 1
        print(json.dumps(outcomes), flush=True)
    finally:
        await stores.close()

asyncio.run(main())
"""


@pytest.fixture
def clock() -> FixedClock:
    """The children redeem on the real clock: the token is minted now, not in 2027."""
    return FixedClock(time.time())


@pytest.fixture
def signer() -> TokenSigner:
    """The harness signs with the key the child processes are given."""
    return TokenSigner([SigningKey("k1", SECRET, SECRET)])


async def test_two_processes_racing_200_redemptions_of_one_token_have_one_winner(
    harness: HarnessFactory, tmp_path: Path
) -> None:
    """Exactly one of 200 full redemptions (decode, checks, spend) succeeds."""
    path = tmp_path / "bot.sqlite3"
    stores = await open_stores(f"sqlite:///{path}")
    try:
        h = harness(
            stores, [calls(call(ASK_USER, questions=[question("Which environment?", "staging")]))]
        )
        await h.start()
        token = h.surface.last_token
        interrupt_id = h.surface.questions[-1][1].interrupt_id
    finally:
        await stores.close()

    children = [
        await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            REDEEMER,
            str(path),
            SECRET,
            token,
            cwd=REPO,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        for _ in range(2)
    ]
    for child in children:
        assert child.stdout is not None
        assert (await asyncio.wait_for(child.stdout.readline(), 60)).strip() == b"ready"
    await waiting.release(children)
    outputs = [await asyncio.wait_for(child.communicate(), 120) for child in children]
    totals: dict[str, int] = {}
    for child, (out, err) in zip(children, outputs, strict=True):
        assert child.returncode == 0, err.decode()
        for name, count in json.loads(out.decode().splitlines()[-1]).items():
            totals[name] = totals.get(name, 0) + count
    assert totals == {"Redeemed": 1, "AlreadyAnswered": 199}

    reopened = await open_stores(f"sqlite:///{path}")
    try:
        row = await reopened.ledger.get(interrupt_id)
        assert row is not None and row.status is QuestionStatus.ANSWERED
        assert answer_json(row.answer) == {"answers": {"Which environment?": "staging"}}
    finally:
        await reopened.close()
