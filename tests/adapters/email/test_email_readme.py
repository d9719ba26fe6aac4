"""docs/email.md's offline steps, run as written: a local aiosmtpd, then ``check`` against it."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import sys
from pathlib import Path

from tests import waiting
from tests.e2e._server import free_port
from tests.test_readme_steps import bash, checkout_folder, page_block


def _listening(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


async def test_the_offline_email_steps_check_a_session_with_a_local_aiosmtpd(
    tmp_path: Path,
) -> None:
    """The relay is started as written (on a free port), and ``check`` opens a session on it."""
    serve, check = page_block("docs/email.md", "Offline, a local aiosmtpd")
    assert serve.endswith(" &") and "-m aiosmtpd" in serve and "-m bot check" in check
    port = str(free_port())
    env = checkout_folder(tmp_path)
    # The relay's own line, without its ``&``, as a child this test owns and stops.
    argv = serve.removesuffix("&").replace("8025", port).split()
    argv[0] = sys.executable
    relay = await asyncio.create_subprocess_exec(*argv, cwd=tmp_path, env={**os.environ, **env})
    try:
        await waiting.eventually(lambda: _listening(int(port)) or None, what="aiosmtpd listens")
        done = await asyncio.to_thread(bash, check.replace("8025", port), tmp_path, env)
        assert done.returncode == 0, done.stderr
        line = next(x for x in done.stdout.splitlines() if x.startswith("email:"))
        assert f"through plain 127.0.0.1:{port}; session ok" in line
    finally:
        relay.send_signal(signal.SIGTERM)
        await relay.wait()
