"""``python -m bot api-key create|list|revoke``: keys for the agents API, kept as hashes.

``create`` prints the key once; the store keeps only its SHA-256, so a
lost key is revoked and made again, never shown.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any, TextIO

from bot.api import (
    NO_ROUTES,
    check_creates_per_minute,
    check_name,
    check_route,
    hash_key,
    new_key,
    new_key_id,
)
from bot.app.settings import Settings
from bot.cli.admin import shell_responder
from bot.questions.records import ApiKey
from bot.stores import Audit, AuditEvent

NO_KEYS = "no keys: make one with api-key create NAME --route ROUTE, or list them in BOT_API_KEYS"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", metavar="action", required=True)
    create = actions.add_parser("create", help="make a key, print it once, keep its hash")
    create.add_argument("name", help="who uses it, e.g. ci (letters, digits, - _ .)")
    create.add_argument(
        "--route",
        action="append",
        default=None,
        help="a route it may post to (slack:C123, console:*, or * for everywhere); repeat; "
        "at least one",
    )
    create.add_argument(
        "--creates-per-minute",
        type=int,
        default=None,
        metavar="N",
        help="questions it may create a minute (default: BOT_API_CREATES_PER_MINUTE)",
    )
    create.add_argument(
        "--replace",
        action="store_true",
        help="revoke a stored key of the same name first (a setup that is run again)",
    )
    actions.add_parser("list", help="list the keys (names, routes and ids, never the keys)")
    revoke = actions.add_parser("revoke", help="forget a key: its requests get 401 at once")
    revoke.add_argument("name")


async def run_api_key(
    settings: Settings, args: argparse.Namespace, *, out: TextIO = sys.stdout
) -> int:
    """Run one action; 0 when done, 1 when refused (the reason on stderr)."""
    try:
        if args.action == "create":
            check_name(args.name)
            if not args.route:
                example = "--route slack:C123 --route console:ops"
                raise ValueError(NO_ROUTES.format(name=args.name, example=example))
            routes = tuple(check_route(route) for route in args.route)
            rate = args.creates_per_minute
            if rate is not None:
                check_creates_per_minute(rate)
    except ValueError as bad:
        print(f"api-key: {bad}", file=sys.stderr)
        return 1
    configured = {key.name for key in settings.api.configured_keys()}
    stores = await settings.store.open()
    try:
        records = stores.api
        match args.action:
            case "create":
                if args.name in configured:
                    print(
                        f"api-key: {args.name!r} is a key in BOT_API_KEYS already", file=sys.stderr
                    )
                    return 1
                replaced = args.replace and await records.revoke_key(args.name)
                key = new_key()
                kept = ApiKey(
                    args.name,
                    hash_key(key),
                    routes,
                    time.time(),
                    creates_per_minute=rate,
                    key_id=new_key_id(),
                )
                if not await records.add_key(kept):
                    print(
                        f"api-key: a key named {args.name!r} exists; revoke it first "
                        "(or pass --replace)",
                        file=sys.stderr,
                    )
                    return 1
                print(key, file=out)
                detail = {"name": args.name, "key_id": kept.key_id, "routes": list(routes)}
                await _audit(stores.audit, "api-key-created", {**detail, "replaced": replaced})
                if replaced:
                    print(
                        f"# revoked the earlier key named {args.name}: requests with it get "
                        "401 now",
                        file=sys.stderr,
                    )
                per_minute = settings.api.creates_per_minute if rate is None else rate
                print(
                    f"# {args.name} ({kept.key_id}): routes {' '.join(routes)}; questions at "
                    f"{per_minute} a minute. Shown once; only its hash is kept.",
                    file=sys.stderr,
                )
            case "list":
                kept_keys = await records.keys()
                listed_keys = settings.api.configured_keys()
                default = settings.api.creates_per_minute
                for each, where in [(k, "store") for k in kept_keys] + [
                    (k, "BOT_API_KEYS") for k in listed_keys
                ]:
                    each_rate = each.creates_per_minute or default
                    routes_text = " ".join(each.routes)
                    print(
                        f"{each.name}\t{routes_text}\t{each_rate}/minute\t({where})\t{each.key_id}",
                        file=out,
                    )
                if not kept_keys and not listed_keys:
                    # On stderr, so a script reading the list still reads an empty one.
                    print(NO_KEYS, file=sys.stderr)
            case "revoke":
                if not await records.revoke_key(args.name):
                    where = (
                        " (it is in BOT_API_KEYS: remove it there)"
                        if args.name in configured
                        else ""
                    )
                    print(f"api-key: no stored key named {args.name!r}{where}", file=sys.stderr)
                    return 1
                await _audit(stores.audit, "api-key-revoked", {"name": args.name})
                print(f"revoked {args.name}", file=out)
    finally:
        await stores.close()
    return 0


async def _audit(audit: Audit, kind: str, detail: dict[str, Any]) -> None:
    """A key made or revoked, by the shell's user, in the audit's chain (never the key)."""
    who = shell_responder()
    await audit.append(AuditEvent(time.time(), kind, actor=who.id, detail=detail))
