"""``python -m bot admin …``: the admin commands from the operator's shell.

The operator is trusted as whoever runs the process on the host with the
store's credentials: the actor is ``shell:<os user>``, audited like any
other admin. No RunService runs here, so a cancel spends the token in the
store and the serving process's next sweep resumes the run and delivers the
edits (within ``BOT_SWEEP_SECONDS``).
"""

from __future__ import annotations

import getpass
import sys
from collections.abc import Sequence
from typing import TextIO

from bot.admin import AdminService, json_text, ok, text_of
from bot.app.settings import Settings
from bot.service.outcomes import Responder

USAGE = "usage: python -m bot admin [--json] <command> [arguments]  (try: help)"


def shell_responder() -> Responder:
    user = getpass.getuser()
    return Responder(id=f"shell:{user}", name=user, is_admin=True)


async def run_admin(settings: Settings, argv: Sequence[str], *, out: TextIO = sys.stdout) -> int:
    """Run one command; 0 when it did what was asked, 1 when it was refused."""
    words = list(argv)
    as_json = "--json" in words
    words = [w for w in words if w != "--json"]
    stores = await settings.store.open()
    try:
        admin = AdminService(
            stores=stores,
            admins=settings.admin.ids,
            max_ttl_seconds=settings.ttl.max_seconds,
            policy=settings.policy.build(admins=settings.admin.ids),
        )
        result = await admin.handle(words, who=shell_responder())
    finally:
        await stores.close()
    if as_json:
        print(json_text(result), file=out)
    else:
        print(text_of(result), file=out)
    return 0 if ok(result) else 1
