"""Test helpers shared across test modules (fixtures live in conftest.py)."""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jwt
import pytest
from aiohttp.test_utils import TestServer

from bot.admin import results
from bot.app import create_app
from bot.app.settings import SettingsError, load_settings
from bot.contract.answers import answer_of
from bot.contract.models import Policy
from bot.contract.payloads import (
    ApprovalPayload,
    AskUserItem,
    AskUserOption,
    AskUserPayload,
    FormToolPayload,
    OtherPayload,
    Payload,
    payload_of,
)
from bot.human.capability import HumanInteractionCapability
from bot.human.tokens import MintedToken, TokenClaims, TokenSigner, random_signing_key
from bot.interactions.approval import approval_registration, approval_tool
from bot.kernel.turn import Agent
from bot.providers.scripted import ScriptedProvider
from bot.questions.lifecycle import Lifecycle
from bot.questions.quorum import stored_policy
from bot.questions.records import (
    Closing,
    CrossScopeAttempt,
    Question,
    QuestionStatus,
    RunRecord,
    RunStatus,
)
from bot.questions.write import Delivered, Owed, Write
from bot.service.answering.outcomes import Responder
from bot.service.answering.policy import RequesterOrApprovers
from bot.service.delivering.surfaces import Conversation
from bot.service.running.capability_ports import LifecyclePorts
from bot.service.running.runs import RunService
from bot.stores.ports import Stores
from bot.testing import RecordingSurface, call, calls, say
from tests.e2e._server import free_port

ROOT = Path(__file__).resolve().parents[1]
REQUESTER = Responder("test:alice", "Alice")
WHERE = Conversation(surface="test", scope="T1", key="C1", thread="th1")


@dataclass
class Harness:
    service: RunService
    agent: Agent
    capability: HumanInteractionCapability
    surface: RecordingSurface
    provider: ScriptedProvider
    stores: Stores

    async def start(self, text: str = "go", *, where: Conversation = WHERE) -> str:
        run = await self.service.start(where, REQUESTER, text)
        await self.service.wait_idle()
        assert run is not None
        return run.run_id

    async def answer(
        self,
        answer: dict[str, Any],
        *,
        who: Responder = REQUESTER,
        token: str | None = None,
        once_key: str = "",
        retryable: bool = False,
    ) -> Any:
        outcome = await self.service.redeem(
            token or self.surface.last_token,
            answer,
            responder=who,
            scope=WHERE.scope,
            once_key=once_key,
            retryable=retryable,
        )
        await self.service.wait_idle()
        return outcome

    async def last_row(self) -> Question:
        """The stored row of the question the run asked last."""
        row = await self.stores.ledger.get(self.surface.questions[-1][1].interrupt_id)
        assert row is not None
        return row


HarnessFactory = Callable[..., Harness]

DEPLOY_APPROVAL = call("approval", action="deploy", summary="Deploy to production")


async def paused_on_approval(
    harness: HarnessFactory,
    stores: Stores,
    policy: Mapping[str, Any],
    *,
    answerers: RequesterOrApprovers | None = None,
) -> Harness:
    """A run paused on its deploy approval under ``policy`` (``Policy`` fields); ``answerers``
    decides who may answer (anyone, unless given)."""
    h = harness(
        stores,
        [calls(DEPLOY_APPROVAL), say("done")],
        tools=[approval_tool()],
        registrations=[approval_registration()],
        policy=answerers or RequesterOrApprovers(anyone=True),
        policies={"approval": Policy.model_validate(policy)},
    )
    await h.start()
    assert h.surface.questions, "the run paused on its approval"
    return h


def clean_environment(monkeypatch: pytest.MonkeyPatch, folder: Path, names: Iterable[str]) -> None:
    """Load settings from ``folder`` (so no stray .env is read) with none of ``names`` set."""
    monkeypatch.chdir(folder)
    for name in names:
        monkeypatch.delenv(name, raising=False)


def refused_settings(monkeypatch: pytest.MonkeyPatch, environment: Mapping[str, str]) -> list[str]:
    """Set ``environment`` and load the settings, which must refuse it; the refusal's lines."""
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(SettingsError) as raised:
        load_settings()
    return list(raised.value.lines)


