"""A store that cannot be written at start: one line and exit 1, not a traceback."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from bot.__main__ import main
from bot.stores.sqlite import SqliteStores
from tests.e2e._server import free_port


@pytest.mark.parametrize(
    "argv", [["check"], ["serve"], ["admin", "pending"], ["admin", "cancel", "int_x"]]
)
def test_a_read_only_store_is_one_line_and_exit_1(
    argv: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    async def read_only(*_: Any, **__: Any) -> SqliteStores:
        raise sqlite3.OperationalError("attempt to write a readonly database")

    monkeypatch.setattr(SqliteStores, "open", read_only)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{tmp_path / 'bot.sqlite3'}")
    monkeypatch.setenv("BOT_DATA_DIR", str(tmp_path / "var"))
    monkeypatch.setenv("PORT", str(free_port()))
    assert main(argv) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("store error: DATABASE_URL: OperationalError: attempt to write")
    assert not any("Traceback" in line for line in err), err
