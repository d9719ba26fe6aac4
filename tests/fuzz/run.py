"""``make fuzz``: every atheris target for a number of seconds; executions and crashes.

    python -m tests.fuzz.run --seconds 30 [target ...]

A crashing input is saved as ``tests/fuzz/corpus/<target>/crash-<sha1>``
(libFuzzer's artifact), where ``tests/fuzz/test_corpus.py`` replays it on
every test run from then on. Inputs that only add coverage go to a
temporary directory, so the repository keeps regressions only.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.fuzz.targets import TARGETS

CORPUS = Path(__file__).parent / "corpus"
_EXECUTED = re.compile(r"stat::number_of_executed_units:\s*(\d+)")


def _artifacts(folder: Path) -> set[str]:
    return {p.name for p in folder.glob("*") if p.name.startswith(("crash-", "oom-", "timeout-"))}


def run(name: str, seconds: int) -> tuple[int, int]:
    """(executions, new crashes) of one target."""
    saved = CORPUS / name
    saved.mkdir(parents=True, exist_ok=True)
    before = _artifacts(saved)
    with tempfile.TemporaryDirectory(prefix=f"fuzz-{name}-") as work:
        for seed in saved.glob("*"):
            shutil.copy(seed, work)
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "tests.fuzz.one",
                name,
                f"-max_total_time={seconds}",
                f"-artifact_prefix={saved}/",
                "-print_final_stats=1",
                "-timeout=10",
                "-rss_limit_mb=2048",
                work,
            ],
            capture_output=True,
            text=True,
            check=False,
        )
    found = _EXECUTED.findall(result.stderr)
    executions = int(found[-1]) if found else 0
    crashes = len(_artifacts(saved) - before)
    if result.returncode != 0 and not crashes:
        sys.stderr.write(result.stderr[-3000:])
        crashes = 1
    return executions, crashes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=int, default=10, help="per target")
    parser.add_argument("targets", nargs="*", help=f"some of {sorted(TARGETS)} (default all)")
    args = parser.parse_args(argv)
    unknown = set(args.targets) - set(TARGETS)
    if unknown:
        parser.error(f"no such target: {', '.join(sorted(unknown))}")
    failed = 0
    for name in args.targets or sorted(TARGETS):
        executions, crashes = run(name, args.seconds)
        print(f"fuzz {name}: {executions} executions, {crashes} crashes", flush=True)
        failed += crashes
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
