"""Fixtures of the LangGraph tests: the real app on loopback with the console open to the
API's questions, and an HTTP client for the console page."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from tests.doors._doors import Door
from tests.e2e._api import api_env


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30)) as session:
        yield session


@pytest.fixture
async def door(tmp_path: Path) -> AsyncIterator[Door]:
    async with Door(tmp_path, **api_env("console:*")) as served:
        yield served
