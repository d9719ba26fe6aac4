"""A PostgreSQL cluster of one test's own, in a temporary folder on a free port.

For tests that stop the database under a running bridge: the machine's
PostgreSQL is shared with every other test, so it is never the one stopped.
Run as root (a container), the server runs as the ``postgres`` user, which
``initdb`` insists on.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.e2e._server import free_port


def _binaries() -> Path | None:
    found = shutil.which("pg_ctl")
    if found:
        return Path(found).parent
    versions = sorted(Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"))
    return versions[-1].parent if versions else None


class PrivateCluster:
    """``initdb`` into a folder, then ``start`` and ``stop`` it as often as the test likes."""

    def __init__(self, folder: Path, binaries: Path) -> None:
        self.folder = folder
        self.data = folder / "data"
        self.bin = binaries
        self.port = free_port()
        self.url = f"postgresql://postgres@127.0.0.1:{self.port}/postgres"
        # initdb refuses root; the server then runs as postgres in a folder it owns.
        self._as = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        if self._as:
            user = pwd.getpwnam("postgres")
            os.chown(folder, user.pw_uid, user.pw_gid)
        self._run("initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust", "-N")

    def _run(self, tool: str, *words: str) -> None:
        subprocess.run(
            [*self._as, str(self.bin / tool), *words],
            check=True,
            capture_output=True,
            timeout=120,
        )

    def start(self) -> None:
        """Start and wait until it takes connections (``pg_ctl -w``)."""
        options = f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.folder} -c fsync=off"
        log = str(self.folder / "postgres.log")
        self._run("pg_ctl", "start", "-w", "-D", str(self.data), "-l", log, "-o", options)

    def stop(self) -> None:
        """Stop at once, cutting the connections the bridge holds (``-m fast``)."""
        self._run("pg_ctl", "stop", "-w", "-m", "fast", "-D", str(self.data))

    def running(self) -> bool:
        done = subprocess.run(
            [*self._as, str(self.bin / "pg_ctl"), "status", "-D", str(self.data)],
            capture_output=True,
            timeout=30,
            check=False,
        )
        return done.returncode == 0


@contextmanager
def private_cluster() -> Iterator[PrivateCluster | None]:
    """A started cluster, stopped and removed afterwards; None without PostgreSQL's binaries."""
    binaries = _binaries()
    if binaries is None:
        yield None
        return
    folder = Path(tempfile.mkdtemp(prefix="bot-pg-"))
    try:
        cluster = PrivateCluster(folder, binaries)
        cluster.start()
        try:
            yield cluster
        finally:
            if cluster.running():
                cluster.stop()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
