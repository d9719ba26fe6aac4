"""A Temporal worker process for the tests: ``Deploy`` and the bridge's activities.

Env: TEMPORAL_ADDRESS, TASK_QUEUE, BRIDGE_URL, BRIDGE_API_KEY, DEPLOY_LOG;
CALLBACK_URL (absent: the long-poll fallback); RECEIVER_PORT with
BOT_WEBHOOK_SECRET to serve the receiver in this process too; POLL_SECONDS.
It prints ``ready`` once the worker runs, and runs until killed.
"""

from __future__ import annotations

import asyncio
import contextlib
import os

from temporalio.client import Client
from temporalio.worker import Worker

from adapters.temporal import BridgeActivities, serve_receiver
from bot.client import Bridge, Outcome
from tests.adapters.temporal._workflows import WORKFLOWS, record_deploy


async def main() -> None:
    client = await Client.connect(os.environ["TEMPORAL_ADDRESS"])
    async with contextlib.AsyncExitStack() as stack:
        bridge = await stack.enter_async_context(
            Bridge(os.environ["BRIDGE_URL"], os.environ["BRIDGE_API_KEY"])
        )
        activities = BridgeActivities(
            bridge,
            callback_url=os.environ.get("CALLBACK_URL"),
            poll_seconds=int(os.environ.get("POLL_SECONDS", "30")),
        )
        if "RECEIVER_PORT" in os.environ:
            await stack.enter_async_context(
                serve_receiver(
                    client,
                    secret=os.environ["BOT_WEBHOOK_SECRET"],
                    port=int(os.environ["RECEIVER_PORT"]),
                )
            )
        worker = Worker(
            client,
            task_queue=os.environ["TASK_QUEUE"],
            workflows=WORKFLOWS,
            activities=[*activities.activities, record_deploy],
            workflow_failure_exception_types=[Outcome],
        )
        async with worker:
            print("ready", flush=True)
            await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(main())