def run_text(
    argv: Sequence[str],
    *,
    env: Mapping[str, str] | None,
    cwd: Path | None = None,
    timeout: float = 60,
    check: bool = False,
) -> subprocess.CompletedProcess[str]:
    """Run a child to its end, keeping stdout and stderr as text for the test to read; its
    stdin is empty (a child that waits for input ends instead of hanging the test).

    The timeout bounds a hang (the test fails instead of waiting forever); it is not a duration
    under test. ``check`` raises on a non-zero exit where the test only needs the output.
    """
    return subprocess.run(
        list(argv),
        cwd=cwd,
        env=None if env is None else dict(env),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=check,
    )


def modules_loaded_by(module: str) -> list[str]:
    """Every module a fresh interpreter holds once it has imported ``module``, sorted."""
    probe = f"import json, sys\nimport {module}\nprint(json.dumps(sorted(sys.modules)))"
    done = run_text([sys.executable, "-c", probe], env=None, check=True)
    loaded: list[str] = json.loads(done.stdout)
    return loaded


def bot_command_env(database_url: str, data_dir: Path, **more: str) -> dict[str, str]:
    """This process's environment without its own bot settings (``BOT_*``, ``DATABASE_URL``),
    for a bot command whose store is ``database_url`` and whose files go in ``data_dir``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BOT_", "DATABASE_URL"))}
    return env | {"DATABASE_URL": database_url, "BOT_DATA_DIR": str(data_dir), **more}


# The SDKs Teams can run on (BOT_TEAMS_SDK); the ``teams_sdk`` fixture runs a test on each.
TEAMS_SDKS = ("botbuilder", "agents")


def bare_bot_env(folder: Path, **more: str) -> dict[str, str]:
    """No setting of this process, only a PATH, a SQLite store and a data dir in ``folder``,
    and ``more``: for a bot command whose output depends on its settings alone."""
    return {
        "PATH": "/usr/bin:/bin",
        "DATABASE_URL": f"sqlite:///{folder}/bot.sqlite3",
        "BOT_DATA_DIR": str(folder / "var"),
        **more,
    }


def app_server(folder: Path, **env: Any) -> TestServer:
    """The whole bridge (``create_app``) to serve on a free loopback port, which its settings
    name (the app accepts only its own port in Host), with its SQLite store and data in
    ``folder``; ``env`` adds or overrides settings by variable name."""
    port = free_port()
    where = {"DATABASE_URL": f"sqlite:///{folder}/bot.sqlite3", "BOT_DATA_DIR": folder / "var"}
    settings = load_settings(PORT=port, **{**where, **env})
    return TestServer(create_app(settings), host="127.0.0.1", port=port)


def run_bot(
    *words: str,
    env: Mapping[str, str] | None,
    cwd: Path | None = None,
    check: bool = False,
) -> subprocess.CompletedProcess[str]:
    """``python -m bot WORDS`` as a child process (the console entry a person types)."""
    return run_text([sys.executable, "-m", "bot", *words], env=env, cwd=cwd, check=check)


def forgeries(good: str) -> dict[str, str]:
    """Every way to get a token wrong, derived from a real one (kid ``k1``)."""
    header, _payload, signature = good.split(".")
    claims = jwt.decode(good, options={"verify_signature": False})
    stranger = TokenSigner([random_signing_key("k1")])
    fields = {k: claims[k] for k in TokenClaims.__slots__ if k in claims}
    return {
        "forged with another secret": stranger.encode(MintedToken(TokenClaims(**fields))),
        "tampered payload": ".".join([header, _b64({**claims, "scope": "T-other"}), signature]),
        "alg none": jwt.encode(claims, None, algorithm="none", headers={"kid": "k1"}),
        "unknown kid": jwt.encode(claims, "x" * 48, algorithm="HS256", headers={"kid": "k9"}),
        "truncated": good[: len(good) // 2],
        "signature dropped": good.rsplit(".", 1)[0] + ".",
        "header not JSON": ".".join([_raw_b64(b"{kid"), _payload, signature]),
        "header a list": ".".join([_raw_b64(b'["k1"]'), _payload, signature]),
        "header not UTF-8": ".".join([_raw_b64(b"\xff\xfe"), _payload, signature]),
        "10 kB of garbage": "A" * 10_240,
    }


def _b64(data: dict[str, object]) -> str:
    return _raw_b64(json.dumps(data).encode())


def _raw_b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class Steps:
    """The lifecycle's steps over one store, in the shapes the store tests call them."""

    def __init__(
        self, stores: Stores, *, owner: str = "", lifecycle: Lifecycle | None = None
    ) -> None:
        self.stores = stores
        self.lifecycle = lifecycle or Lifecycle(stores.unit)
        self.owed: list[Owed] = []
        if owner:
            self.lifecycle.bind(owner=owner, claim_seconds=30.0, sink=self.owed.extend)

    async def start(self, run: RunRecord) -> bool:
        return await self.lifecycle.start(run) is not None

    async def issue(self, record: Question) -> None:
        """Ask ``record``; a row already closed is stored as it is (no post, no pause)."""
        if record.status is QuestionStatus.OUTSTANDING:
            await self.lifecycle.ask(record)
        else:
            await self.stores.unit.apply(Write(record.run_id, record.issued_at, question=record))

    async def spend(self, interrupt_id: str, closing: Closing) -> bool:
        return await self.lifecycle.close(interrupt_id, closing) is not None

    async def finish(
        self, run_id: str, status: RunStatus, *, at: float, text: str, failed: bool = False
    ) -> bool:
        return await self.lifecycle.finish(run_id, status, at=at, text=text, failed=failed)

    async def extend(
        self, interrupt_id: str, *, expires_at: float, at: float, actor: str
    ) -> Question | None:
        record = await self.stores.ledger.get(interrupt_id)
        if record is None or record.status is not QuestionStatus.OUTSTANDING:
            return None
        written = await self.lifecycle.extend(record, expires_at=expires_at, at=at, actor=actor)
        return None if written is None else written.question

    async def repost(self, interrupt_id: str, *, at: float, actor: str) -> Question | None:
        record = await self.stores.ledger.get(interrupt_id)
        if record is None or record.status is not QuestionStatus.OUTSTANDING:
            return None
        written = await self.lifecycle.repost(record, at=at, actor=actor)
        return None if written is None else written.question

    async def delivered(
        self, delivery_id: int, *, at: float, message_ref: dict[str, Any] | None = None
    ) -> None:
        await self.lifecycle.delivered([Delivered(delivery_id, at, message_ref)])

    async def delivered_all(self, done: Sequence[Delivered]) -> None:
        await self.lifecycle.delivered(done)

    async def set_message_ref(
        self, interrupt_id: str, ref: dict[str, Any], *, at: float = 0.0
    ) -> None:
        await self.lifecycle.set_message_ref(interrupt_id, ref, at=at)

    async def record_cross_scope(
        self, interrupt_id: str, attempt: CrossScopeAttempt, *, at: float = 0.0
    ) -> None:
        await self.lifecycle.record_cross_scope(interrupt_id, attempt, at=at)


