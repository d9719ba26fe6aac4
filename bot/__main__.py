"""`python -m bot` serves; `check` validates configuration; `keygen` prints a signing key;
`teams-package` writes the Teams app package (manifest and icons, zipped);
`admin <command>` runs an admin command (`admin help`) against the configured store."""

from __future__ import annotations

import argparse
import asyncio
import errno
import gc
import secrets
import signal
import socket
import sqlite3
import sys

from pydantic import SecretStr

from bot.config import Settings, SettingsError, load_settings
from bot.errors import BotError


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["admin"]:
        # Its own grammar (bot.admin), so argparse never sees the command's words.
        return _admin(argv[1:])
    parser = argparse.ArgumentParser(prog="python -m bot", description=__doc__)
    commands = ("serve", "check", "keygen", "teams-package")
    parser.add_argument("command", nargs="?", default="serve", choices=commands)
    parser.add_argument("--out", default="var/teams-app.zip", help="teams-package: the zip")
    parser.add_argument("--name", default="Ops assistant", help="teams-package: app name")
    parser.add_argument("--developer", default="Ops", help="teams-package: developer name")
    parser.add_argument("--website", help="teams-package: https URL of your bot's site")
    args = parser.parse_args(argv)
    command = args.command
    if command == "keygen":
        print(f"k{secrets.token_hex(3)}:{secrets.token_urlsafe(48)}")
        return 0
    try:
        settings = load_settings()
    except SettingsError as error:
        for line in error.lines:
            print(f"configuration error: {line}", file=sys.stderr)
        return 2
    try:
        if command == "check":
            return asyncio.run(_check(settings))
        if command == "teams-package":
            return _teams_package(settings, args)
        return _serve(settings)
    except BotError as error:
        print(f"configuration error: {error}", file=sys.stderr)
        return 2
    except _STORE_FAULTS as error:
        return _store_fault(error)


def _admin(words: list[str]) -> int:
    from bot.admin.cli import run_admin

    try:
        settings = load_settings()
    except SettingsError as error:
        for line in error.lines:
            print(f"configuration error: {line}", file=sys.stderr)
        return 2
    try:
        return asyncio.run(run_admin(settings, words))
    except BotError as error:
        print(f"configuration error: {error}", file=sys.stderr)
        return 2
    except _STORE_FAULTS as error:
        return _store_fault(error)


# A store that cannot be opened or written (read-only file, full disk, no server).
_STORE_FAULTS = (sqlite3.Error, OSError)


def _store_fault(error: BaseException) -> int:
    """One line for a store the process cannot use, instead of a traceback."""
    print(
        f"store error: DATABASE_URL: {type(error).__name__}: {error}; check that the store "
        "is reachable, writable by this user and has free space",
        file=sys.stderr,
    )
    return 1


def _serve(settings: Settings) -> int:
    from bot.logs import configure_logging

    configure_logging(
        level=settings.logs.level, fmt=settings.logs.format, secrets=settings.secrets()
    )
    host, port = settings.serving.host, settings.serving.port
    try:
        # Bound before anything starts, so a busy port is one line, not a half-started bot.
        sock = socket.create_server((host, port), family=_family(host))
    except OSError as error:
        reason = "already in use" if error.errno == errno.EADDRINUSE else error.strerror
        print(
            f"cannot serve: {host}:{port} is {reason}; stop whatever holds "
            "it or set PORT to another port",
            file=sys.stderr,
        )
        return 2
    return asyncio.run(_serve_until_stopped(settings, sock))


async def _serve_until_stopped(settings: Settings, sock: socket.socket) -> int:
    from aiohttp import web

    from bot.app import create_app
    from bot.serving import AccessLog

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    stopping = (signal.SIGTERM, signal.SIGINT)

    def first_signal() -> None:
        stop.set()
        # Later signals (a supervisor, then `make` passing one on) are ignored from now
        # to exit: asyncio would otherwise restore the default, fatal handler when the
        # loop closes, and a second SIGTERM landing then kills a clean shutdown.
        for signum in stopping:
            loop.remove_signal_handler(signum)
            signal.signal(signum, signal.SIG_IGN)

    for signum in stopping:
        loop.add_signal_handler(signum, first_signal)
    runner = web.AppRunner(
        create_app(settings),
        access_log_class=AccessLog,
        # Also the deadline for a request's headers: aiohttp closes a connection
        # that has not completed a request line and headers by then.
        keepalive_timeout=settings.serving.header_timeout_seconds,
        # Resumes drain inside cleanup; this bounds open requests before it.
        shutdown_timeout=min(5.0, settings.run.shutdown_grace_seconds),
    )
    try:
        await runner.setup()
        await web.SockSite(runner, sock).start()
        gc.freeze()
        await stop.wait()
    finally:
        await runner.cleanup()
        sock.close()
    return 0


