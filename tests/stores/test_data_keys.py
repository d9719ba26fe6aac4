"""Encryption at rest (``BOT_DATA_KEYS``) on SQLite and PostgreSQL: the store's raw bytes hold
none of what was asked or answered, rows from before still read, ``data rekey`` moves every
row to the new key while questions are answered, and a missing or wrong key is one sentence."""

from __future__ import annotations

import asyncio
import base64
import json
import socket
import sqlite3
import time
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path

import asyncpg
import pytest
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from bot.app.compose import build_agent
from bot.contract.answers import OtherAnswer
from bot.contract.payloads import payload_json, payload_of
from bot.human import ASK_USER
from bot.human.tokens import TokenSigner, random_signing_key
from bot.kernel.messages import Message, ModelReply, ToolDefinition
from bot.providers.scripted import ScriptedProvider
from bot.questions.records import Question, QuestionStatus, RunRecord
from bot.service.answering.outcomes import Responder
from bot.service.delivering.surfaces import Conversation
from bot.service.running.runs import RunService
from bot.stores import AuditEvent, Closing, data_keys, open_stores
from bot.stores._rows import PLAIN_DETAILS
from bot.stores.data_keys import DataKeys, parse_data_keys
from bot.stores.ports import HistoryFilter
from bot.testing import RecordingSurface, call, calls, question, say
from tests.audit import test_audit_cli as audit_cli
from tests.audit import test_retention as retention_test
from tests.audit.test_audit_cli import store_url  # noqa: F401 - the fixture
from tests.stores._postgres import BASE_URL
from tests.support import steps

TIMEOUT = 120
SIGNING = "ksig:" + "s" * 48
OLD = data_keys.random_data_key()
NEW = data_keys.random_data_key()
# What the person and the agent wrote: none of it may reach the store's bytes.
WORDS = ("secret-falcon", "purple-otter", "replicas-forty-two", "tangerine-comment")


@pytest.fixture
def keyring() -> Iterator[None]:
    """This process seals under ``OLD``, as a bridge with BOT_DATA_KEYS=OLD does."""
    data_keys.use(parse_data_keys(OLD))
    yield
    data_keys.use(None)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def kid(entry: str) -> str:
    return entry.partition(":")[0]


async def bot(
    cwd: Path, *words: str, url: str, keys: str | None, port: int = 0
) -> tuple[int, str, str]:
    """``python -m bot WORDS`` as an operator runs it, with ``keys`` as BOT_DATA_KEYS."""
    more = {"PORT": str(port or free_port()), "BOT_DATA_DIR": str(cwd / "var")}
    if keys is not None:
        more["BOT_DATA_KEYS"] = keys
    return await audit_cli.bot(cwd, *words, url=url, keys=SIGNING, more=more)


def asked(n: int) -> tuple[RunRecord, Question]:
    run, question = retention_test.asked(n, None)
    payload = {
        "question": f"Deploy the {WORDS[0]} build?",
        "arguments": {"target": WORDS[1], "replicas": WORDS[2]},
    }
    # The run's own text is not among the sealed columns (docs/production.md).
    typed = payload_of("request_approval", payload)
    return replace(run, text=""), replace(question, name="request_approval", payload=typed)


def turn() -> dict[str, object]:
    return {"messages": [{"role": "user", "content": f"ship {WORDS[0]} with {WORDS[2]}"}]}


def answer() -> dict[str, object]:
    return {
        "decision": "edit",
        "comment": WORDS[3],
        "edited_arguments": {"target": WORDS[1], "replicas": WORDS[2]},
    }


async def ask(url: str, numbers: range) -> None:
    stores = await open_stores(url)
    try:
        for n in numbers:
            run, question = asked(n)
            await steps(stores).start(run)
            # The turn state and a finished step: the agent's conversation, the tool's result.
            await stores.checkpoints.save(run.run_id, turn(), checkpoint_id=question.checkpoint_id)
            await stores.journal.record(run.run_id, "tool:call-0", {"result": WORDS[1]})
            await steps(stores).issue(question)
            await stores.audit.append(
                AuditEvent(1001.0 + n, "note", run.run_id, question.interrupt_id, "x", answer())
            )
    finally:
        await stores.close()


async def close(url: str, n: int) -> bool:
    stores = await open_stores(url)
    try:
        closing = Closing(
            QuestionStatus.ANSWERED, by="Alice", at=1500.0 + n, answer=OtherAnswer(answer())
        )
        return await steps(stores).spend(f"q{n}", closing)
    finally:
        await stores.close()


