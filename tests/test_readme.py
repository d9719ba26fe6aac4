"""The metrics docs/production.md lists and the suite docs/development.md describes are real."""

from __future__ import annotations

import os
import re
from pathlib import Path

from bot.questions.records import QuestionStats
from bot.service.running.metrics import Metrics

ROOT = Path(__file__).resolve().parents[1]
PRODUCTION = (ROOT / "docs" / "production.md").read_text()
DEVELOPMENT = (ROOT / "docs" / "development.md").read_text()


def test_each_metric_is_listed_once_and_every_listed_one_exists() -> None:
    metrics = Metrics()
    metrics.questions.stats = QuestionStats(
        issued=0,
        outstanding=0,
        answered=0,
        expired=0,
        cancelled=0,
        refusals={},
        answer_seconds_p50=None,
        answer_seconds_p90=None,
        deliveries_failed=0,
        deliveries_retrying=0,
    )
    text = metrics.render().decode()
    names = set(re.findall(r"^# TYPE (\w+) ", text, re.M))
    section = PRODUCTION[PRODUCTION.index("- `GET /metrics`") :].split("\n- ")[0]
    listed = re.findall(r"`(bot_\w+)", section)
    assert sorted(listed) == sorted(set(listed)), "a metric is listed twice"
    assert set(listed) == names, (sorted(listed), sorted(names))


def test_the_test_section_names_postgresql_and_its_variable() -> None:
    from tests.stores._postgres import CONFIGURED_URL

    section = DEVELOPMENT[DEVELOPMENT.index("## Tests") : DEVELOPMENT.index("## CI")]
    assert "PostgreSQL" in section and "BOT_TEST_POSTGRES_URL" in section
    default = "postgresql://postgres@127.0.0.1:5432/test"
    assert f"`{default}`" in section
    if "BOT_TEST_POSTGRES_URL" not in os.environ:
        assert default == CONFIGURED_URL
