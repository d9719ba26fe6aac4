"""`python -m bot` serves; `check` validates configuration; `keygen` prints a signing key;
`teams-package` writes the Teams app package (manifest and icons, zipped);
`admin <command>` runs an admin command (`admin help`) against the configured store."""

from __future__ import annotations

import argparse
import asyncio
import secrets
import sys

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


def _serve(settings: Settings) -> int:
    from aiohttp import web

    from bot.app import create_app
    from bot.logs import configure_logging

    secrets_to_hide = [
        s.get_secret_value()
        for s in (
            settings.signing_keys,
            settings.console_password,
            settings.openai_api_key,
            settings.teams_app_password,
            settings.slack_bot_token,
            settings.slack_signing_secret,
            settings.slack_app_token,
            settings.slack_client_secret,
            settings.slack_installation_key,
        )
        if s is not None
    ]
    configure_logging(level=settings.log_level, fmt=settings.log_format, secrets=secrets_to_hide)
    web.run_app(
        create_app(settings),
        host=settings.host,
        port=settings.port,
        # Resumes drain inside cleanup; this bounds open requests before it.
        shutdown_timeout=min(5.0, settings.shutdown_grace_seconds),
        print=None,  # our own "serving on" line is logged, in the log's format
    )
    return 0


async def _check(settings: Settings) -> int:
    from bot.app import agent_spec
    from bot.human.factory import redemption_is_shared
    from bot.signing import signer_from
    from bot.stores import open_stores

    signer_from(settings)
    stores = await open_stores(settings.database_url)
    try:
        await stores.ping()
        shared = redemption_is_shared(stores.consumption)
    finally:
        await stores.close()
    spec = agent_spec(settings)
    console = "off"
    if settings.console:
        console = f"http://{settings.host}:{settings.port}/"
        if not settings.console_is_local:
            console += " (password protected)"
    store = settings.database_url.split("://")[0]
    signing = (
        "BOT_SIGNING_KEYS" if settings.signing_keys else f"generated key in {settings.data_dir}"
    )
    model = "scripted" if spec.provider else f"model {settings.openai_model}"
    print(f"store:    {store} (spends shared across processes: {shared})")
    print(f"signing:  {signing}")
    print(f"agent:    {spec.name} ({model})")
    print(f"console:  {console}")
    print(f"slack:    {settings.slack_mode or 'not configured'}")
    print(f"teams:    {_teams_state(settings)}")
    return 0


def _teams_state(settings: Settings) -> str:
    if not settings.teams_enabled:
        return "not configured (set MicrosoftAppId and MicrosoftAppPassword)"
    if settings.teams_emulator:
        return "emulator mode on /api/messages (no MicrosoftAppId: unauthenticated, loopback only)"
    return f"app {settings.teams_app_id} ({settings.teams_app_type}) on /api/messages"


def _teams_package(settings: Settings, args: argparse.Namespace) -> int:
    from pathlib import Path

    from adapters.teams import build_package

    if not settings.teams_app_id:
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
        app_id=settings.teams_app_id,
        name=args.name,
        developer=args.developer,
        website=args.website,
    )
    print(f"wrote {out}: upload it in Teams (Apps > Manage your apps > Upload an app)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
