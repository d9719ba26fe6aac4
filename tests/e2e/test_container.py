"""deploy/Containerfile built and run here: two containers, one PostgreSQL, one question.

No container registry is reachable, so the image is built as docs/production.md's
"Without a registry" block says, and its lines are what runs: the base image
made by ``debootstrap --variant=minbase bookworm`` from the mirror apt
already uses, with the host's extra CA certificates (so pip in the build
trusts what the host trusts), imported as ``localhost/debian-base:bookworm``,
then ``docker build`` on it. A dockerd of the test's own (its own data root,
exec root and socket; no bridge, no iptables: the containers use the host's
network) builds and runs it, and is stopped by its PID at the end. The root
filesystem (the block's ``ROOTFS``) and dockerd's data root are cached under
CACHE: a warm run leaves out the debootstrap line while the cached root
filesystem is complete, and then the import line while the base image is
there (a new import would make a new base and rebuild every layer), so a second
run builds in about a second; a cold run runs every line.

Skips, with the reason, where docker.io or debootstrap is missing (.ci/run
installs both) or the process is not root.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shlex
import shutil
import signal
import subprocess
import textwrap
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import aiohttp
import pytest

from bot.service.delivering.messages import AGENTS_ONLY
from tests import waiting
from tests.e2e._api import Api, api_env, approval
from tests.e2e._client import APPROVE, ConsoleClient
from tests.e2e._server import ROOT, free_port
from tests.fakes.slack_api import (
    BOT_TOKEN,
    SIGNING_SECRET,
    FakeSlack,
    event_callback,
    mention,
    sign,
)
from tests.stores._postgres import fresh_schema

pytestmark = [pytest.mark.e2e, pytest.mark.container, pytest.mark.postgres]

CACHE = Path(os.environ.get("BOT_CONTAINER_CACHE", "/var/cache/hitl-bridge-test"))
DOCKER = Path("/usr/bin/docker")  # docker.io's client, talking to our dockerd only
BASE = "localhost/debian-base:bookworm"
# docs/production.md's tag: the image is built by its own lines.
IMAGE = "hitl-bridge"
PASSWORD = "container test password"

Docker = Callable[..., subprocess.CompletedProcess[str]]


def _missing() -> str:
    if os.geteuid() != 0:
        return "the container test runs dockerd and debootstrap, which need root"
    for tool in ("dockerd", "debootstrap"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (apt-get install docker.io debootstrap)"
    if not DOCKER.exists():
        return "docker.io's client /usr/bin/docker is not installed"
    return ""


@pytest.fixture(scope="module")
def docker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Docker]:
    """A dockerd of our own; yields ``docker(*args)`` bound to its socket."""
    missing = _missing()
    if missing:
        pytest.skip(missing)
    run_dir = tmp_path_factory.mktemp("dockerd")
    socket = run_dir / "docker.sock"
    log = (run_dir / "dockerd.log").open("wb")
    daemon = subprocess.Popen(
        [
            "dockerd",
            f"--data-root={CACHE / 'docker'}",
            f"--exec-root={run_dir / 'exec'}",
            f"--pidfile={run_dir / 'docker.pid'}",
            f"--host=unix://{socket}",
            "--bridge=none",
            "--iptables=false",
            "--ip-masq=false",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    env = {
        "PATH": os.environ.get("PATH", ""),
        "DOCKER_HOST": f"unix://{socket}",
        "DOCKER_CONFIG": str(run_dir / "client"),  # never the host's client config
        "DOCKER_BUILDKIT": "0",
    }

    def call(
        *args: str, check: bool = True, timeout: float = 600, **kw: object
    ) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [str(DOCKER), *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            **kw,  # type: ignore[arg-type]
        )
        if check and done.returncode != 0:
            raise AssertionError(
                f"docker {args[0]} failed: {done.stdout[-2000:]}{done.stderr[-2000:]}"
            )
        return done

    call.env = env  # type: ignore[attr-defined] # the page's lines run with it too
    try:

        def answers() -> bool:
            assert daemon.poll() is None, "dockerd exited"
            return call("info", check=False, timeout=30).returncode == 0

        try:
            waiting.eventually_blocking(answers, what="dockerd answering", seconds=60, every=0.5)
        except AssertionError as failed:
            log.flush()
            tail = (run_dir / "dockerd.log").read_text()[-1500:]
            pytest.fail(f"dockerd did not start ({failed}): {tail}")
        yield call
    finally:
        daemon.send_signal(signal.SIGTERM)
        try:
            daemon.wait(timeout=30)
        except subprocess.TimeoutExpired:
            daemon.kill()
            daemon.wait(timeout=10)
        log.close()
        _unmount_below(run_dir)


def _unmount_below(folder: Path) -> None:
    """dockerd leaves its network namespace bind-mounted under its exec root; unmounted,
    so pytest can remove the folder later."""
    mounts = Path("/proc/mounts").read_text().splitlines()
    for point in sorted((line.split()[1] for line in mounts), reverse=True):
        if point.startswith(f"{folder}/"):
            subprocess.run(["umount", "-l", point], check=False, capture_output=True)


def _page_build_lines() -> list[str]:
    """docs/production.md's "Without a registry" block, a command a line (continuations joined)."""
    page = (ROOT / "docs" / "production.md").read_text()
    section = page[page.index("**Without a registry**") :]
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    assert block is not None, "no shell block after **Without a registry**"
    text = re.sub(r"\\\n\s*", "", textwrap.dedent(block.group(1)))
    return [line.strip() for line in text.splitlines() if line.strip()]


