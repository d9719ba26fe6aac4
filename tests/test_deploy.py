"""deploy/: the Containerfile, compose.yaml and the Kubernetes manifests, checked offline.

``kubernetes-validate --strict`` checks the manifests against the API's
schemas (no cluster); the rest reads each file for what docs/production.md
("Run it in production") promises.
"""

from __future__ import annotations

import http.server
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
DEPLOY = ROOT / "deploy"


def k8s() -> list[dict[str, Any]]:
    return [
        doc
        for path in sorted((DEPLOY / "k8s").glob("*.yaml"))
        for doc in yaml.safe_load_all(path.read_text())
        if doc
    ]


def kind(name: str) -> dict[str, Any]:
    [found] = [doc for doc in k8s() if doc["kind"] == name]
    return found


def test_the_kubernetes_manifests_pass_strict_validation() -> None:
    files = sorted(str(p) for p in (DEPLOY / "k8s").glob("*.yaml"))
    assert len(files) >= 3
    done = subprocess.run(
        [sys.executable, "-m", "kubernetes_validate", "--strict", *files],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("passed") == len(files)


def test_the_deployment_runs_two_probed_replicas_on_an_external_database() -> None:
    deployment, secret = kind("Deployment"), kind("Secret")
    assert deployment["spec"]["replicas"] == 2
    [container] = deployment["spec"]["template"]["spec"]["containers"]
    env = {item["name"]: item.get("value") for item in container["env"]}
    public_host = env["BOT_PUBLIC_URL"].split("://")[1]
    for probe, path in (("readinessProbe", "/readyz"), ("livenessProbe", "/livez")):
        check = container[probe]["httpGet"]
        assert check["path"] == path
        # The bot answers only its own host names (docs/production.md, "Allowed hosts").
        assert {"name": "Host", "value": public_host} in check["httpHeaders"]
    assert "DATABASE_URL" not in env  # from the Secret, never in the manifest's env
    assert env["BOT_AGENT"] == "none"  # agents only: no demo in production
    assert container["envFrom"] == [{"secretRef": {"name": secret["metadata"]["name"]}}]
    assert secret["stringData"]["DATABASE_URL"].startswith("postgresql://")
    assert "BOT_SIGNING_KEYS" in secret["stringData"]
    assert deployment["spec"]["template"]["spec"]["securityContext"]["runAsNonRoot"] is True
    service = kind("Service")
    assert service["spec"]["selector"] == deployment["spec"]["selector"]["matchLabels"]


def test_the_containerfile_takes_its_base_as_an_argument_and_runs_unprivileged() -> None:
    text = (DEPLOY / "Containerfile").read_text()
    lines = [line for line in text.splitlines() if line and not line.startswith("#")]
    assert lines[0].startswith("ARG BASE_IMAGE=") and lines[1] == "FROM ${BASE_IMAGE}"
    users = re.findall(r"^USER (\S+)", text, re.M)
    assert users and users[-1] not in ("root", "0")
    assert re.search(r"^HEALTHCHECK .*\n?.*healthcheck\.py", text, re.M)
    assert re.search(r"^\s+PORT=3978", text, re.M)  # a default; the bot reads PORT
    assert re.search(r"^\s+BOT_AGENT=none", text, re.M)  # agents only: no demo in production
    assert "python3 python3-venv ca-certificates" in text


def test_compose_runs_postgresql_and_two_replicas_behind_one_port() -> None:
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    services = compose["services"]
    assert services["db"]["image"].startswith("postgres:")
    bots = [s for s in services.values() if s.get("build", {}).get("dockerfile")]
    assert len(bots) == 2
    for bot in bots:
        assert bot["build"]["dockerfile"] == "deploy/Containerfile"
        assert bot["environment"]["DATABASE_URL"].startswith("postgresql://")
        assert "ports" not in bot
        assert bot["environment"]["BOT_AGENT"] == "none"
    published = [p for s in services.values() for p in s.get("ports", [])]
    assert published == ["8080:8080"]


@pytest.fixture
def healthz() -> Iterator[tuple[int, list[str]]]:
    """A stand-in bot: 200 on /readyz and /livez for the Host it expects, 421 otherwise;
    the hosts and paths asked are listed."""
    hosts: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            hosts.append(f"{self.headers['Host']}{self.path}")
            ok = self.path in ("/readyz", "/livez") and self.headers["Host"] == "bot.example.com"
            self.send_response(200 if ok else 421)
            self.end_headers()

        def log_message(self, *_args: object) -> None:
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1], hosts
    server.shutdown()
    server.server_close()


def test_the_healthcheck_names_the_public_host(healthz: tuple[int, list[str]]) -> None:
    """The probe asks /readyz (or the path given) with the public host as its Host."""
    port, hosts = healthz

    def probe(*path: str, **env: str) -> int:
        return subprocess.run(
            [sys.executable, str(DEPLOY / "healthcheck.py"), *path],
            env={"PATH": os.environ.get("PATH", ""), "PORT": str(port), **env},
            capture_output=True,
            timeout=30,
            check=False,
        ).returncode

    assert probe(BOT_PUBLIC_URL="https://bot.example.com") == 0
    assert probe() == 1  # 127.0.0.1:<port> is refused by a public bind
    # Readiness by default; liveness when asked (docs/operations.md, under Swarm).
    assert probe("/livez", BOT_PUBLIC_URL="https://bot.example.com") == 0
    assert hosts == [
        "bot.example.com/readyz",
        f"127.0.0.1:{port}/readyz",
        "bot.example.com/livez",
    ]
