"""Prometheus metrics, on a registry of their own so tests and apps don't collide."""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    disable_created_metrics,
    generate_latest,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from bot.questions.records import QuestionStats

# ``*_created`` series double every counter's cardinality and no dashboard reads them.
disable_created_metrics()  # type: ignore[no-untyped-call]  # untyped in prometheus_client


class Metrics:
    """What operators watch: pauses through their life, refusals, resume latency."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        # Questions through their life are the store's own counters, read at scrape time,
        # so a cancel from the shell or another replica counts here as in `admin stats`.
        self.questions = _StoreTotals()
        self.registry.register(self.questions)
        self.refusals = Counter(
            "bot_answers_refused", "Answers refused, by reason.", ["reason"], registry=self.registry
        )
        self.runs_finished = Counter(
            "bot_runs_finished", "Runs that ended, by status.", ["status"], registry=self.registry
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

        # Set by the agents API when it serves (``bot.api``): read at scrape time.
        self.api_waiting = Gauge(
            "bot_api_waiting",
            "Long-polls (GET /v1/questions/{id}?wait=N) held open now.",
            registry=self.registry,
        )

    def render(self) -> bytes:
        return generate_latest(self.registry)


class _StoreTotals(Collector):
    """``bot_pauses_*_total`` and ``bot_questions_open`` from the store's ``stats()``."""

    def __init__(self) -> None:
        self.stats: QuestionStats | None = None

    def collect(self) -> Iterator[Metric]:
        stats = self.stats
        if stats is None:
            return
        for name, text, value in (
            ("bot_pauses_issued", "Questions posted to a person.", stats.issued),
            ("bot_pauses_answered", "Questions answered.", stats.answered),
            ("bot_pauses_expired", "Questions that expired unanswered.", stats.expired),
            ("bot_pauses_cancelled", "Questions cancelled by an admin.", stats.cancelled),
        ):
            yield CounterMetricFamily(name, text + " Store-wide, as `admin stats`.", value=value)
        yield GaugeMetricFamily(
            "bot_questions_open",
            "Questions waiting on a person right now (read from the store at scrape time).",
            value=stats.outstanding,
        )