def _family(host: str) -> socket.AddressFamily:
    return socket.AF_INET6 if ":" in host else socket.AF_INET


async def _check(settings: Settings) -> int:
    from bot.app import agent_spec
    from bot.human.factory import redemption_is_shared
    from bot.questions.capability_ports import LifecyclePorts
    from bot.questions.lifecycle import Lifecycle
    from bot.signing import signer_from

    signer_from(settings)
    stores = await settings.store.open()
    try:
        await stores.ping()
        # The capability spends through the lifecycle's ports, as the server wires it.
        shared = redemption_is_shared(LifecyclePorts(Lifecycle(stores.unit), stores.checkpoints))
    finally:
        await stores.close()
    spec = agent_spec(settings)
    console = "off"
    if settings.console.enabled:
        console = f"http://{settings.serving.host}:{settings.serving.port}/"
        if settings.console.users is not None:
            console += " (people sign in as themselves)"
        elif settings.console.password is not None:
            console += " (one shared sign-in: operator)"
        else:
            console += " (open to this machine; answers as the operator)"
    signing = settings.signing
    keys = "BOT_SIGNING_KEYS" if signing.keys else f"generated key in {signing.data_dir}"
    configured = settings.provider
    model = "scripted" if spec.provider else f"model {configured.model}"
    if spec.provider is None and configured.base_url and configured.api_key:
        problem = await _probe_model(configured.base_url, configured.api_key)
        if problem:
            print(f"configuration error: OPENAI_BASE_URL: {problem}", file=sys.stderr)
            return 2
        model += f" at {configured.base_url}, reachable"
    print(f"store:    {settings.store.backend} (spends shared across processes: {shared})")
    print(f"signing:  {keys}")
    print(f"agent:    {spec.name} ({model})")
    print(f"console:  {console}")
    print(f"slack:    {settings.slack.mode or 'not configured'}")
    print(f"teams:    {_teams_state(settings)}")
    return 0


def _teams_state(settings: Settings) -> str:
    if not settings.teams_enabled:
        return "not configured (set MicrosoftAppId and MicrosoftAppPassword)"
    if settings.teams_emulator:
        return "emulator mode on /api/messages (no MicrosoftAppId: unauthenticated, loopback only)"
    return f"app {settings.teams.app_id} ({settings.teams.app_type}) on /api/messages"


def _teams_package(settings: Settings, args: argparse.Namespace) -> int:
    from pathlib import Path

    from adapters.teams import build_package

    app_id = settings.teams.app_id
    if not app_id:
        print("configuration error: MicrosoftAppId: set the Azure Bot's app id", file=sys.stderr)
        return 2
    if not args.website or not str(args.website).startswith("https://"):
        print(
            "usage error: pass --website https://... (privacy and terms pages go under it)",
            file=sys.stderr,
        )
        return 2
    out = build_package(
        Path(args.out),
        app_id=app_id,
        name=args.name,
        developer=args.developer,
        website=args.website,
    )
    print(f"wrote {out}: upload it in Teams (Apps > Manage your apps > Upload an app)")
    return 0


async def _probe_model(base_url: str, api_key: SecretStr) -> str:
    """'' when ``GET {base}/models`` answers 200 with this key, else what went wrong."""
    import aiohttp

    url = base_url.rstrip("/") + "/models"
    headers = {"Authorization": f"Bearer {api_key.get_secret_value()}"}
    try:
        async with (
            aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10)) as session,
            session.get(url, headers=headers) as response,
        ):
            if response.status in (401, 403):
                return f"{base_url} refused OPENAI_API_KEY (HTTP {response.status}); check the key"
            if response.status != 200:
                return (
                    f"{base_url}/models answered HTTP {response.status}; check that the URL "
                    "is the API's base (it usually ends in /v1)"
                )
    except (aiohttp.ClientError, TimeoutError, OSError) as error:
        reason = type(error).__name__ if isinstance(error, TimeoutError) else str(error)
        return f"cannot reach {base_url} ({reason}); check the URL and the network"
    return ""


if __name__ == "__main__":
    sys.exit(main())
