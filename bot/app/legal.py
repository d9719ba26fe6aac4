"""``/privacy`` and ``/terms``: the pages the Teams app package links to.

Teams requires both links in an app's manifest; these say plainly what this
bridge keeps and on what terms it runs. An organisation with its own pages
points the package's ``--website`` at a site that serves them instead.
"""

from __future__ import annotations

import html

from aiohttp import web

PRIVACY = (
    "Privacy",
    [
        "This bot carries questions from automated agents to people in chat, and their "
        "answers back.",
        "It keeps, in its operator's own database: each conversation's messages, each "
        "question with its answer, who answered it and when, and an audit log of admin "
        "actions. Chat platforms' user ids identify people; no other personal data is "
        "collected.",
        "Nothing is sent anywhere except to the chat platforms the operator configured and, "
        "when configured, the operator's model provider.",
        "To have data removed, ask the team that runs this bot.",
    ],
)
TERMS = (
    "Terms of use",
    [
        "This bot is run by your organisation for its own people; use it as your "
        "organisation's policies allow.",
        "An answer you give may let an automated agent act (for example deploy a service): "
        "answer only questions you are entitled to answer.",
        "The software is provided as is, without warranty of any kind.",
    ],
)


def _page(title: str, paragraphs: list[str]) -> str:
    body = "".join(f"<p>{html.escape(p)}</p>" for p in paragraphs)
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{html.escape(title)}</title></head>"
        f'<body style="font-family: system-ui, sans-serif; max-width: 40rem; margin: 2rem auto; '
        f'padding: 0 1rem; line-height: 1.5"><h1>{html.escape(title)}</h1>{body}</body></html>'
    )


async def privacy(_request: web.Request) -> web.Response:
    return web.Response(text=_page(*PRIVACY), content_type="text/html")


async def terms(_request: web.Request) -> web.Response:
    return web.Response(text=_page(*TERMS), content_type="text/html")


def mount_legal(app: web.Application) -> None:
    app.router.add_get("/privacy", privacy)
    app.router.add_get("/terms", terms)
