"""The loopback console answers as the OS user: name it, as the e2e tests do."""

from __future__ import annotations

import pytest

from tests.e2e._client import OPERATOR


@pytest.fixture(autouse=True)
def _operator(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in OPERATOR.items():
        monkeypatch.setenv(name, value)
