"""The webhook receiver: the bridge's signed close, delivered to the workflow as an update.

It verifies the Standard Webhooks signature (``bot.client.verify_webhook``),
reads the workflow that asked from the question's metadata, and sends the
event as the update ``CLOSE_UPDATE`` with the ``webhook-id`` as the update's
id. Temporal keeps one update per id in a run, and the workflow keeps the
first close of each question, so a webhook delivered twice is answered the
same way twice and seen once.

Its statuses tell the bridge's outbox whether to try again: 2xx for
everything that will never go better (delivered, a duplicate, a workflow
that has ended or refused the update, a question that is not a workflow's),
400 for a signature that does not verify or a question its metadata's
workflow run did not ask (no run id, or an idempotency key those
coordinates do not give), 503 while Temporal or the workflow's worker cannot
take the update yet.

Run it inside the worker process (``serve_receiver``) or on its own::

    BOT_WEBHOOK_SECRET=whsec_... TEMPORAL_ADDRESS=localhost:7233 \\
        python -m adapters.temporal.receiver --port 8081
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import sys
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from aiohttp import web
from temporalio.client import (
    Client,
    WorkflowUpdateFailedError,
    WorkflowUpdateRPCTimeoutOrCancelledError,
)
from temporalio.envconfig import ClientConfig
from temporalio.service import RPCError, RPCStatusCode

from adapters.temporal._wire import CLOSE_UPDATE, Origin, origin_of
from bot.client import InvalidWebhook, verify_webhook

log = logging.getLogger(__name__)

# Longer than a workflow task takes to reach a new worker after the old one's
# sticky queue times out (5 s), shorter than the bridge waits for an answer
# (BOT_WEBHOOK_TIMEOUT_SECONDS, 10 s by default), so a slow worker is a 503
# the bridge retries rather than a timeout it cannot read.
UPDATE_TIMEOUT = timedelta(seconds=8)
DEFAULT_PATH = "/temporal/webhook"
# The workflow is gone for good: nothing a retry could change.
_ENDED = (RPCStatusCode.NOT_FOUND, RPCStatusCode.FAILED_PRECONDITION)


@dataclass(frozen=True)
class Receipt:
    """What the receiver answers the bridge: an HTTP status and a one-word result."""

    status: int
    result: str
    detail: str = ""

    def body(self) -> dict[str, Any]:
        return {"result": self.result, **({"detail": self.detail} if self.detail else {})}


class Receiver:
    """Verifies the bridge's webhooks and updates the workflows they name, in ``client``'s
    namespace."""

    def __init__(
        self, client: Client, *, secret: str, update_timeout: timedelta = UPDATE_TIMEOUT
    ) -> None:
        self._client = client
        self._secret = secret
        self._update_timeout = update_timeout

    async def deliver(self, headers: Mapping[str, str], body: bytes) -> Receipt:
        """One webhook as received (the body's exact bytes): what to answer the bridge."""
        try:
            event = verify_webhook(self._secret, headers, body)
        except InvalidWebhook as refused:
            return Receipt(400, "invalid", refused.message)
        question = event.data
        origin = origin_of(question.metadata)
        if origin is None or origin.namespace != self._client.namespace:
            # Not a workflow's question here: acknowledged, so it is not sent again.
            return Receipt(200, "ignored", f"question {question.id} names no workflow here")
        foreign = _not_asked_by(origin, question.idempotency_key)
        if foreign:
            # Any key holder can write metadata: the coordinates count only as the ask made them.
            log.warning("refused the close of %s: %s", question.id, foreign)
            return Receipt(400, "invalid", f"Question {question.id} {foreign}")
        webhook_id = {k.lower(): v for k, v in headers.items()}["webhook-id"]
        handle = self._client.get_workflow_handle(origin.workflow_id, run_id=origin.run_id)
        try:
            result = await handle.execute_update(
                CLOSE_UPDATE,
                event.model_dump(mode="json"),
                id=webhook_id,
                result_type=str,
                rpc_timeout=self._update_timeout,
            )
        except WorkflowUpdateFailedError as failed:
            log.warning(
                "workflow %s refused the close of %s: %s",
                origin.workflow_id,
                question.id,
                failed.cause,
            )
            return Receipt(200, "refused", str(failed.cause))
        except WorkflowUpdateRPCTimeoutOrCancelledError:
            return Receipt(503, "unavailable", "the workflow's worker did not take the update")
        except RPCError as error:
            if error.status in _ENDED:
                return Receipt(200, "ended", error.message)
            return Receipt(503, "unavailable", error.message)
        return Receipt(200, str(result))

    def app(self, *, path: str = DEFAULT_PATH) -> web.Application:
        """An aiohttp app taking the webhook on ``path`` (and ``GET /healthz``)."""

        async def receive(request: web.Request) -> web.Response:
            receipt = await self.deliver(request.headers, await request.read())
            return web.json_response(receipt.body(), status=receipt.status)

        async def healthz(_request: web.Request) -> web.Response:
            return web.json_response({"ok": True})

        app = web.Application()
        app.router.add_post(path, receive)
        app.router.add_get("/healthz", healthz)
        return app


def _not_asked_by(origin: Origin, idempotency_key: str) -> str:
    """Why a question was not asked by the workflow run its metadata names, or ``""``.

    A workflow's ask names its own run and makes the idempotency key from the
    same coordinates; without a run id the update would go to whichever run
    is the latest.
    """
    if not origin.run_id:
        return "names no run_id in metadata.temporal; only a workflow's own ask names its run."
    if idempotency_key != origin.idempotency_key:
        return "has an idempotency key that metadata.temporal does not give; no workflow asked it."
    return ""


@asynccontextmanager
async def serve_receiver(
    client: Client,
    *,
    secret: str,
    host: str = "127.0.0.1",
    port: int = 8081,
    path: str = DEFAULT_PATH,
) -> AsyncIterator[str]:
    """Serve the receiver while the block runs (beside a worker, say); yields its URL."""
    runner = web.AppRunner(Receiver(client, secret=secret).app(path=path), access_log=None)
    await runner.setup()
    try:
        await web.TCPSite(runner, host, port).start()
        yield f"http://{host}:{port}{path}"
    finally:
        await runner.cleanup()


async def _serve(args: argparse.Namespace) -> None:
    secret = os.environ.get("BOT_WEBHOOK_SECRET", "")
    if not secret:
        raise SystemExit("Set BOT_WEBHOOK_SECRET to the bridge's webhook secret (whsec_...).")
    client = await Client.connect(**ClientConfig.load_client_connect_config())
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    async with serve_receiver(
        client, secret=secret, host=args.host, port=args.port, path=args.path
    ) as url:
        log.info("receiving the bridge's webhooks at %s", url)
        await stop.wait()


def main(argv: list[str] | None = None) -> None:
    """``python -m adapters.temporal.receiver``.

    Temporal from ``TEMPORAL_ADDRESS`` and ``TEMPORAL_NAMESPACE`` (or a Temporal
    config profile), the secret from ``BOT_WEBHOOK_SECRET``.
    """
    parser = argparse.ArgumentParser(prog="python -m adapters.temporal.receiver")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8081)
    parser.add_argument("--path", default=DEFAULT_PATH)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    asyncio.run(_serve(args))
    # Stopped cleanly: everything is answered and the server closed. temporalio's core
    # threads can still take the GIL while the interpreter finalizes and abort the
    # process (sdk-python issue 300), which a process manager reports as a crash; with
    # nothing left to run, leave without finalizing.
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
