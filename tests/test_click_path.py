"""The path of one Slack click, as ``bench/click_path.py`` records it in a real process.

Two things the design asks of it are checked here rather than only printed:
no new pair of our files calls each other both ways (the one left, SQLite's
``Database.run`` calling the unit's transaction functions, is written up in
``docs/architecture.md``), and that page's count of the files a click runs
is the count the recording finds.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# The one pair the architecture page explains; any other is a regression.
KNOWN_BOTH_WAYS = {("bot/stores/sqlite/_db.py", "bot/stores/sqlite/_unit.py")}


def test_a_click_adds_no_two_way_calls_and_the_page_counts_its_files() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "click_path.py")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    out = done.stdout
    files = re.search(r"files of ours that ran: (\d+)", out)
    assert files is not None, out
    pairs = {(one, other) for one, other in re.findall(r"^  (\S+) <-> (\S+)$", out, flags=re.M)}
    assert pairs == KNOWN_BOTH_WAYS, out
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    counted = re.search(r"call each other both ways\. (\d+)\s+files", page)
    assert counted is not None
    assert counted.group(1) == files.group(1), "docs/architecture.md counts another path"
