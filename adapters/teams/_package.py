"""The Teams app package: manifest (schema 1.17), two generated icons, one zip.

Icons are drawn here (a PNG encoder in a few lines) so the package needs no
image files or libraries: a 192x192 colour icon and a 32x32 outline icon
that is white on transparent, as Teams requires.
"""

from __future__ import annotations

import io
import json
import math
import struct
import zipfile
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

MANIFEST_VERSION = "1.17"
MANIFEST_SCHEMA = (
    "https://developer.microsoft.com/en-us/json-schemas/teams/"
    f"v{MANIFEST_VERSION}/MicrosoftTeams.schema.json"
)
ACCENT = (0x4F, 0x6B, 0xED)
SCOPES = ["personal", "team", "groupChat"]
# The demo agent's commands; Teams suggests them in the compose box.
DEFAULT_COMMANDS = (
    ("deploy web", "Deploy a service; asks which environment, then for approval."),
    ("roll back api", "Roll a service back to its previous release, after approval."),
    ("status worker", "Show a service's versions and health."),
)

Pixel = tuple[int, int, int, int]


def build_package(
    out: Path,
    *,
    app_id: str,
    name: str,
    developer: str,
    website: str,
    commands: Sequence[tuple[str, str]] = DEFAULT_COMMANDS,
    version: str = "1.0.0",
) -> Path:
    """Write the zip Teams accepts as a custom app upload; returns its path."""
    manifest = build_manifest(
        app_id=app_id,
        name=name,
        developer=developer,
        website=website,
        commands=commands,
        version=version,
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("manifest.json", json.dumps(manifest, indent=2))
        archive.writestr("color.png", color_icon())
        archive.writestr("outline.png", outline_icon())
    return out


def build_manifest(
    *,
    app_id: str,
    name: str,
    developer: str,
    website: str,
    commands: Sequence[tuple[str, str]],
    version: str,
) -> dict[str, Any]:
    website = website.rstrip("/")
    return {
        "$schema": MANIFEST_SCHEMA,
        "manifestVersion": MANIFEST_VERSION,
        "version": version,
        "id": app_id,
        "developer": {
            "name": developer[:32],
            "websiteUrl": website,
            "privacyUrl": f"{website}/privacy",
            "termsOfUseUrl": f"{website}/terms",
        },
        "name": {"short": name[:30], "full": f"{name} (human-in-the-loop agent)"[:100]},
        "description": {
            "short": "An agent that asks before it acts, and waits for your answer."[:80],
            "full": (
                "Message the bot (or @mention it in a channel or group chat) to start a run. "
                "When the agent needs a decision it posts a card; answer it and the run "
                "resumes. Questions expire, and only the person who asked (or an approver) "
                "may answer."
            ),
        },
        "icons": {"color": "color.png", "outline": "outline.png"},
        "accentColor": "#{:02X}{:02X}{:02X}".format(*ACCENT),
        "bots": [
            {
                "botId": app_id,
                "scopes": SCOPES,
                "supportsFiles": False,
                "isNotificationOnly": False,
                "commandLists": command_lists(commands),
            }
        ],
        "permissions": ["identity", "messageTeamMembers"],
        "validDomains": [],
    }


# Admin commands (bot.admin) work in a personal chat with the bot.
ADMIN_COMMANDS = (
    ("pending", "Admins: open questions, who asked, who may answer, expiry."),
    ("show", "Admins: show <question-id>: payload, status, history, deliveries."),
    ("cancel", "Admins: cancel <question-id> [reason]; the run resumes cancelled."),
    ("resend", "Admins: resend <question-id>: post the question again."),
    ("extend", "Admins: extend <question-id> <duration, e.g. 2h>."),
    ("stats", "Admins: issued, answered, expired, refusals, time to answer."),
    ("audit", "Admins: audit <run-id>: the run's events in order."),
)
MAX_COMMANDS = 10


def command_lists(commands: Sequence[tuple[str, str]]) -> list[dict[str, Any]]:
    """The compose-box suggestions: the agent's commands everywhere, and in a personal
    chat the admin commands after them (Teams shows ten per list at most)."""
    shared = [s for s in SCOPES if s != "personal"]
    personal = [*list(commands)[: MAX_COMMANDS - 3], *ADMIN_COMMANDS][:MAX_COMMANDS]
    lists = [{"scopes": ["personal"], "commands": _commands(personal)}]
    if shared:
        lists.append({"scopes": shared, "commands": _commands(list(commands)[:MAX_COMMANDS])})
    return lists


def _commands(commands: Sequence[tuple[str, str]]) -> list[dict[str, str]]:
    return [
        {"title": title[:32], "description": description[:128]} for title, description in commands
    ]


def color_icon() -> bytes:
    """192x192: a white check mark in a ring on the accent colour."""
    return png(192, 192, lambda x, y: _glyph(x / 192, y / 192, (*ACCENT, 255)))


def outline_icon() -> bytes:
    """32x32: the same glyph, white on transparent."""
    return png(32, 32, lambda x, y: _glyph(x / 32, y / 32, (0, 0, 0, 0)))


def _glyph(u: float, v: float, background: Pixel) -> Pixel:
    white = (255, 255, 255, 255)
    radius = math.hypot(u - 0.5, v - 0.5)
    if 0.33 <= radius <= 0.42:
        return white
    # The check: two strokes, (0.32,0.52)->(0.45,0.65)->(0.70,0.38).
    if _near(u, v, (0.32, 0.52), (0.45, 0.65)) or _near(u, v, (0.45, 0.65), (0.70, 0.38)):
        return white
    return background


def _near(u: float, v: float, a: tuple[float, float], b: tuple[float, float]) -> bool:
    (ax, ay), (bx, by) = a, b
    t = max(
        0.0,
        min(1.0, ((u - ax) * (bx - ax) + (v - ay) * (by - ay)) / ((bx - ax) ** 2 + (by - ay) ** 2)),
    )
    return math.hypot(u - (ax + t * (bx - ax)), v - (ay + t * (by - ay))) <= 0.045


def png(width: int, height: int, pixel: Callable[[int, int], Pixel]) -> bytes:
    """An 8-bit RGBA PNG, unfiltered rows."""
    rows = b"".join(
        b"\x00" + b"".join(bytes(pixel(x, y)) for x in range(width)) for y in range(height)
    )

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    buffer = io.BytesIO()
    buffer.write(b"\x89PNG\r\n\x1a\n")
    buffer.write(chunk(b"IHDR", header))
    buffer.write(chunk(b"IDAT", zlib.compress(rows, 9)))
    buffer.write(chunk(b"IEND", b""))
    return buffer.getvalue()