async def raw_bytes(url: str, tmp_path: Path) -> bytes:
    """The store as an attacker who copies it sees it: the SQLite file, or a ``pg_dump``."""
    if url.startswith("sqlite"):
        path = Path(url.removeprefix("sqlite:///"))
        parts = [path, path.with_name(path.name + "-wal")]
        return b"".join(p.read_bytes() for p in parts if p.exists())
    schema = url.rpartition("search_path=")[2]
    process = await asyncio.create_subprocess_exec(
        "pg_dump",
        "--no-owner",
        "-n",
        schema,
        BASE_URL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    dumped, err = await asyncio.wait_for(process.communicate(), TIMEOUT)
    assert process.returncode == 0, err
    assert b"CREATE TABLE" in dumped  # a dump of the schema, not of nothing
    return dumped


# The events whose details are stored as they are (``_rows.PLAIN_DETAILS``), and the keys
# each may hold: what the store keeps in plaintext anyway (routes, kinds, references).
PLAIN_DETAIL_KEYS = {
    "refused": {"reason"},
    "started": {"surface"},
    "paused": {"name"},
    "posted": {"surface", "message", "post", "repost"},
}
_PLAIN_KINDS = ", ".join(f"'{kind}'" for kind in sorted(PLAIN_DETAIL_KEYS))


async def sealed_values(url: str) -> list[str]:
    """Every value of the sealed columns (a refusal's, a start's, a pause's and a post's
    details, and the empty object, stay plaintext)."""
    selects = (
        "SELECT payload FROM pauses",
        "SELECT answer FROM pauses WHERE answer IS NOT NULL",
        "SELECT body FROM outbox",
        f"SELECT detail FROM audit WHERE detail IS NOT NULL AND kind NOT IN ({_PLAIN_KINDS})",  # noqa: S608 - our own text
        "SELECT state FROM checkpoints",
        "SELECT value FROM journal",
    )
    if url.startswith("sqlite"):
        with sqlite3.connect(url.removeprefix("sqlite:///")) as conn:
            values = [row[0] for sql in selects for row in conn.execute(sql)]
    else:
        conn = await asyncpg.connect(url)
        try:
            values = [row[0] for sql in selects for row in await conn.fetch(sql)]
        finally:
            await conn.close()
    return [value for value in values if value != data_keys.EMPTY]


@pytest.mark.usefixtures("keyring")
async def test_the_store_holds_none_of_the_words(
    tmp_path: Path,
    store_url: str,  # noqa: F811 - the fixture
) -> None:
    """Asked, audited and answered with BOT_DATA_KEYS set: the file (or dump) has none of the
    question's words, the comment or the arguments; the bridge reads them all back; the
    audit, its digests over the plaintext, verifies from the store."""
    await ask(store_url, range(1, 4))
    assert await close(store_url, 1)
    stores = await open_stores(store_url)
    try:
        kept = await stores.unit.question("q1")
        assert kept is not None
        assert payload_json(kept.payload)["arguments"] == {"target": WORDS[1], "replicas": WORDS[2]}
        assert kept.answer == OtherAnswer(answer())
        assert await stores.checkpoints.load("run-1:1") == turn()
        assert await stores.journal.steps("run-1") == {"tool:call-0": {"result": WORDS[1]}}
        # History's decision filter reads the opened answers, as it reads plaintext ones.
        edited = await stores.history.closed(HistoryFilter(decision="edit"), limit=1)
        assert [c.question.interrupt_id for c in edited] == ["q1"]
        assert await stores.history.closed(HistoryFilter(decision="approve")) == []
        events = await stores.audit.recent(run_id="run-1")
        assert [e.detail for e in events if e.kind == "note"] == [answer()]
    finally:
        await stores.close()
    raw = await raw_bytes(store_url, tmp_path)
    assert [w for w in WORDS if w.encode() in raw] == []
    assert all(v.startswith(f"enc1:{kid(OLD)}:") for v in await sealed_values(store_url))
    code, out, err = await bot(tmp_path, "audit", "verify", "--store", url=store_url, keys=OLD)
    assert (code, err) == (0, "")
    assert out.endswith("intact\n")


async def test_rows_from_before_the_keys_still_read(
    store_url: str,  # noqa: F811 - the fixture
) -> None:
    """Plaintext rows written without BOT_DATA_KEYS read once it is set, beside sealed ones."""
    await ask(store_url, range(1, 2))
    data_keys.use(parse_data_keys(OLD))
    try:
        await ask(store_url, range(2, 3))
        assert await close(store_url, 1)
        stores = await open_stores(store_url)
        try:
            before, after = await stores.unit.question("q1"), await stores.unit.question("q2")
        finally:
            await stores.close()
    finally:
        data_keys.use(None)
    assert before is not None and after is not None
    assert before.payload == after.payload == asked(1)[1].payload
    assert before.answer == OtherAnswer(answer())
    values = await sealed_values(store_url)
    assert any(v.startswith("{") for v in values)  # q1's payload, from before
    assert any(v.startswith("enc1:") for v in values)


async def test_rekey_moves_every_row_while_questions_are_answered(
    tmp_path: Path,
    store_url: str,  # noqa: F811 - the fixture
) -> None:
    """Rows under OLD (and plaintext from before); NEW put first; ``data rekey`` runs in its own
    process while this one answers questions under NEW: every row ends under NEW."""
    await ask(store_url, range(0, 5))
    data_keys.use(parse_data_keys(OLD))
    try:
        await ask(store_url, range(5, 60))
    finally:
        data_keys.use(None)
    rotated = f"{NEW},{OLD}"
    data_keys.use(parse_data_keys(rotated))
    try:
        rekey = asyncio.create_task(bot(tmp_path, "data", "rekey", url=store_url, keys=rotated))
        answered = [await close(store_url, n) for n in range(0, 60, 3)]
        code, out, err = await rekey
    finally:
        data_keys.use(None)
    assert all(answered)
    assert (code, err) == (0, "")
    assert out.endswith(f"every encrypted row is under data key {kid(NEW)!r}\n")
    values = await sealed_values(store_url)
    assert len(values) > 120
    assert [v[:24] for v in values if not v.startswith(f"enc1:{kid(NEW)}:")] == []
    # OLD may go now: the store reads with NEW alone.
    code, out, err = await bot(tmp_path, "audit", "verify", "--store", url=store_url, keys=NEW)
    assert (code, err) == (0, "")


@pytest.mark.usefixtures("keyring")
async def test_a_missing_or_wrong_key_is_one_sentence(
    tmp_path: Path,
    store_url: str,  # noqa: F811 - the fixture
) -> None:
    """Rows under OLD: started with no keys, another key, OLD's id with another secret, or a
    malformed keyring, ``check`` exits 2 with one line and no traceback."""
    await ask(store_url, range(1, 2))
    wrong_secret = f"{kid(OLD)}:{NEW.partition(':')[2]}"
    cases = {
        None: f"the store holds values encrypted under data key {kid(OLD)!r}; set BOT_DATA_KEYS",
        NEW: f"encrypted under data key {kid(OLD)!r}, which BOT_DATA_KEYS does not list",
        wrong_secret: f"BOT_DATA_KEYS key {kid(OLD)!r} does not decrypt the store's rows",
        "nope": "BOT_DATA_KEYS must look like 'kid:secret,kid:secret'",
        "k1:short": "BOT_DATA_KEYS key 'k1' is not 32 bytes in URL-safe base64",
    }
    for keys, said in cases.items():
        code, out, err = await bot(tmp_path, "check", url=store_url, keys=keys)
        assert code == 2, (keys, out, err)
        assert len(err.splitlines()) == 1, err
        assert said in err
        assert "Traceback" not in err
        if keys is not None and ":" in keys:
            assert keys.partition(":")[2] not in err  # never the secret
    # Served, the same: the process stops before it listens, with the same sentence.
    code, out, err = await bot(tmp_path, url=store_url, keys=NEW, port=free_port())
    assert code == 2
    assert err.splitlines()[-1].startswith("configuration error: a stored value is encrypted")
    assert "Traceback" not in err
    code, out, err = await bot(tmp_path, "check", url=store_url, keys=f"{NEW},{OLD}")
    assert code == 0, err
    assert f"at rest:  encrypted, AES-GCM under data key {kid(NEW)!r} (2 listed)" in out


async def test_without_keys_check_says_plaintext(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'bot.sqlite3'}"
    code, out, err = await bot(tmp_path, "check", url=url, keys=None)
    assert code == 0, err
    assert "at rest:  plaintext (set BOT_DATA_KEYS" in out


async def test_keygen_data_prints_a_key_the_bridge_loads(tmp_path: Path) -> None:
    """``keygen --data``: a new ``kid:secret`` each time, which ``check`` accepts."""
    url = f"sqlite:///{tmp_path / 'bot.sqlite3'}"
    printed = [(await bot(tmp_path, "keygen", "--data", url=url, keys=None))[1] for _ in "ab"]
    assert printed[0] != printed[1]
    entry = printed[0].strip()
    assert parse_data_keys(entry).current == kid(entry)
    code, out, err = await bot(tmp_path, "check", url=url, keys=entry)
    assert code == 0, err
    assert f"under data key {kid(entry)!r} (1 listed)" in out


def test_a_ciphertext_moved_to_another_row_does_not_open() -> None:
    """Sealed for q1's payload, it does not open as q2's, nor as q1's answer."""
    keys: DataKeys = parse_data_keys(OLD)
    sealed = keys.seal('{"question":"x"}', "pauses.payload:q1")
    assert keys.open(sealed, "pauses.payload:q1") == '{"question":"x"}'
    for elsewhere in ("pauses.payload:q2", "pauses.answer:q1"):
        with pytest.raises(data_keys.DataKeyError, match="does not decrypt"):
            keys.open(sealed, elsewhere)


def test_the_empty_object_is_stored_as_it_is() -> None:
    """``{}`` holds nothing to hide: stored as it is; one sealed before still opens."""
    keys: DataKeys = parse_data_keys(OLD)
    assert keys.seal("{}", "audit.detail:x") == "{}"
    data_keys.use(keys)
    try:
        assert data_keys.unseal("{}", "audit.detail:x") == "{}"
        key = keys.keys[0]
        before = (
            f"{data_keys.MARKER}{key.kid}:"
            + base64.urlsafe_b64encode(
                b"n" * 12 + key.aead.encrypt(b"n" * 12, b"{}", b"audit.detail:x")
            ).decode()
        )
        assert data_keys.unseal(before, "audit.detail:x") == "{}"
    finally:
        data_keys.use(None)


def test_a_value_sealed_here_opens_from_memory_and_nothing_else_does() -> None:
    """The keyring remembers what it sealed: the same text under the same associated data
    opens without AES-GCM; a changed byte, or the text under another row, is decrypted and
    refused; another keyring with the same keys decrypts it."""
    keys: DataKeys = parse_data_keys(OLD)
    sealed = keys.seal('{"question":"x"}', "pauses.payload:q1")
    key = keys.keys[0]
    # Its AES-GCM would refuse anything now: only the memory can open it.
    object.__setattr__(key, "aead", AESGCM(AESGCM.generate_key(256)))
    assert keys.open(sealed, "pauses.payload:q1") == '{"question":"x"}'
    body = sealed[-8:]
    changed = sealed[:-8] + ("A" if body[0] != "A" else "B") + body[1:]
    for text, aad in ((changed, "pauses.payload:q1"), (sealed, "pauses.payload:q2")):
        with pytest.raises(data_keys.DataKeyError, match="does not decrypt"):
            keys.open(text, aad)
    assert parse_data_keys(OLD).open(sealed, "pauses.payload:q1") == '{"question":"x"}'


@pytest.mark.usefixtures("keyring")
async def test_the_details_stored_as_they_are_name_only_routes(tmp_path: Path) -> None:
    """A chat question asked, posted, answered and resumed with BOT_DATA_KEYS set: the
    details left unsealed are exactly those of ``PLAIN_DETAILS``, each holding only the keys
    the store keeps in plaintext elsewhere; every other non-empty detail is sealed."""
    url = f"sqlite:///{tmp_path / 'chat.sqlite3'}"
    stores = await open_stores(url)
    surface = RecordingSurface(name="chat")
    agent, capability = build_agent(
        provider=ScriptedProvider(_script),
        stores=stores,
        signer=TokenSigner([random_signing_key("k")]),
        clock=time.time,
    )
    service = RunService(
        agent=agent, capability=capability, stores=stores, surfaces={"chat": surface}
    )
    try:
        where = Conversation(surface="chat", scope="T1", key="C1")
        who = Responder("chat:alice", "Alice")
        # The run's own text stays plaintext (docs/production.md): none of the words.
        await service.start(where, who, "deploy web")
        await service.wait_idle()
        answered = {"answers": {"Which environment?": WORDS[1]}}
        await service.redeem(surface.last_token, answered, responder=who, scope="T1")
        await service.wait_idle()
    finally:
        await stores.close()
    assert set(PLAIN_DETAIL_KEYS) == PLAIN_DETAILS
    with sqlite3.connect(tmp_path / "chat.sqlite3") as conn:
        rows = conn.execute("SELECT kind, detail FROM audit ORDER BY id").fetchall()
    kinds = {kind for kind, _ in rows}
    assert {"started", "paused", "posted", "answered"} <= kinds, kinds
    for kind, detail in rows:
        if kind in PLAIN_DETAILS:
            assert set(json.loads(detail)) <= PLAIN_DETAIL_KEYS[kind], (kind, detail)
        else:
            assert detail == data_keys.EMPTY or detail.startswith(data_keys.MARKER), (kind, detail)
    raw = await raw_bytes(url, tmp_path)
    # The question's option and the answer: sealed in the payload, the answer, the turn.
    assert WORDS[1].encode() not in raw


def _script(messages: Sequence[Message], tools: Sequence[ToolDefinition]) -> ModelReply:
    if messages[-1].role == "tool":
        return say("deployed")
    return calls(call(ASK_USER, questions=[question("Which environment?", WORDS[1], "prod")]))
