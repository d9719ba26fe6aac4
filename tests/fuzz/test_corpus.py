"""Every input atheris ever crashed a target with, replayed: each must now pass."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fuzz.targets import TARGETS

CORPUS = Path(__file__).parent / "corpus"
SAVED = sorted(p for p in CORPUS.glob("*/*") if p.is_file() and p.parent.name in TARGETS)


@pytest.mark.parametrize("path", SAVED, ids=[f"{p.parent.name}/{p.name}" for p in SAVED])
def test_a_saved_input_no_longer_crashes_its_target(path: Path) -> None:
    TARGETS[path.parent.name](path.read_bytes())


def test_every_target_takes_plain_inputs() -> None:
    """The targets themselves work (no atheris needed): a real payload, garbage, nothing."""
    ask = b'\x00{"questions":[{"question":"Go?","header":"G","options":[{"label":"a"}]}]}'
    for target in TARGETS.values():
        for data in (ask, b"\x01{}", b"\x02[1]", b"garbage", b""):
            target(data)
