"""Typed keys for what the composition root puts on the aiohttp application."""

from __future__ import annotations

from aiohttp import web

from bot.admin import AdminService
from bot.config import Settings
from bot.service.runs import RunService

RUN_SERVICE = web.AppKey("run_service", RunService)
SETTINGS = web.AppKey("settings", Settings)
ADMIN_SERVICE = web.AppKey("admin_service", AdminService)
