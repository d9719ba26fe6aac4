"""The app package: a schema 1.17 manifest with the bot and its commands, two valid PNGs."""

from __future__ import annotations

import json
import struct
import zipfile
import zlib
from pathlib import Path

from adapters.teams import build_package

APP_ID = "11111111-2222-3333-4444-555555555555"


def _decode_png(data: bytes) -> tuple[int, int, list[bytes]]:
    """Width, height and RGBA rows, checking the signature and every chunk's CRC."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    offset, idat, width, height = 8, b"", 0, 0
    while offset < len(data):
        (length,) = struct.unpack(">I", data[offset : offset + 4])
        kind = data[offset + 4 : offset + 8]
        body = data[offset + 8 : offset + 8 + length]
        (crc,) = struct.unpack(">I", data[offset + 8 + length : offset + 12 + length])
        assert zlib.crc32(kind + body) == crc, kind
        if kind == b"IHDR":
            width, height, depth, color = struct.unpack(">IIBB", body[:10])
            assert (depth, color) == (8, 6)
        elif kind == b"IDAT":
            idat += body
        offset += 12 + length
    raw = zlib.decompress(idat)
    stride = 1 + 4 * width
    rows = [raw[i * stride + 1 : (i + 1) * stride] for i in range(height)]
    assert all(raw[i * stride] == 0 for i in range(height))
    return width, height, rows


def test_package_holds_a_1_17_manifest_with_the_bot_and_its_commands(tmp_path: Path) -> None:
    """manifest.json names the bot by app id, in every scope, with the demo's commands."""
    out = build_package(
        tmp_path / "pkg" / "app.zip",
        app_id=APP_ID,
        name="Ops assistant",
        developer="Ops",
        website="https://bot.example.com/",
    )
    with zipfile.ZipFile(out) as archive:
        manifest = json.loads(archive.read("manifest.json"))
    assert manifest["manifestVersion"] == "1.17"
    assert manifest["$schema"].endswith("/v1.17/MicrosoftTeams.schema.json")
    assert manifest["id"] == APP_ID
    assert manifest["developer"]["privacyUrl"] == "https://bot.example.com/privacy"
    bot = manifest["bots"][0]
    assert bot["botId"] == APP_ID
    assert bot["scopes"] == ["personal", "team", "groupChat"]
    lists = {tuple(c["scopes"]): [m["title"] for m in c["commands"]] for c in bot["commandLists"]}
    assert lists[("team", "groupChat")] == ["deploy web", "roll back api", "status worker"]
    # Admin commands are listed where they work: in a personal chat.
    assert lists[("personal",)] == [
        "deploy web",
        "roll back api",
        "status worker",
        *("pending", "show", "cancel", "resend", "extend", "stats", "audit"),
    ]
    assert manifest["icons"] == {"color": "color.png", "outline": "outline.png"}
    assert len(manifest["name"]["short"]) <= 30
    assert len(manifest["description"]["short"]) <= 80


def test_icons_are_valid_pngs_of_the_required_sizes(tmp_path: Path) -> None:
    """Colour 192x192 opaque; outline 32x32 with only white or transparent pixels."""
    out = build_package(
        tmp_path / "app.zip",
        app_id=APP_ID,
        name="Ops",
        developer="Ops",
        website="https://bot.example.com",
    )
    with zipfile.ZipFile(out) as archive:
        color = _decode_png(archive.read("color.png"))
        outline = _decode_png(archive.read("outline.png"))
    assert color[:2] == (192, 192)
    assert all(row[3::4] == b"\xff" * 192 for row in color[2])
    assert outline[:2] == (32, 32)
    pixels = {bytes(row[i : i + 4]) for row in outline[2] for i in range(0, len(row), 4)}
    assert pixels == {b"\xff\xff\xff\xff", b"\x00\x00\x00\x00"}
