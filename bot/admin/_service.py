"""``AdminService``: authorize, execute and audit an admin command, for every surface.

Who acts is the ``Responder`` the surface built from the platform's own
authentication (a signed Slack request, a Teams token, the console sign-in,
the shell's OS user); no command argument can name someone else. An admin
is a responder whose id is configured (``BOT_ADMINS``) or whom the surface
marked ``is_admin`` from a platform group it resolved. Everyone else may
use ``help`` only; any other attempt is refused and audited.

A surface passes the command's idempotency key (``key``), derived from the
request that carried it (Slack: the signed body; Teams: the activity's id):
the command's effect is written with it (``Write.once_key``), so a replayed
or retried command, on this replica or another, before or after a crash,
changes nothing the second time and says so (``AlreadyDone``).

Cancelling goes through ``RunService.cancel`` when a service runs in this
process (the run resumes at once). The shell has none: its cancel spends
the token in the store with no lease, and the serving process's next sweep
recovers the run and delivers the edit, exactly as after a crash.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable, Collection, Sequence
from typing import Any, assert_never

from aiohttp import web

from bot.admin import results
from bot.admin._commands import (
    USAGES,
    AuditLog,
    Cancel,
    Command,
    Extend,
    Help,
    History,
    Pending,
    Purge,
    Resend,
    Show,
    Stats,
    UsageError,
    day_start,
    parse,
    verb_of,
)
from bot.contract.answers import CancelReason
from bot.contract.identity import compared, same_person
from bot.questions.lifecycle import Lifecycle
from bot.questions.records import (
    AuditEvent,
    Closing,
    PendingFilter,
    Question,
    QuestionStatus,
)
from bot.service.answering.outcomes import Responder
from bot.service.answering.policy import RequesterOrApprovers
from bot.service.delivering.messages import question_not_found, run_not_found
from bot.service.running.runs import RunService
from bot.stores.ports import HistoryFilter, Stores

log = logging.getLogger(__name__)

HISTORY_LIMIT = 500


class AdminService:
    """Parses, authorizes, executes and audits admin commands."""

    def __init__(
        self,
        *,
        stores: Stores,
        admins: Collection[str],
        max_ttl_seconds: float,
        runs: RunService | None = None,
        policy: RequesterOrApprovers | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._stores = stores
        # Compared as people, so an admin is who the surface signed, however the id was spelt
        # where it was configured (a bare Slack id, or another workspace's).
        self._admins = frozenset(compared(admin) for admin in admins)
        self._max_ttl = max_ttl_seconds
        self._runs = runs
        # The serving process's lifecycle (bound to its deliverer), or the shell's own.
        self._questions = runs.questions if runs is not None else Lifecycle(stores.unit)
        # Who may answer is shown as the one policy decides it, never restated here.
        self._policy = policy or RequesterOrApprovers()
        self._clock = clock

    def is_admin(self, who: Responder) -> bool:
        return who.is_admin or any(same_person(who.id, admin) for admin in self._admins)

    async def handle(
        self, words: str | Sequence[str], *, who: Responder, key: str = ""
    ) -> results.AdminResult:
        """Parse and execute; a command that does not parse is a refusal that says why."""
        try:
            command = parse(words)
        except UsageError as error:
            if not self.is_admin(who):
                # A stranger learns nothing about the grammar; the attempt is on record.
                verb = words.split(" ", 1)[0] if isinstance(words, str) else " ".join(words[:1])
                await self._audit("admin-refused", who, {"command": verb[:40]})
                # Labelled "unknown": a stranger's words must not mint new series.
                self._count("unknown", "AdminsOnly")
                return results.AdminsOnly(verb[:40])
            return results.CommandInvalid(str(error))
        return await self.execute(command, who=who, key=key)

    async def execute(
        self, command: Command, *, who: Responder, key: str = ""
    ) -> results.AdminResult:
        name = verb_of(command)
        if not isinstance(command, Help) and not self.is_admin(who):
            await self._audit("admin-refused", who, {"command": name}, **_ids(command))
            self._count(name, "AdminsOnly")
            return results.AdminsOnly(name)
        result = await self._once(command, who, key)
        self._count(name, results.kind_of(result))
        # A command already done changed nothing, and its first run is on record.
        if not isinstance(command, Help) and not isinstance(result, results.AlreadyDone):
            detail = {"command": name, **_arguments(command), "result": results.kind_of(result)}
            await self._audit("admin", who, detail, **_ids(command, result))
        return result

    async def _once(self, command: Command, who: Responder, key: str) -> results.AdminResult:
        """Run a command that changes a question at most once per ``key``."""
        if not key or not isinstance(command, Cancel | Resend | Extend):
            return await self._execute(command, who, "")
        # Read first, for a clear answer; the key written with the effect decides races.
        if not await self._stores.replays.applied(key):
            result = await self._execute(command, who, key)
            if not isinstance(result, results.NotOpen) or not await self._stores.replays.applied(
                key
            ):
                return result
        return results.AlreadyDone(verb_of(command), command.interrupt_id)

    async def _execute(self, command: Command, who: Responder, key: str) -> results.AdminResult:
        match command:
            case Help():
                admin = self.is_admin(who)
                usages = USAGES if admin else tuple(u for u in USAGES if u.name == "help")
                return results.HelpShown(usages, admin)
            case Pending():
                return await self._pending(command)
            case Show(interrupt_id=interrupt_id):
                return await self._show(interrupt_id)
            case Cancel(interrupt_id=interrupt_id, reason=reason):
                return await self._cancel(interrupt_id, reason, who, key)
            case Resend(interrupt_id=interrupt_id):
                return await self._resend(interrupt_id, who, key)
            case Extend(interrupt_id=interrupt_id, seconds=seconds):
                return await self._extend(interrupt_id, seconds, who, key)
            case Stats():
                return results.StatsShown(self._clock(), await self._stores.admin.stats())
            case History():
                return await self._history(command)
            case Purge():
                count = await self._stores.retention.purge_all(
                    command.before_time, at=self._clock()
                )
                return results.Purged(command.before, count)
            case AuditLog(run_id=run_id):
                events = await self._stores.audit.recent(limit=HISTORY_LIMIT, run_id=run_id)
                if not events and await self._stores.runs.get(run_id) is None:
                    return results.UnknownId(run_not_found(run_id))
                return results.AuditShown(run_id, tuple(reversed(events)))
            case _:
                assert_never(command)

    async def _history(self, command: History) -> results.HistoryPage:
        where = history_filter(command)
        # One more than asked: whether a next page exists, without a count.
        rows = await self._stores.history.closed(
            where, after=command.after, limit=command.limit + 1
        )
        shown = tuple(rows[: command.limit])
        return results.HistoryPage(shown, shown[-1].cursor if len(rows) > len(shown) else None)

    async def _pending(self, command: Pending) -> results.PendingPage:
        where = PendingFilter(scope=command.scope, requester=command.requester, name=command.name)
        # One more than asked: whether a next page exists, without a count.
        found = await self._stores.admin.pending(
            where=where, after=command.after, limit=command.limit + 1
        )
        page = found[: command.limit]
        items = tuple(
            results.PendingItem(q, requester, surface, self._may_answer(q, requester), cursor)
            for q, requester, surface, cursor in page
        )
        more = len(found) > command.limit
        next_after = items[-1].cursor if more and items else None
        return results.PendingPage(self._clock(), items, next_after)

    async def _show(self, interrupt_id: str) -> results.AdminResult:
        record = await self._stores.ledger.get(interrupt_id)
        if record is None:
            return results.UnknownId(question_not_found(interrupt_id))
        run = await self._stores.runs.get(record.run_id)
        events = await self._stores.audit.recent(limit=HISTORY_LIMIT, run_id=record.run_id)
        history = tuple(e for e in reversed(events) if e.interrupt_id in ("", interrupt_id))
        deliveries = await self._stores.outbox.of_run(record.run_id)
        return results.RecordShown(
            at=self._clock(),
            record=record,
            run=run,
            may_answer=self._may_answer(record, run.requester if run else ""),
            history=history,
            deliveries=tuple(d for d in deliveries if d.interrupt_id in ("", interrupt_id)),
        )

    async def _cancel(
        self, interrupt_id: str, reason: str, who: Responder, key: str
    ) -> results.AdminResult:
        if self._runs is not None:
            done = await self._runs.cancel(interrupt_id, by=who, reason=reason, once_key=key)
        else:
            closing = Closing(
                QuestionStatus.CANCELLED,
                by=who.display,
                at=self._clock(),
                answer=CancelReason(reason) if reason else None,
                by_id=who.id,
            )
            done = await self._questions.close(interrupt_id, closing, once_key=key) is not None
        record = await self._stores.ledger.get(interrupt_id)
        if record is None:
            return results.UnknownId(question_not_found(interrupt_id))
        if not done:
            # Lost to an answer, an expiry or another cancel: the row says which.
            return results.NotOpen(interrupt_id, str(record.status))
        # The id, as the audit records it (shell:root, console:ana), not the display name.
        return results.CancelDone(interrupt_id, record.run_id, who.id, reason)

    async def _resend(self, interrupt_id: str, who: Responder, key: str) -> results.AdminResult:
        record = await self._stores.ledger.get(interrupt_id)
        written = None
        if record is not None and record.status is QuestionStatus.OUTSTANDING:
            written = await self._questions.repost(
                record, at=self._clock(), actor=who.id, once_key=key
            )
        if record is None or written is None:
            return await self._not_open(interrupt_id)
        self._kick()
        return results.Resent(interrupt_id, record.run_id)

    async def _extend(
        self, interrupt_id: str, seconds: float, who: Responder, key: str
    ) -> results.AdminResult:
        now = self._clock()
        record = await self._stores.ledger.get(interrupt_id)
        if record is None or record.status is not QuestionStatus.OUTSTANDING:
            return await self._not_open(interrupt_id)
        if record.expires_at <= now:
            # Overdue, waiting for the sweeper: reviving it would race the expiry.
            return results.NotOpen(interrupt_id, str(QuestionStatus.EXPIRED))
        latest = record.issued_at + self._max_ttl
        expires_at = record.expires_at + seconds
        if expires_at > latest:
            return results.TooLong(interrupt_id, latest)
        extended = await self._questions.extend(
            record, expires_at=expires_at, at=now, actor=who.id, once_key=key
        )
        if extended is None:
            return await self._not_open(interrupt_id)
        self._kick()
        return results.Extended(interrupt_id, record.run_id, record.expires_at, expires_at)

    async def _not_open(self, interrupt_id: str) -> results.AdminResult:
        record = await self._stores.ledger.get(interrupt_id)
        if record is None:
            return results.UnknownId(question_not_found(interrupt_id))
        return results.NotOpen(interrupt_id, str(record.status))

    def _may_answer(self, record: Question, requester: str) -> tuple[str, ...]:
        # The value the redeem's check and every surface read (``who_may_answer``).
        may = self._policy.who_may_answer(record, requester)
        if may.anyone:
            return (f"anyone in {record.scope}",)
        # Admins are listed once, as "admins", though the policy counts them as approvers.
        approvers = tuple(a for a in may.approvers if a not in self._admins)
        return (*may.named(), *approvers, "admins")

    def _count(self, command: str, result: str) -> None:
        # The serving process's metrics (the shell has none to publish).
        if self._runs is not None:
            self._runs.metrics.admin_commands.labels(command=command, result=result).inc()

    def _kick(self) -> None:
        # In the serving process, deliver now; the shell leaves it to the next sweep.
        if self._runs is not None:
            self._runs.deliverer.kick(sweep=True)

    async def _audit(
        self,
        kind: str,
        who: Responder,
        detail: dict[str, Any],
        *,
        run_id: str = "",
        interrupt_id: str = "",
    ) -> None:
        event = AuditEvent(self._clock(), kind, run_id, interrupt_id, who.id, detail)
        await self._stores.audit.append(event)


def _arguments(command: Command) -> dict[str, Any]:
    fields = dataclasses.asdict(command)
    # Ids go in the event's own columns; the rest (filters, reason, duration) in detail.
    fields.pop("interrupt_id", None)
    fields.pop("run_id", None)
    return {key: value for key, value in fields.items() if value not in (None, "")}


def _ids(command: Command, result: results.AdminResult | None = None) -> dict[str, str]:
    interrupt_id = str(getattr(command, "interrupt_id", ""))
    run_id = str(getattr(command, "run_id", "") or getattr(result, "run_id", ""))
    record: Question | None = getattr(result, "record", None)
    if record is not None:
        run_id = record.run_id
    return {"run_id": run_id, "interrupt_id": interrupt_id}


def history_filter(command: History) -> HistoryFilter:
    """The store's filter for ``command``: its days as times (``until``'s day included)."""
    until = None if command.until is None else day_start(command.until) + 86400
    return HistoryFilter(
        status=command.status,
        scope=command.scope,
        surface=command.surface,
        requester=command.requester,
        decided_by=command.by,
        decision=command.decision,
        since=None if command.since is None else day_start(command.since),
        until=until,
    )


# Where the composition root puts the admin service on the aiohttp app, for the surfaces.
ADMIN_SERVICE = web.AppKey("admin_service", AdminService)
