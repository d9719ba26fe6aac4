"""``python -m bot data rekey``: the store's encrypted content moved onto the first data key.

Run beside a serving bridge after putting a new key first in
``BOT_DATA_KEYS`` (the old one still listed): each batch is one short
transaction, so questions are asked and answered meanwhile. When it says so,
every sealed row is under the first key and the others may be dropped.
"""

from __future__ import annotations

import sys
from typing import TextIO

from bot.app.settings import Settings


async def rekey(settings: Settings, *, out: TextIO = sys.stdout) -> int:
    """Move every row; 0 when done, 2 without BOT_DATA_KEYS (the reason on stderr)."""
    keyring = settings.store.keyring
    if keyring is None:
        print(
            "configuration error: BOT_DATA_KEYS is not set: there is no key to rekey onto; "
            "generate one with `python -m bot keygen --data`",
            file=sys.stderr,
        )
        return 2
    stores = await settings.store.open()
    try:
        moved = await stores.rekey.all()
    finally:
        await stores.close()
    print(
        f"rekeyed {moved} values; every encrypted row is under data key {keyring.current!r}",
        file=out,
    )
    return 0
