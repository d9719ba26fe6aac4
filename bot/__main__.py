"""`python -m bot` serves; `check` validates configuration; `keygen` prints a signing key
(`keygen --webhook`: a webhook secret; `keygen --data`: a data key);
`teams-package` writes the Teams app package (manifest and icons, zipped);
`admin <command>` runs an admin command (`admin help`) against the configured store;
`api-key create|list|revoke` manages the agents API's keys;
`audit export|verify|checkpoint|public-key` exports and verifies the tamper-evident audit;
`data rekey` moves the store's encrypted content onto the first of BOT_DATA_KEYS;
`mcp` serves the MCP tools over stdio, `mcp-gateway` the MCP approval gateway (the `mcp` extra)."""

from __future__ import annotations

import argparse
import asyncio
import errno
import gc
import logging
import re
import secrets
import signal
import socket
import sqlite3
import sys
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

try:
    from bot.app.settings import Settings, SettingsError, load_settings
    from bot.errors import BotError, install_extra
except ModuleNotFoundError as missing:  # pragma: no cover - exercised by a subprocess test
    # Run by a Python without the bot's dependencies (outside .venv): one sentence, no traceback.
    print(
        f"cannot start: this Python ({sys.executable}) lacks the package {missing.name!r}; "
        "run `make run` once to create .venv, then use .venv/bin/python -m bot",
        file=sys.stderr,
    )
    raise SystemExit(2) from None

COMMANDS = {
    "serve": "serve the bot (the default)",
    "check": "validate the settings, open the store, probe what is reachable",
    "keygen": (
        "print a new signing key for BOT_SIGNING_KEYS (--webhook: BOT_WEBHOOK_SECRET, "
        "--data: BOT_DATA_KEYS)"
    ),
    "teams-package": "write the Teams app package (manifest and icons, zipped)",
    "admin": "run an admin command against the configured store (`admin help`)",
    "api-key": "make, list or revoke keys for the agents API (/v1)",
    "audit": "export, verify or checkpoint the tamper-evident audit",
    "data": "rekey: move the store's encrypted content onto the first of BOT_DATA_KEYS",
    "mcp": "serve the MCP tools (ask_human, request_approval) over stdio",
    "mcp-gateway": "serve the MCP approval gateway (BOT_MCP_GATEWAY) over stdio",
    "help": "show this help",
}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m bot",
        description="A human-in-the-loop chat-ops bridge. Without a command it serves.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="command", title="commands")
    for name, summary in COMMANDS.items():
        if name == "admin":
            # Its words are parsed by bot.admin; listed here so --help names it.
            sub.add_parser(name, help=summary, add_help=False)
            continue
        command = sub.add_parser(name, help=summary, description=summary)
        if name == "teams-package":
            _package_flags(command)
        if name == "keygen":
            command.add_argument(
                "--webhook",
                action="store_true",
                help="print a webhook signing secret (whsec_..., Standard Webhooks) instead",
            )
            command.add_argument(
                "--data",
                action="store_true",
                help="print a data key for BOT_DATA_KEYS (encryption at rest) instead",
            )
        if name == "data":
            command.add_argument(
                "action", choices=["rekey"], help="rekey: every row onto the first key"
            )
        if name == "api-key":
            from bot.cli.api_keys import add_arguments

            add_arguments(command)
        if name == "audit":
            from bot.cli.audit import add_arguments as add_audit_arguments

            add_audit_arguments(command)
    return parser


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("chatops-hitl-bridge")
    except PackageNotFoundError:
        return "(not installed: run from a checkout)"


def _package_flags(package: argparse.ArgumentParser) -> None:
    package.add_argument("--website", help="https URL of your bot's site (required)")
    package.add_argument("--out", default="var/teams-app.zip", help="the zip to write")
    package.add_argument("--name", default="Ops assistant", help="the app's name in Teams")
    package.add_argument("--developer", default="Ops", help="the developer name Teams shows")
    package.add_argument(
        "--version",
        default="1.0.0",
        help="the package version; raise it for each upload of a changed app (default 1.0.0)",
    )
    package.add_argument(
        "--app-id", help="the Azure Bot's app id (default: MicrosoftAppId or TEAMS_APP_ID)"
    )


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["admin"]:
        # Its own grammar (bot.admin), so argparse never sees the command's words.
        words = argv[1:]
        if words[:1] in (["--help"], ["-h"]):
            words = ["help"]
        return _admin(words)
    parser = _parser()
    args = parser.parse_args(argv)
    command = args.command or "serve"
    if command == "help":
        parser.print_help()
        return 0
    if command == "keygen":
        if args.webhook:
            from bot.webhooks import random_webhook_secret

            print(random_webhook_secret())
        elif args.data:
            from bot.stores.data_keys import random_data_key

            print(random_data_key())
        else:
            print(f"k{secrets.token_hex(3)}:{secrets.token_urlsafe(48)}")
        return 0
    if command == "audit":
        from bot.cli.audit import verify_file, wants_store

        if not wants_store(args):
            # Only the file and the public keys: never DATABASE_URL, nor the other settings.
            return verify_file(args)
    if command == "teams-package":
        # The package holds the app id only: no secret, no store, no other setting needed.
        return _teams_package(args)
    return _configured(lambda settings: _command(command, args, settings))


