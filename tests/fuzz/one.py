"""One atheris target, as ``tests/fuzz/run.py`` starts it.

python -m tests.fuzz.one NAME [libFuzzer flags] [corpus dir]
"""

from __future__ import annotations

import sys

import atheris

with atheris.instrument_imports(include=["bot", "adapters"]):
    from tests.fuzz.targets import TARGETS


def main() -> None:
    name = sys.argv[1]
    atheris.Setup([sys.argv[0], *sys.argv[2:]], TARGETS[name])
    atheris.Fuzz()


if __name__ == "__main__":
    main()
