"""The API joined to a running service: its keys, its waiters, the kinds it may ask."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from aiohttp import web

from bot.api._http import API_KEYS, API_QUESTIONS
from bot.api._keys import KeyRing
from bot.api._questions import ApiQuestions
from bot.api._settings import ApiSettings
from bot.api._waiters import Waiters
from bot.approval import approval_registration
from bot.human.factory import ask_user_registration
from bot.service.runs import RunService
from bot.stores.ports import changes_of

CheckCallback = Callable[[str], Awaitable[str | None]]


def serve_api(
    app: web.Application,
    settings: ApiSettings,
    *,
    service: RunService,
    check_callback: CheckCallback,
) -> Callable[[], None]:
    """Make ``/v1`` answer through ``service``; the result stops its change subscription."""
    # The API asks these kinds whatever the agent registered; the agent gets no tool for them.
    for registration in (ask_user_registration(), approval_registration()):
        service.capability.accept(registration)
    waiters = Waiters()
    service.questions.observe(waiters.written)
    app[API_KEYS] = KeyRing(settings.configured_keys(), service.stores.api)
    app[API_QUESTIONS] = ApiQuestions(
        service=service,
        capability=service.capability,
        check_callback=check_callback,
        waiters=waiters,
        clock=service.clock,
    )
    return changes_of(service.stores).subscribe(waiters.changed)