def steps(stores: Stores, *, owner: str = "", lifecycle: Lifecycle | None = None) -> Steps:
    """``lifecycle``: a service's own (``RunService.questions``), bound to its deliverer."""
    return Steps(stores, owner=owner, lifecycle=lifecycle)


def bridge_ports(stores: Stores) -> LifecyclePorts:
    """The capability's ports as the bridge wires them, over ``stores``."""
    return LifecyclePorts(Lifecycle(stores.unit), stores.checkpoints)


# How long a test waits for an event before failing instead of hanging.
HANG_GUARD_SECONDS = 10.0


class FakeTimer:
    """One timer armed on ``FakeTimers``: fires at ``when`` unless cancelled first."""

    def __init__(self, when: float, callback: Callable[..., object], args: tuple[Any, ...]) -> None:
        self._when = when
        self.callback = callback
        self.args = args
        self.cancelled = False

    def when(self) -> float:
        return self._when

    def cancel(self) -> None:
        self.cancelled = True


class FakeTimers:
    """An event loop's clock and timers, on a time that moves only when told to.

    Stands in for the loop's ``time``, ``call_at`` and ``call_later`` (the
    ``timers=`` seam of ``Foreground`` and ``LeaseKeeper``); called, it is a
    clock too. ``advance`` fires the timers due on the way, in order, each at
    its own time, and gives the loop a turn after each so the work a timer
    woke runs before the next one fires, as on a real loop.
    """

    def __init__(self, start: float = 0.0) -> None:
        self.now = start
        self._armed: list[FakeTimer] = []
        self._changed = asyncio.Event()

    def __call__(self) -> float:
        return self.now

    def time(self) -> float:
        return self.now

    def call_at(self, when: float, callback: Callable[..., object], *args: Any) -> FakeTimer:
        timer = FakeTimer(when, callback, args)
        self._armed.append(timer)
        self._changed.set()
        return timer

    def call_later(self, delay: float, callback: Callable[..., object], *args: Any) -> FakeTimer:
        return self.call_at(self.now + delay, callback, *args)

    @property
    def pending(self) -> list[FakeTimer]:
        """The timers armed and neither fired nor cancelled, soonest first."""
        return sorted((t for t in self._armed if not t.cancelled), key=FakeTimer.when)

    async def armed(self) -> None:
        """Return once some timer is pending (the work that arms one has run).

        Real time bounds the wait only so that a timer never armed fails the
        test instead of hanging it.
        """
        async with asyncio.timeout(HANG_GUARD_SECONDS):
            while not self.pending:
                self._changed.clear()
                await self._changed.wait()

    async def advance(self, seconds: float) -> None:
        end = self.now + seconds
        fired = 0
        while (due := self.pending) and due[0].when() <= end:
            timer = due[0]
            fired += 1
            assert fired < 10_000, f"timers keep firing at {self.now}: one re-arms for its own time"
            self._armed.remove(timer)
            self.now = max(self.now, timer.when())
            timer.callback(*timer.args)
            await asyncio.sleep(0)  # a turn of the loop for what the timer woke or spawned
        self.now = end


