"""Prometheus metrics, on a registry of their own so tests and apps don't collide."""

from __future__ import annotations

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    disable_created_metrics,
    generate_latest,
)

# ``*_created`` series double every counter's cardinality and no dashboard reads them.
disable_created_metrics()  # type: ignore[no-untyped-call]  # untyped in prometheus_client


class Metrics:
    """What operators watch: pauses through their life, refusals, resume latency."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.pauses_issued = Counter(
            "bot_pauses_issued", "Questions posted to a person.", registry=self.registry
        )
        self.pauses_answered = Counter(
            "bot_pauses_answered", "Questions answered.", registry=self.registry
        )
        self.pauses_expired = Counter(
            "bot_pauses_expired", "Questions that expired unanswered.", registry=self.registry
        )
        self.pauses_cancelled = Counter(
            "bot_pauses_cancelled", "Questions cancelled by an admin.", registry=self.registry
        )
        self.refusals = Counter(
            "bot_answers_refused", "Answers refused, by reason.", ["reason"], registry=self.registry
        )
        self.runs_finished = Counter(
            "bot_runs_finished", "Runs that ended, by status.", ["status"], registry=self.registry
        )
        self.questions_open = Gauge(
            "bot_questions_open",
            "Questions waiting on a person right now (read from the store at scrape time).",
            registry=self.registry,
        )
        self.admin_commands = Counter(
            "bot_admin_commands",
            "Admin commands, by command and result (AdminsOnly for a refused non-admin).",
            ["command", "result"],
            registry=self.registry,
        )
        self.resume_seconds = Histogram(
            "bot_resume_seconds",
            "From a pause closing to the run's next outcome.",
            buckets=(0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
            registry=self.registry,
        )

    def render(self) -> bytes:
        return generate_latest(self.registry)
