"""The workflows and the side-effect activity the Temporal tests run on a real worker."""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from temporalio import activity, workflow

with workflow.unsafe.imports_passed_through():
    from adapters.temporal import hitl
    from bot.client import Cancelled, Expired, Rejected


@dataclass
class DeployAsk:
    """What ``Deploy`` asks approval for, and where."""

    conversation: str
    service: str = "web"
    version: str = "1.5"
    ttl_seconds: int | None = None


@activity.defn
async def record_deploy(what: str) -> None:
    """The side effect an approval guards: one line per deploy in DEPLOY_LOG."""
    await asyncio.to_thread(_append, Path(os.environ["DEPLOY_LOG"]), f"{what}\n")


def _append(path: Path, line: str) -> None:
    with path.open("a") as log:
        log.write(line)


@workflow.defn
class Deploy:
    """Asks approval, deploys once approved; returns how it ended."""

    @workflow.run
    async def run(self, ask: DeployAsk) -> str:
        try:
            answer = await hitl.request_approval(
                "deploy",
                f"Deploy {ask.service} {ask.version} to prod",
                arguments={"service": ask.service, "version": ask.version},
                risk="high",
                route=f"console:{ask.conversation}",
                answerers=["anyone"],
                ttl_seconds=ask.ttl_seconds,
            )
        except Expired:
            return "expired"
        except Cancelled as cancelled:
            return f"cancelled: {cancelled.reason}"
        except Rejected as rejected:
            return f"rejected: {rejected.comment}"
        await workflow.execute_activity(
            record_deploy,
            f"{ask.service} {ask.version}",
            start_to_close_timeout=timedelta(seconds=30),
        )
        return f"approved: {answer.comment}"


@workflow.defn
class Renewed:
    """Asks approval in ``ask.conversation`` + ``runs``, then continues as new with one run
    fewer, until the last run; returns its run count."""

    @workflow.run
    async def run(self, ask: DeployAsk, runs: int) -> str:
        await hitl.request_approval(
            "deploy",
            f"Deploy {ask.service} {ask.version} to prod",
            arguments={"service": ask.service, "version": ask.version},
            route=f"console:{ask.conversation}{runs}",
            answerers=["anyone"],
        )
        if runs > 1:
            workflow.continue_as_new(args=[ask, runs - 1])
        return "approved in every run"


@workflow.defn
class Done:
    """Ends at once: a workflow a late webhook finds already closed."""

    @workflow.run
    async def run(self) -> str:
        return "done"


WORKFLOWS = [Deploy, Renewed, Done]
