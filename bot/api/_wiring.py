"""The API joined to a running service: its keys, waiters, webhooks, the kinds it may ask."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

from aiohttp import web

from bot.api._errors import UNSIGNABLE_CALLBACK
from bot.api._http import API_KEYS, API_QUESTIONS, API_WAITERS
from bot.api._keys import KeyRing
from bot.api._questions import ApiQuestions
from bot.api._settings import ApiSettings
from bot.api._waiters import Waiters
from bot.api._webhooks import ApiWebhooks
from bot.api.links import ANSWER_LINKS, LINK_SURFACE, AnswerLinks, LinkSurface
from bot.contract.decisions import DEFAULT_ALLOW
from bot.human.factory import ask_user_registration
from bot.interactions.approval import approval_registration
from bot.interactions.form import form_registration
from bot.questions import posts
from bot.questions.records import DeliveryKind, DeliveryState, OutboxRow
from bot.service.answering.outcomes import Responder
from bot.service.running.runs import RunService
from bot.stores.ports import changes_of
from bot.webhooks import WebhookSender, WebhookSettings, check_target

# Who cancels a question that could not be posted, as its audit and the chat show it.
BRIDGE = Responder("bridge", "the bridge")


def serve_api(
    app: web.Application,
    settings: ApiSettings,
    webhooks: WebhookSettings,
    *,
    service: RunService,
    approval_allow: Sequence[str] = DEFAULT_ALLOW,
    links: AnswerLinks | None = None,
    link_signin: bool = False,
) -> Callable[[], Awaitable[None]]:
    """Make ``/v1`` answer through ``service``; the result stops what this started.

    ``approval_allow``: the deployment's decisions for an approval that names none.
    ``links`` (by default the app's ``ANSWER_LINKS``, when set) mints the links
    of questions routed to ``link:<id>``, whose surface, posting nothing, is added here;
    ``link_signin`` (``BOT_LINK_SIGNIN``) refuses such questions, which nobody could answer.
    """
    # The API asks these kinds whatever the agent registered; the agent gets no tool for them.
    approval = approval_registration(allow=approval_allow)
    for registration in (ask_user_registration(), approval, form_registration()):
        service.capability.accept(registration)
    stores = service.stores
    waiters = Waiters(service.questions.observe)
    sender = WebhookSender(webhooks) if webhooks.enabled else None
    hooks = ApiWebhooks(sender, stores.api) if sender is not None else None
    service.deliverer.webhooks = hooks

    async def check_callback(url: str) -> str | None:
        if sender is None:
            return UNSIGNABLE_CALLBACK
        return await check_target(url, allow_private=webhooks.allow_private)

    async def unpostable(delivery: OutboxRow, reason: str) -> None:
        # An agent must not wait out a TTL on a message nobody can see; a question
        # on several routes stays open while one of its posts stands or may still.
        view = await stores.api.get(delivery.interrupt_id)
        if view is None:
            return
        if view.question.posts and (
            posts.posted_anywhere(view.question)
            or any(
                d.kind is DeliveryKind.PUBLISH
                and d.interrupt_id == delivery.interrupt_id
                and d.state is DeliveryState.PENDING
                for d in await stores.outbox.of_run(delivery.run_id)
            )
        ):
            return
        await service.cancel(delivery.interrupt_id, by=BRIDGE, reason=reason)

    service.deliverer.unpostable = unpostable
    app[API_KEYS] = KeyRing(settings.configured_keys(), stores.api)
    app[API_QUESTIONS] = ApiQuestions(
        service=service,
        capability=service.capability,
        check_callback=check_callback,
        waiters=waiters,
        clock=service.clock,
        links=links if links is not None else app.get(ANSWER_LINKS),
        link_signin=link_signin,
    )
    if LINK_SURFACE not in service.surfaces:
        service.add_surface(LinkSurface())
    unsubscribe = changes_of(stores).subscribe(waiters.changed)
    app[API_WAITERS] = waiters
    service.metrics.api_waiting.set_function(lambda: len(waiters))

    async def stop() -> None:
        unsubscribe()
        if hooks is not None:
            await hooks.close()

    return stop