def _command(command: str, args: argparse.Namespace, settings: Settings) -> int:
    if command == "check":
        from bot.app.check import check

        return asyncio.run(check(settings))
    if command == "api-key":
        from bot.cli.api_keys import run_api_key

        return asyncio.run(run_api_key(settings, args))
    if command == "audit":
        from bot.cli.audit import run_audit

        return asyncio.run(run_audit(settings, args))
    if command == "data":
        from bot.cli.data import rekey

        return asyncio.run(rekey(settings))
    if command == "mcp":
        return _mcp(settings)
    if command == "mcp-gateway":
        return _mcp_gateway(settings)
    return _serve(settings)


def _admin(words: list[str]) -> int:
    from bot.cli.admin import run_admin

    return _configured(lambda settings: asyncio.run(run_admin(settings, words)))


def _configured(run: Callable[[Settings], int]) -> int:
    """``run`` with the settings loaded: a setting that does not load, or a configuration
    error found later, is told on stderr and exits 2; a store fault as ``_store_fault`` says."""
    try:
        settings = load_settings()
    except SettingsError as error:
        for line in error.lines:
            print(f"configuration error: {line}", file=sys.stderr)
        return 2
    try:
        return run(settings)
    except BotError as error:
        print(f"configuration error: {error}", file=sys.stderr)
        return 2
    except _STORE_FAULTS as error:
        return _store_fault(error)


def _mcp(settings: Settings) -> int:
    def serving() -> Coroutine[Any, Any, None]:
        from adapters.mcp import serve_stdio

        return serve_stdio(settings.mcp)

    return _over_stdio(settings, "MCP", serving)


def _mcp_gateway(settings: Settings) -> int:
    def serving() -> Coroutine[Any, Any, None]:
        from adapters.mcp_gateway import serve_gateway_stdio

        data_dir = settings.signing.data_dir
        return serve_gateway_stdio(settings.mcp, settings.mcp_gateway, data_dir=data_dir)

    return _over_stdio(settings, "the MCP gateway", serving)


def _over_stdio(
    settings: Settings, what: str, serving: Callable[[], Coroutine[Any, Any, None]]
) -> int:
    """Serve ``what`` (the ``mcp`` extra's) over stdio until the client closes stdin."""
    try:
        served = serving()
    except ModuleNotFoundError as missing:
        print(
            f"cannot serve {what}: the package {missing.name!r} is missing; install the mcp "
            f"extra ({install_extra('mcp')})",
            file=sys.stderr,
        )
        return 2
    from bot.logs import configure_logging

    # stdout carries the protocol: the log goes to stderr, as it always does.
    configure_logging(
        level=settings.logs.level, fmt=settings.logs.format, secrets=settings.secrets()
    )
    asyncio.run(served)
    return 0


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
    from bot.tracing.setup import configure

    configure_logging(
        level=settings.logs.level, fmt=settings.logs.format, secrets=settings.secrets()
    )
    for line in settings.warnings():
        logging.getLogger("bot.app.settings").warning("configuration: %s", line)
    traces = configure()
    if traces.exporting:  # off is the default, said by `check` only
        logging.getLogger("bot.tracing").info("traces: %s", traces.state)
    try:
        return _bound(settings)
    finally:
        traces.shutdown()  # the last spans exported before the process ends


def _bound(settings: Settings) -> int:
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
        # Said at once, so an operator (and a test) sees the stop begin before the drain.
        logging.getLogger("bot").info("stopping: finishing open requests and runs")
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


def _teams_package(args: argparse.Namespace) -> int:
    from adapters.teams import build_package
    from adapters.teams.settings import TeamsAppId

    app_id = args.app_id or TeamsAppId().app_id
    if not app_id:
        print(
            "configuration error: MicrosoftAppId: set the Azure Bot's app id (or pass --app-id)",
            file=sys.stderr,
        )
        return 2
    # Teams refuses a package whose id is not a GUID only at upload; say so here.
    if not re.fullmatch(r"[0-9a-fA-F]{8}(-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}", app_id):
        where = "usage error: --app-id" if args.app_id else "configuration error: MicrosoftAppId"
        print(
            f"{where}: {app_id!r} is not an app id; copy the Azure Bot's Microsoft App ID, "
            "a GUID like 00000000-0000-0000-0000-000000000000 (Azure Bot > Configuration)",
            file=sys.stderr,
        )
        return 2
    if not re.fullmatch(r"\d{1,5}\.\d{1,5}\.\d{1,5}", args.version):
        print("usage error: --version is three numbers, like 1.0.1", file=sys.stderr)
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
        version=args.version,
    )
    print(f"wrote {out}: upload it in Teams (Apps > Manage your apps > Upload an app)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
