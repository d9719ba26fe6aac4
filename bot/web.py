"""Typed keys for what the composition root puts on the aiohttp application."""

from __future__ import annotations

from typing import TYPE_CHECKING

from aiohttp import web

from bot.admin import AdminService
from bot.service.runs import RunService

if TYPE_CHECKING:
    # Only a type here: the settings import the adapters, whose modules import these keys.
    from bot.config import Settings

RUN_SERVICE = web.AppKey("run_service", RunService)
SETTINGS: web.AppKey[Settings] = web.AppKey("settings")
ADMIN_SERVICE = web.AppKey("admin_service", AdminService)
