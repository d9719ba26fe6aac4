"""The console's settings: whether it is on, who signs in to it, and its request limits.

The accounts are checked here, at start, so a bad ``BOT_CONSOLE_USERS``
entry is one line naming it, never a failed sign-in later. Whether a
public bind is guarded by them spans the serving settings too, so that
check is made where the settings are composed (``bot.app.settings``).
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator, Field, SecretStr, model_validator

from adapters.console._streams import ConsoleLimits
from bot.component_settings import ComponentSettings, Hidden, Secret

MIN_PASSWORD = 12
OPERATOR = "operator"
_USER_NAME = re.compile(r"^[A-Za-z0-9._-]{1,40}$")
# Or a plain address, the name of the person an email route's links are for: who signs in
# as it is that recipient on an answer link's page under BOT_LINK_SIGNIN (``bot.api._page``).
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
_ADDRESS = re.compile(rf"^[A-Za-z0-9_+-]+(?:\.[A-Za-z0-9_+-]+)*@{_LABEL}(?:\.{_LABEL})+$")
MAX_ADDRESS = 254


def is_console_user_name(name: str) -> bool:
    """Letters, digits, ``.``, ``_`` and ``-`` (at most 40), or a plain email address."""
    if _USER_NAME.fullmatch(name):
        return True
    return len(name) <= MAX_ADDRESS and bool(_ADDRESS.fullmatch(name))


def parse_console_users(text: str) -> dict[str, str]:
    """``name:password,name:password`` -> {name: password}, or ValueError naming the problem."""
    users: dict[str, str] = {}
    for entry in (item.strip() for item in text.split(",")):
        name, colon, password = entry.partition(":")
        if not colon or not is_console_user_name(name):
            raise ValueError(
                "write name:password,name:password with names of letters, digits, . _ or -, "
                "or a plain email address such as ana@example.com"
            )
        if len(password) < MIN_PASSWORD:
            raise ValueError(f"the password of {name} must be at least {MIN_PASSWORD} characters")
        if name in users:
            raise ValueError(f"{name} is listed twice")
        users[name] = password
    return users


def _named_and_long(value: SecretStr | None) -> SecretStr | None:
    if value is not None:
        parse_console_users(value.get_secret_value())
    return value


def _passwords(text: str) -> list[str]:
    return list(parse_console_users(text).values())


# Its own check instead of the blank one; each password is hidden on its own.
ConsoleUsers = Annotated[SecretStr | None, AfterValidator(_named_and_long), Hidden(_passwords)]


class ConsoleSettings(ComponentSettings):
    """The console page: on or off, its sign-in accounts, and what one client may hold open."""

    enabled: bool = Field(True, alias="BOT_CONSOLE")
    password: Secret = Field(None, alias="BOT_CONSOLE_PASSWORD")
    users: ConsoleUsers = Field(None, alias="BOT_CONSOLE_USERS")
    max_json_depth: int = Field(32, alias="BOT_MAX_JSON_DEPTH", ge=2, le=200)
    max_event_streams: int = Field(200, alias="BOT_MAX_EVENT_STREAMS", ge=1)
    max_event_streams_per_client: int = Field(8, alias="BOT_MAX_EVENT_STREAMS_PER_CLIENT", ge=1)
    answers_per_minute: int = Field(60, alias="BOT_CONSOLE_ANSWERS_PER_MINUTE", ge=1)

    @model_validator(mode="after")
    def _password_is_long(self) -> ConsoleSettings:
        password = self.password
        if password is not None and len(password.get_secret_value()) < MIN_PASSWORD:
            raise ValueError(f"BOT_CONSOLE_PASSWORD must be at least {MIN_PASSWORD} characters")
        return self

    @property
    def locked(self) -> bool:
        """Someone must sign in: per-person users or the shared password are set."""
        return self.users is not None or self.password is not None

    def accounts(self) -> dict[str, str] | None:
        """Who may sign in: the users, or the shared password as ``operator``; None if neither."""
        if self.users is not None:
            return parse_console_users(self.users.get_secret_value())
        if self.password is not None:
            return {OPERATOR: self.password.get_secret_value()}
        return None

    @property
    def limits(self) -> ConsoleLimits:
        return ConsoleLimits(
            max_json_depth=self.max_json_depth,
            max_streams=self.max_event_streams,
            max_streams_per_client=self.max_event_streams_per_client,
            answers_per_minute=self.answers_per_minute,
        )
