"""Every ``bench/*.py`` runs to its end at its smallest settings, so a bench that breaks fails CI.

The benches print figures and are judged by people (``make bench``); what is
checked here is that each still runs: exit status 0, no traceback, and its
report printed. The settings are the smallest each takes (seconds, not
minutes). Without the ``bench`` extra (LangGraph's checkpointers,
awaithumans' server), a bench that compares with one measures ours alone
and says the baseline was skipped.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCHES = sorted(p.name for p in (ROOT / "bench").glob("*.py") if not p.name.startswith("_"))

# Each bench's smallest settings: its command line's arguments.
SMALLEST = {
    "admin.py": "--open 200 --closed 200",
    "audit_export.py": "1000",
    "api.py": "--creates 50 --wake 2 --waiters 20 --their-waiters 20 --wait 1",
    "console.py": "50",
    "cycle.py": "5",
    "cycle_sql.py": "5",
    "mcp_gateway.py": "20",
    "redeem.py": "50",
    "scale.py": "--max 1000 --samples 2",
    "slack_click.py": "50",
    "teams_invoke.py": "50",
}
# A bench a test of its own runs (and checks more of): run once, not twice.
RUN_ELSEWHERE = {"click_path.py": "tests/test_click_path.py"}
# The baseline each comparing bench needs from the bench extra: (module, what it prints without).
BASELINES = {
    "cycle.py": ("langgraph.checkpoint.sqlite", "langgraph skipped: "),
    "api.py": ("awaithumans", "awaithumans skipped: "),
}
DEADLINE_SECONDS = 300


def test_every_bench_has_its_smallest_settings() -> None:
    listed = set(SMALLEST) | set(RUN_ELSEWHERE)
    assert listed == set(BENCHES), "give a new bench its smallest settings here"
    for name, test in RUN_ELSEWHERE.items():
        assert f'"{name}"' in (ROOT / test).read_text(encoding="utf-8"), (name, test)


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # its parent package is missing
        return False


@pytest.mark.parametrize("name", [name for name in BENCHES if name in SMALLEST])
def test_the_bench_runs_at_its_smallest_settings(name: str) -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / name), *SMALLEST[name].split()],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=DEADLINE_SECONDS,
        check=False,
    )
    report = f"stdout:\n{done.stdout[-3000:]}\nstderr:\n{done.stderr[-3000:]}"
    assert done.returncode == 0, report
    assert "Traceback" not in done.stderr, report
    assert done.stdout.strip(), report
    if name in BASELINES:
        module, skipped = BASELINES[name]
        said = [line for line in done.stdout.splitlines() if line.startswith(skipped)]
        if _installed(module):
            assert not said, report
        else:  # one line, saying how to get the baseline
            [line] = said
            assert "`make bench` installs the bench extra" in line, line
