"""A loopback Slack: a Web API that answers like Slack's, a Socket Mode link, signed requests.

``FakeSlack`` records every Web API call (``calls``), answers ``ok`` with
``ts`` values like Slack's, and fails on demand (``fail``: ``ratelimited``
with a 429 and Retry-After, ``invalid_auth``, ``msg_too_long``...). Its
``/link`` websocket speaks Socket Mode's envelope protocol: ``hello`` on
connect, then whatever ``send_envelope`` pushes, and it collects the acks.
``sign`` signs a body exactly as Slack does (v0, HMAC-SHA256 over
``v0:{timestamp}:{body}``). What Slack would refuse it refuses as Slack does
(``block_kit``): a message's blocks with ``invalid_blocks`` (and the
problems, json-pointed, in ``errors``), ``msg_blocks_too_long`` or
``msg_too_long``, a modal with ``invalid_arguments``; ``refused`` keeps
each refusal so a test can say none happened.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import itertools
import json
import time
import urllib.parse
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from aiohttp import WSMsgType, web

from tests.fakes.block_kit import message_problems, view_problems

BOT_TOKEN = "xoxb-test-bot-token"
APP_TOKEN = "xapp-test-app-token"
SIGNING_SECRET = "test-signing-secret-0123456789abcdef"
TEAM = "T0TEST"
BOT_USER = "UBOT"
INSTALLED_TOKEN = "xoxb-installed-through-oauth"


@dataclass
class Call:
    method: str
    args: dict[str, Any]
    token: str
    at: float = field(default_factory=time.monotonic)
    response: dict[str, Any] = field(default_factory=dict)


@dataclass
class Failure:
    error: str
    status: int = 200
    retry_after: float | None = None


class FakeSlack:
    """The Web API under ``{url}/api/`` and Socket Mode under ``ws://.../link``."""

    def __init__(self) -> None:
        self.calls: list[Call] = []
        self.failures: dict[str, list[Failure]] = {}
        self.group_members: dict[str, list[str]] = {}
        self.valid_tokens = {BOT_TOKEN}
        self.valid_app_tokens = {APP_TOKEN}
        self._ts = itertools.count(1)
        self._runner: web.AppRunner | None = None
        self.url = ""
        self.sockets: list[web.WebSocketResponse] = []
        self.acks: list[dict[str, Any]] = []
        self._ack_event = asyncio.Event()
        # Set on each call or ack recorded: waits wake on it, never on a timer.
        self._recorded = asyncio.Event()
        self.holds: dict[str, asyncio.Event] = {}
        # (method, refusal) for every call refused for its Block Kit, as Slack would.
        self.refused: list[tuple[str, dict[str, Any]]] = []

    @property
    def api_url(self) -> str:
        return f"{self.url}/api/"

    async def _calls(self, request: web.Request) -> web.Response:
        """What was called, for a driver in another process (the benchmark)."""
        method = request.query.get("method")
        return web.json_response(
            [
                {"method": c.method, "args": c.args, "token": c.token, "response": c.response}
                for c in self.calls
                if method in (None, c.method)
            ]
        )

    async def start(self, port: int = 0) -> FakeSlack:
        app = web.Application()
        app.router.add_route("*", "/api/{method}", self._api)
        app.router.add_get("/link", self._link)
        app.router.add_get("/_calls", self._calls)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", port)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.url = f"http://127.0.0.1:{port}"
        return self

    async def close(self) -> None:
        for ws in list(self.sockets):
            await ws.close()
        if self._runner is not None:
            await self._runner.cleanup()

    def fail(
        self,
        method: str,
        error: str,
        *,
        status: int = 200,
        retry_after: float | None = None,
        times: int = 1,
    ) -> None:
        """The next ``times`` calls of ``method`` fail as Slack would say."""
        self.failures.setdefault(method, []).extend(
            Failure(error, status, retry_after) for _ in range(times)
        )

    def hold(self, method: str) -> asyncio.Event:
        """Calls of ``method`` are recorded at once but answered only once the event is set,
        so a test knows the caller is waiting there (to kill it at a known point)."""
        gate = self.holds[method] = asyncio.Event()
        return gate

    def of(self, method: str | tuple[str, ...]) -> list[Call]:
        """The calls of ``method`` (of any of several), in the order they were made."""
        methods = (method,) if isinstance(method, str) else method
        return [call for call in self.calls if call.method in methods]

    async def wait_for(
        self,
        method: str | tuple[str, ...],
        count: int = 1,
        *,
        seconds: float = 15.0,
        where: Any = None,
    ) -> list[Call]:
        """Readiness wait: the first ``count`` recorded calls of ``method`` (or of any of
        several, so a wait for one outcome sees another at once) matching ``where``."""
        deadline = time.monotonic() + seconds
        while True:
            self._recorded.clear()
            found = [c for c in self.of(method) if where is None or where(c)]
            if len(found) >= count:
                return found
            if not await self._next_record(deadline):
                seen = [(c.method, str(c.args)[:200]) for c in self.calls]
                raise AssertionError(f"no {count} x {method} within {seconds:.0f} s; saw {seen}")

    async def _next_record(self, deadline: float) -> bool:
        """Wait for the next call or ack recorded; False once ``deadline`` has passed."""
        try:
            await asyncio.wait_for(self._recorded.wait(), max(deadline - time.monotonic(), 0))
        except TimeoutError:
            return False
        return True

    # -- Web API -----------------------------------------------------------------

    async def _api(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        args = await _arguments(request)
        auth = request.headers.get("Authorization", "")
        token = auth.removeprefix("Bearer ").strip()
        call = Call(method, args, token)
        self.calls.append(call)
        self._recorded.set()
        gate = self.holds.get(method)
        if gate is not None:
            await gate.wait()
        queued = self.failures.get(method)
        if queued:
            failure = queued.pop(0)
            headers = {}
            if failure.retry_after is not None:
                headers["Retry-After"] = str(int(failure.retry_after))
            return web.json_response(
                {"ok": False, "error": failure.error}, status=failure.status, headers=headers
            )
        if method not in ("apps.connections.open", "oauth.v2.access") and (
            token not in self.valid_tokens
        ):
            return web.json_response({"ok": False, "error": "invalid_auth"})
        if method == "apps.connections.open" and token not in self.valid_app_tokens:
            return web.json_response({"ok": False, "error": "invalid_auth"})
        refusal = refusal_of(method, args)
        if refusal is not None:
            self.refused.append((method, refusal))
            call.response = refusal
            return web.json_response(refusal)
        call.response = self._answer(method, args, request)
        return web.json_response(call.response)

    def _answer(self, method: str, args: dict[str, Any], request: web.Request) -> dict[str, Any]:
        ts = f"1700000000.{next(self._ts):06d}"
        match method:
            case "auth.test":
                return {
                    "ok": True,
                    "user_id": BOT_USER,
                    "team_id": TEAM,
                    "bot_id": "B0BOT",
                    "team": "Test",
                    "user": "bot",
                    "url": "https://test.slack.com/",
                }
            case "chat.postMessage":
                return {
                    "ok": True,
                    "channel": args.get("channel"),
                    "ts": ts,
                    "message": {"ts": ts, "text": args.get("text", "")},
                }
            case "chat.update":
                return {"ok": True, "channel": args.get("channel"), "ts": args.get("ts")}
            case "chat.postEphemeral":
                return {"ok": True, "message_ts": ts}
            case "views.open":
                return {"ok": True, "view": {"id": f"V{ts}"}}
            case "usergroups.users.list":
                return {"ok": True, "users": self.group_members.get(str(args.get("usergroup")), [])}
            case "oauth.v2.access":
                # What Slack answers once a workspace admin approves the install.
                self.valid_tokens.add(INSTALLED_TOKEN)
                return {
                    "ok": True,
                    "access_token": INSTALLED_TOKEN,
                    "token_type": "bot",
                    "scope": "chat:write,commands",
                    "bot_user_id": BOT_USER,
                    "app_id": "A0TEST",
                    "team": {"id": TEAM, "name": "Test"},
                    "enterprise": None,
                    "is_enterprise_install": False,
                    "authed_user": {"id": "U0ADMIN"},
                }
            case "apps.connections.open":
                host = request.host
                return {"ok": True, "url": f"ws://{host}/link"}
            case _:
                return {"ok": True}

    # -- Socket Mode -------------------------------------------------------------

    async def _link(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(autoping=True)
        await ws.prepare(request)
        self.sockets.append(ws)
        await ws.send_json(
            {
                "type": "hello",
                "num_connections": 1,
                "connection_info": {"app_id": "A0TEST"},
                "debug_info": {"host": "fake", "approximate_connection_time": 3600},
            }
        )
        async for message in ws:
            if message.type == WSMsgType.TEXT:
                data = json.loads(message.data)
                if "envelope_id" in data:
                    self.acks.append(data)
                    self._recorded.set()
        self.sockets.remove(ws)
        return ws

    async def send_envelope(
        self, kind: str, payload: dict[str, Any], *, retry_attempt: int = 0
    ) -> str:
        """Push one envelope (``events_api``, ``interactive``...) and return its id."""
        envelope_id = str(uuid.uuid4())
        envelope = {
            "envelope_id": envelope_id,
            "type": kind,
            "payload": payload,
            "accepts_response_payload": kind != "events_api",
            "retry_attempt": retry_attempt,
            "retry_reason": "",
        }
        await self.sockets[-1].send_json(envelope)
        return envelope_id

    async def ack_for(self, envelope_id: str, *, seconds: float = 15.0) -> dict[str, Any]:
        deadline = time.monotonic() + seconds
        while True:
            self._recorded.clear()
            for ack in self.acks:
                if ack.get("envelope_id") == envelope_id:
                    return ack
            if not await self._next_record(deadline):
                raise AssertionError(f"no ack for {envelope_id}; acks: {self.acks}")


MESSAGE_METHODS = frozenset({"chat.postMessage", "chat.update", "chat.postEphemeral"})
VIEW_METHODS = frozenset({"views.open", "views.update", "views.push"})


def refusal_of(method: str, args: dict[str, Any]) -> dict[str, Any] | None:
    """Slack's answer to a message or a view it would not take; None if it would."""
    if method in MESSAGE_METHODS:
        problems = message_problems(args)
        if not problems:
            return None
        if any("msg_blocks_too_long" in p for p in problems):
            return {"ok": False, "error": "msg_blocks_too_long"}
        if any(p.startswith("text must be") for p in problems):
            return {"ok": False, "error": "msg_too_long"}
        return {"ok": False, "error": "invalid_blocks", "errors": problems}
    if method in VIEW_METHODS:
        view = args.get("view")
        problems = view_problems(view) if isinstance(view, dict) else ["view must be an object"]
        if not problems:
            return None
        return {
            "ok": False,
            "error": "invalid_arguments",
            "response_metadata": {"messages": [f"[ERROR] {p}" for p in problems]},
        }
    return None


async def _arguments(request: web.Request) -> dict[str, Any]:
    raw = await request.text()
    args: dict[str, Any] = dict(request.query)
    if not raw:
        return args
    if request.content_type == "application/json":
        args.update(json.loads(raw))
        return args
    for key, value in urllib.parse.parse_qsl(raw, keep_blank_values=True):
        try:
            args[key] = json.loads(value) if key in ("blocks", "view") else value
        except ValueError:
            args[key] = value
    return args


# -- signing and payloads --------------------------------------------------------


def sign(
    body: str, *, secret: str = SIGNING_SECRET, timestamp: int | None = None
) -> dict[str, str]:
    """The two headers Slack adds to every request it sends us."""
    ts = str(int(time.time()) if timestamp is None else timestamp)
    base = f"v0:{ts}:{body}".encode()
    digest = hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()
    return {"X-Slack-Request-Timestamp": ts, "X-Slack-Signature": f"v0={digest}"}


_event_ids: Iterator[int] = itertools.count(1)


def event_callback(
    event: dict[str, Any], *, event_id: str | None = None, team: str = TEAM
) -> dict[str, Any]:
    return {
        "token": "legacy",
        "team_id": team,
        "api_app_id": "A0TEST",
        "type": "event_callback",
        "event_id": event_id or f"Ev{next(_event_ids):08d}",
        "event_time": int(time.time()),
        "event": event,
        "authorizations": [
            {
                "team_id": team,
                "user_id": BOT_USER,
                "is_bot": True,
                "is_enterprise_install": False,
                "enterprise_id": None,
            }
        ],
    }


def mention(
    text: str,
    *,
    user: str,
    channel: str = "C0CHAN",
    ts: str = "1699999999.000100",
    thread_ts: str | None = None,
    team: str = TEAM,
) -> dict[str, Any]:
    event = {
        "type": "app_mention",
        "user": user,
        "text": f"<@{BOT_USER}> {text}",
        "ts": ts,
        "channel": channel,
        "team": team,
        "event_ts": ts,
    }
    if thread_ts:
        event["thread_ts"] = thread_ts
    return event


def block_actions(
    action: dict[str, Any],
    *,
    user: str,
    message: dict[str, Any],
    channel: str = "C0CHAN",
    team: str = TEAM,
) -> dict[str, Any]:
    return {
        "type": "block_actions",
        "user": {"id": user, "username": user.lower(), "name": user.lower(), "team_id": team},
        "api_app_id": "A0TEST",
        "token": "legacy",
        "trigger_id": f"trig-{uuid.uuid4().hex[:8]}",
        "team": {"id": team, "domain": "test"},
        "container": {
            "type": "message",
            "message_ts": message["ts"],
            "channel_id": channel,
            "is_ephemeral": False,
        },
        "channel": {"id": channel, "name": "ops"},
        "message": message,
        "response_url": "https://hooks.invalid/response",
        "actions": [{**action, "block_id": "hitl_actions", "action_ts": str(time.time())}],
    }


def view_submission(
    view: dict[str, Any], values: dict[str, Any], *, user: str, team: str = TEAM
) -> dict[str, Any]:
    return {
        "type": "view_submission",
        "team": {"id": team, "domain": "test"},
        "user": {"id": user, "username": user.lower(), "name": user.lower(), "team_id": team},
        "api_app_id": "A0TEST",
        "token": "legacy",
        "trigger_id": "trig-submit",
        "view": {
            **view,
            "id": "V0VIEW",
            "team_id": team,
            "state": {"values": values},
            "hash": "h",
            "app_id": "A0TEST",
            "bot_id": "B0BOT",
        },
        "response_urls": [],
    }


def slash_command(text: str, *, user: str, channel: str = "C0CHAN", **fields: str) -> str:
    """``/hitl <text>`` as Slack sends it: form-encoded fields."""
    form = {
        "token": "legacy",
        "team_id": TEAM,
        "team_domain": "test",
        "channel_id": channel,
        "channel_name": "ops",
        "user_id": user,
        "user_name": user.lower(),
        "command": "/hitl",
        "text": text,
        "api_app_id": "A0TEST",
        "response_url": "https://hooks.invalid/commands/1",
        "trigger_id": "trig-1",
        **fields,
    }
    return urllib.parse.urlencode(form)


def form_body(payload: dict[str, Any]) -> str:
    """Interactivity payloads arrive form-encoded as ``payload=<json>``."""
    return urllib.parse.urlencode({"payload": json.dumps(payload)})


def buttons(message_args: dict[str, Any]) -> list[dict[str, Any]]:
    """Every button of a posted message, in order."""
    found = []
    for block in message_args.get("blocks") or []:
        if block.get("type") == "actions":
            found.extend(e for e in block["elements"] if e.get("type") == "button")
    return found


def action_of(button: dict[str, Any]) -> dict[str, Any]:
    """What a block_actions payload carries for a click on ``button``."""
    return {k: button[k] for k in ("type", "action_id", "text", "value")}


def first_button_click(call: Call, *, user: str, channel: str = "C0CHAN") -> dict[str, Any]:
    """The block_actions payload of ``user`` clicking the first button of posted ``call``."""
    action = action_of(buttons(call.args)[0])
    return block_actions(action, user=user, message=posted_message(call), channel=channel)


def posted_message(call: Call) -> dict[str, Any]:
    """The message as a block_actions payload carries it back."""
    return {
        "type": "message",
        "ts": call.response["ts"],
        "thread_ts": call.args.get("thread_ts"),
        "text": call.args.get("text", ""),
        "blocks": call.args.get("blocks", []),
        "user": BOT_USER,
        "bot_id": "B0BOT",
    }


async def _serve(port: int) -> None:
    fake = await FakeSlack().start(port)
    try:
        await asyncio.Event().wait()
    finally:
        await fake.close()


if __name__ == "__main__":
    import sys

    asyncio.run(_serve(int(sys.argv[1])))
