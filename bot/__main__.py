"""`python -m bot` serves; `check` validates configuration; `keygen` prints a signing key."""

from __future__ import annotations

import argparse
import asyncio
import secrets
import sys

from bot.config import Settings, SettingsError, load_settings
from bot.errors import BotError


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bot", description=__doc__)
    parser.add_argument("command", nargs="?", default="serve", choices=("serve", "check", "keygen"))
    command = parser.parse_args(argv).command
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
        return _serve(settings)
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
    print("teams:    not configured")
    return 0


if __name__ == "__main__":
    sys.exit(main())
