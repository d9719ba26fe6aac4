"""docs/pictures/teams/: a picture of each kind of Teams card, drawn by Microsoft's renderer from
the card the code draws today. Each PNG has a sidecar JSON of that card; a card that changed
fails here until the pictures are drawn again (the command is in the failure)."""

from __future__ import annotations

import json
import os

from tests.adapters.teams._catalogue import PICTURED
from tests.adapters.teams.conftest import ROOT, open_renderer, require_renderer

PICTURES = ROOT / "docs" / "pictures" / "teams"
PAGE = ROOT / "docs" / "pictures.md"
REDRAW = "BOT_WRITE_PICTURES=1 .venv/bin/python -m pytest tests/adapters/teams/test_pictures.py"


def _sidecar(card: dict[str, object]) -> str:
    return json.dumps(card, indent=2, ensure_ascii=False, sort_keys=True) + "\n"


async def test_the_docs_pictures_show_the_cards_the_code_draws() -> None:
    """Each picture's sidecar is the card drawn now, and the docs page shows every picture;
    with BOT_WRITE_PICTURES=1 the renderer draws them all again first."""
    cards = {name: _sidecar(build()) for name, build in PICTURED.items()}
    if os.environ.get("BOT_WRITE_PICTURES") == "1":
        require_renderer()
        PICTURES.mkdir(parents=True, exist_ok=True)
        async with open_renderer() as renderer:
            for name, build in PICTURED.items():
                await renderer.picture(build(), PICTURES / f"{name}.png")
                (PICTURES / f"{name}.json").write_text(cards[name], encoding="utf-8")
    stale = [
        name
        for name, drawn in cards.items()
        if not (PICTURES / f"{name}.png").exists()
        or not (PICTURES / f"{name}.json").exists()
        or (PICTURES / f"{name}.json").read_text(encoding="utf-8") != drawn
    ]
    assert not stale, f"the Teams pictures {stale} no longer match the code; run: {REDRAW}"
    kept = {path.stem for path in PICTURES.glob("*.png")}
    assert kept == set(cards), f"pictures of no card: {sorted(kept - set(cards))}"
    page = PAGE.read_text(encoding="utf-8")
    unshown = [name for name in cards if f"pictures/teams/{name}.png" not in page]
    assert not unshown, f"docs/pictures.md does not show {unshown}"
