"""Requests that are not HTTP: aiohttp's own 400, logged as one WARNING line, no traceback."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.doors._doors import Door, Logs


@pytest.fixture
async def door(tmp_path: Path) -> AsyncIterator[Door]:
    async with Door(tmp_path) as opened:
        yield opened


def _request(port: int, *headers: bytes, body: bytes = b"") -> bytes:
    head = [b"POST /api/answer HTTP/1.1", b"Host: 127.0.0.1:%d" % port, *headers]
    return b"\r\n".join(head) + b"\r\n\r\n" + body


CASES = {
    "bare CR in a header": lambda port: _request(port, b"X-Note: a\rb"),
    "a 70 KB header": lambda port: _request(port, b"X-Big: " + b"a" * 70_000),
    "Content-Length with Transfer-Encoding": lambda port: _request(
        port,
        b"Content-Length: 5",
        b"Transfer-Encoding: chunked",
        body=b"0\r\n\r\n",
    ),
}


@pytest.mark.parametrize("name", list(CASES))
async def test_a_malformed_request_is_a_400_and_one_warning_line(door: Door, name: str) -> None:
    with Logs() as logs:
        reader, writer = await asyncio.open_connection("127.0.0.1", door.port)
        writer.write(CASES[name](door.port))
        await writer.drain()
        status_line = await asyncio.wait_for(reader.readline(), 10)
        writer.close()
        await writer.wait_closed()
        # The server logs after it answers: wait for that line (bounded), not a fixed time.
        for _ in range(500):
            if any("malformed HTTP request" in w for w in logs.warnings):
                break
            await asyncio.sleep(0)
    assert status_line.split(b" ")[1] == b"400", status_line
    logs.assert_clean()
    server_lines = [w for w in logs.warnings if "malformed HTTP request" in w]
    assert len(server_lines) == 1, logs.warnings
    assert "\n" not in server_lines[0] and "X-" not in server_lines[0]


def test_the_filter_leaves_other_server_errors_alone() -> None:
    from bot.serving._malformed import MalformedRequests

    try:
        raise RuntimeError("boom")
    except RuntimeError as error:
        record = logging.LogRecord(
            "aiohttp.server", logging.ERROR, __file__, 1, "Error", (), (RuntimeError, error, None)
        )
    assert MalformedRequests().filter(record)
    assert record.levelno == logging.ERROR and record.exc_info is not None