# What a drawn question's buttons carry in place of a signed token.
DRAWN_TOKEN = "tok"


def open_question(
    name: str,
    payload: dict[str, Any],
    *,
    expires_at: float = 1.8e9,
    interrupt_id: str = "int_1",
    level: int = 0,
) -> Question:
    """A question waiting for an answer, as a surface draws it (with a token, ``DRAWN_TOKEN``)."""
    return Question(
        interrupt_id=interrupt_id,
        run_id="run_1",
        scope="T1",
        name=name,
        tool_call_id="call_1",
        checkpoint_id="",
        payload=typed(name, payload),
        issued_at=expires_at - 3600,
        expires_at=expires_at,
        level=level,
    )


def closed_question(
    name: str,
    payload: dict[str, Any],
    status: str,
    answer: dict[str, Any] | None = None,
    *,
    closed_at: float = 1.8e9,
    closed_by: str = "",
    policy: dict[str, Any] | None = None,
) -> Question:
    """A question as it closed (``status``: answered, expired or cancelled), to redraw; its
    ``answer`` given as the JSON its row would hold, typed as the row's reader types it."""
    asked = open_question(name, payload, expires_at=closed_at + 3600)
    return dataclasses.replace(
        asked,
        issued_at=closed_at - 60,
        status=QuestionStatus(status if status != "open" else "outstanding"),
        answer=answer_of(name, status, answer),
        closed_by=closed_by,
        closed_at=closed_at,
        policy=stored_policy(policy),
    )


def pending_item(
    n: int,
    *,
    scope: str,
    name: str,
    payload: dict[str, Any],
    requester: str,
    may_answer: tuple[str, ...],
    message_ref: dict[str, Any] | None = None,
    issued_at: float = 1000.0,
    expires_at: float = 90_000.0,
) -> results.PendingItem:
    """The ``n``-th question of an admin's ``pending`` page (cursor ``n + 1``), to render."""
    question = Question(
        interrupt_id=f"int_{n:04d}",
        run_id=f"run_{n}",
        scope=scope,
        name=name,
        tool_call_id=f"call_{n}",
        checkpoint_id="",
        payload=typed(name, payload),
        issued_at=issued_at,
        expires_at=expires_at,
        message_ref=message_ref,
    )
    return results.PendingItem(question, requester, "", may_answer, cursor=str(n + 1))


def typed(name: str, values: dict[str, Any]) -> Payload:
    """A question's payload as the record holds it, parsed by ``name``. One past the bounds
    its model sets (tests of a renderer's own limits go beyond them) is built unchecked, as
    the model's class still, since no door would have let it in."""
    parsed = payload_of(name, values)
    if not isinstance(parsed, OtherPayload):
        return parsed
    match name:
        case "ask_user":
            return AskUserPayload.model_construct(
                questions=[
                    AskUserItem.model_construct(
                        **{
                            **q,
                            "options": [
                                AskUserOption.model_construct(**o) for o in q.get("options", [])
                            ],
                        }
                    )
                    for q in values.get("questions", [])
                ]
            )
        case "approval":
            return ApprovalPayload.model_construct(**{"action": "", "summary": "", **values})
        case "form":
            fields = {("form_schema" if k == "schema" else k): v for k, v in values.items()}
            return FormToolPayload.model_construct(**{"title": "", **fields})
        case _:
            return parsed