@pytest.fixture(scope="module")
def image(docker: Docker, tmp_path_factory: pytest.TempPathFactory) -> str:
    """docs/production.md's build-without-a-registry lines, run by bash against our dockerd."""
    lines = _page_build_lines()
    [build] = [line for line in lines if line.startswith("docker build ")]
    assert f"--build-arg BASE_IMAGE={BASE}" in build and f"-t {IMAGE} ." in build, build
    rootfs, done_mark = CACHE / "rootfs", CACHE / "rootfs.complete"
    cached = done_mark.exists()
    have_base = docker("image", "inspect", BASE, check=False).returncode == 0
    script = []
    for line in lines:
        if line.startswith("ROOTFS="):
            line = f"ROOTFS={shlex.quote(str(rootfs))}"  # the cache, not /var/tmp
        elif line.startswith("debootstrap "):
            if cached:
                continue
            shutil.rmtree(rootfs, ignore_errors=True)
            rootfs.parent.mkdir(parents=True, exist_ok=True)
        elif " docker import " in line and cached and have_base:
            continue  # a fresh root filesystem is always imported
        script.append(line)
    # docker.io's client first on PATH, talking to our dockerd (DOCKER_HOST).
    bin_dir = tmp_path_factory.mktemp("bin")
    (bin_dir / "docker").symlink_to(DOCKER)
    client: dict[str, str] = docker.env  # type: ignore[attr-defined]
    env = {**client, "PATH": f"{bin_dir}:{os.environ.get('PATH', '')}"}
    done = subprocess.run(
        ["/bin/bash", "-e", "-o", "pipefail", "-c", "\n".join(script)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=2400,
        check=False,
    )
    failed = f"docs/production.md's build failed: {done.stdout[-2000:]}{done.stderr[-2000:]}"
    assert done.returncode == 0, failed
    if not cached:
        done_mark.touch()
    return IMAGE


@contextlib.contextmanager
def running(docker: Docker, image: str, name: str, env: dict[str, str]) -> Iterator[str]:
    flags = [f"--env={key}={value}" for key, value in env.items()]
    docker("rm", "-f", name, check=False)
    docker(
        "run", "--detach", f"--name={name}", "--network=host", "--health-interval=1s", *flags, image
    )
    try:
        yield name
    finally:
        docker("rm", "-f", name, check=False)


async def healthy(docker: Docker, names: list[str], seconds: float = 90) -> None:
    states: list[str] = []

    def all_healthy() -> bool:
        states[:] = [
            docker("inspect", "--format={{.State.Health.Status}}", n).stdout.strip() for n in names
        ]
        return states == ["healthy"] * len(names)

    try:
        await waiting.eventually(all_healthy, what="healthy", seconds=seconds, every=0.5)
    except AssertionError:
        logs = [docker("logs", n, check=False).stderr[-1500:] for n in names]
        raise AssertionError(f"not healthy: {states}; logs: {logs}") from None


@pytest.fixture
async def database() -> AsyncIterator[str]:
    async with fresh_schema() as url:
        yield url


def slack_env(fake: FakeSlack) -> dict[str, str]:
    return {
        "SLACK_BOT_TOKEN": BOT_TOKEN,
        "SLACK_SIGNING_SECRET": SIGNING_SECRET,
        "SLACK_API_URL": fake.api_url,
    }


@pytest.fixture
async def slack() -> AsyncIterator[FakeSlack]:
    """The loopback Slack Web API (the containers share the host's network)."""
    fake = await FakeSlack().start()
    yield fake
    await fake.close()


async def test_two_containers_share_one_postgresql(
    docker: Docker, image: str, database: str, slack: FakeSlack
) -> None:
    """Both healthy and agents only: a mention gets the sentence; an agent's question asked
    through one is answered through the other."""
    ports = [free_port(), free_port()]
    common = {
        "DATABASE_URL": database,
        "BOT_SIGNING_KEYS": f"k1:{secrets.token_urlsafe(40)}",
        "BOT_CONSOLE_USERS": f"ana:{PASSWORD}",
        "BOT_ALLOWED_HOSTS": ",".join(f"127.0.0.1:{p}" for p in ports),
        "BOT_LOG_LEVEL": "WARNING",
        **slack_env(slack),
        **api_env("console:*"),
    }
    user = docker("run", "--rm", "--network=none", "--entrypoint=id", image, "-u").stdout.strip()
    assert user != "0", "the image runs as root"
    with (
        running(docker, image, "hitl-a", {**common, "PORT": str(ports[0])}) as a,
        running(docker, image, "hitl-b", {**common, "PORT": str(ports[1])}) as b,
    ):
        await healthy(docker, [a, b])
        auth = {"Authorization": aiohttp.encode_basic_auth("ana", PASSWORD)}
        async with aiohttp.ClientSession(headers=auth) as http:
            # The image's BOT_AGENT=none: a mention starts nothing and is told so.
            body = json.dumps(event_callback(mention("deploy web", user="U0ALICE")))
            headers = {"Content-Type": "application/json", **sign(body)}
            url = f"http://127.0.0.1:{ports[0]}/slack/events"
            async with http.post(url, data=body.encode(), headers=headers) as response:
                assert response.status == 200
            told = await slack.wait_for("chat.postEphemeral")
            assert told[0].args["text"] == AGENTS_ONLY
            # An agent's question, asked through one and answered through the other.
            # The key's bearer header replaces the session's console sign-in.
            api = Api(http, f"http://127.0.0.1:{ports[0]}")
            created = await api.created(
                approval("container", {"surface": "console", "conversation": "c1"})
            )
            other = ConsoleClient(http, f"http://127.0.0.1:{ports[1]}")
            asked = await other.outstanding("c1", "approval", seconds=30)
            await other.answer_ok(asked["token"], APPROVE)
            status, answered = await api.get(created["id"], wait=20)
            assert status == 200 and answered["answer"]["decision"] == "approve", answered
        stopped = docker("stop", "--time=30", a, b, timeout=90)
        assert stopped.returncode == 0
