"""``python -m bot audit export|verify|checkpoint|public-key``: the tamper-evident audit.

``export`` writes JSON lines to stdout a page at a time (constant memory);
``verify FILE`` reads an export with only the public keys (from
``BOT_SIGNING_KEYS``, the generated key file, or ``--public-key``) and never
opens ``DATABASE_URL``; ``verify --store`` checks the store's own chains.
Exit 0 when intact, 1 when not (naming the first bad line), 2 when it cannot run.
"""

from __future__ import annotations

import argparse
import datetime
import sys
from pathlib import Path
from typing import TextIO

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from bot.app.audit import audit_keys, checkpoint
from bot.app.settings import Settings
from bot.audit import (
    AuditKeyError,
    Intact,
    Verdict,
    Verifier,
    canonical,
    checkpoint_keys,
    parse_public_keys,
    public_keys,
    verify,
)
from bot.human.signing import KEY_FILE, SigningSettings
from bot.human.tokens import SigningConfigError, parse_signing_keys

_DAY = datetime.timedelta(days=1)


def _date(text: str) -> datetime.datetime:
    try:
        day = datetime.date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date: use YYYY-MM-DD (UTC)") from None
    return datetime.datetime(day.year, day.month, day.day, tzinfo=datetime.UTC)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", metavar="action", required=True)
    export = actions.add_parser(
        "export", help="write the checkpoints and the events' chains as JSON lines to stdout"
    )
    export.add_argument(
        "--since", type=_date, help="chains with an event on or after this day (YYYY-MM-DD, UTC)"
    )
    export.add_argument(
        "--until", type=_date, help="chains with an event on or before this day (YYYY-MM-DD, UTC)"
    )
    export.add_argument("--question", metavar="ID", help="the chain of one question (or run)")
    verify_parser = actions.add_parser(
        "verify", help="check an export (FILE) or the store (--store): intact, or the first fault"
    )
    verify_parser.add_argument("file", nargs="?", type=Path, help="an export's JSON lines")
    verify_parser.add_argument(
        "--store", action="store_true", help="check the configured store instead of a file"
    )
    verify_parser.add_argument(
        "--public-key",
        action="append",
        default=[],
        metavar="KID:KEY",
        help="a checkpoint key (`audit public-key` prints them); repeat; default: derived from "
        "BOT_SIGNING_KEYS",
    )
    verify_parser.add_argument(
        "--partial",
        action="store_true",
        help="the file was exported with --since, --until or --question: chains and earlier "
        "checkpoints outside it are not missing",
    )
    actions.add_parser("checkpoint", help="sign a checkpoint of the chains now")
    actions.add_parser(
        "public-key", help="print the checkpoint keys' public halves (KID:KEY), for verify"
    )


def wants_store(args: argparse.Namespace) -> bool:
    """Every action but ``verify FILE`` needs the settings and the store."""
    return not (args.action == "verify" and not args.store)


def verify_file(args: argparse.Namespace, *, out: TextIO = sys.stdout) -> int:
    """``audit verify FILE``: the file and the public keys only."""
    if args.file is None:
        print("audit verify: name an export FILE, or pass --store", file=sys.stderr)
        return 2
    try:
        keys = _public_keys(args.public_key)
        with args.file.open(encoding="utf-8") as lines:
            verdict = verify(lines, keys, partial=args.partial)
    except (AuditKeyError, SigningConfigError) as error:
        print(f"audit verify: {error}", file=sys.stderr)
        return 2
    except (OSError, UnicodeDecodeError) as error:
        print(f"audit verify: cannot read {args.file}: {error}", file=sys.stderr)
        return 2
    return _told(verdict, out)


def _public_keys(given: list[str]) -> dict[str, Ed25519PublicKey]:
    if given:
        return parse_public_keys(given)
    signing = SigningSettings()
    if signing.keys is not None:
        keys = parse_signing_keys(signing.keys.get_secret_value())
    elif (signing.data_dir / KEY_FILE).is_file():
        keys = parse_signing_keys((signing.data_dir / KEY_FILE).read_text().strip())
    else:
        raise AuditKeyError(
            "no keys to check the checkpoints with: set BOT_SIGNING_KEYS, or pass --public-key "
            "(printed by `python -m bot audit public-key` where the bridge runs)"
        )
    return public_keys(checkpoint_keys([(key.kid, str(key.signing)) for key in keys]))


def _told(verdict: Verdict, out: TextIO) -> int:
    print(verdict.sentence(), file=out)
    return 0 if isinstance(verdict, Intact) else 1


async def run_audit(
    settings: Settings, args: argparse.Namespace, *, out: TextIO = sys.stdout
) -> int:
    keys = audit_keys(settings.signing, shared_store=settings.store.shared)
    if args.action == "public-key":
        for key in keys:
            print(key.public_text(), file=out)
        return 0
    stores = await settings.store.open()
    try:
        chain = stores.audit_chain
        match args.action:
            case "export":
                since = args.since.timestamp() if args.since else None
                until = (args.until + _DAY).timestamp() if args.until else None
                lines = chain.export(since=since, until=until, question=args.question)
                async for line in lines:
                    out.write(canonical(line).decode())
                    out.write("\n")
            case "checkpoint":
                signed = await checkpoint(chain, keys[0])
                if signed is None:
                    print("audit checkpoint: not signed (see the log line above)", file=sys.stderr)
                    return 1
                print(f"checkpoint {signed['seq']} signed {len(signed['heads'])} chains", file=out)
            case "verify":
                verifier = Verifier(public_keys(keys))
                async for line in chain.export():
                    verifier.feed(canonical(line).decode())
                return _told(verifier.verdict(), out)
    finally:
        await stores.close()
    return 0
