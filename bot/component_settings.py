"""What every component's settings class is built on.

Each component declares the settings it reads beside its own code, and
``bot.app.settings`` composes them; this module is what they share so they read
the environment the same way. A secret is marked by its type (``Secret``,
or ``Hidden`` for one with its own check), so the one declaration is what
refuses a blank value and what the log filter hides: the list of secrets
is the fields so marked, never a list written out elsewhere. A keyring
(``BOT_SIGNING_KEYS``, ``BOT_DATA_KEYS``) is written ``kid:secret,kid:secret``
and read by ``parse_key_list`` for both.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Annotated, Any, TypeVar

from pydantic import AfterValidator, AliasChoices, BeforeValidator, SecretStr
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict


@dataclass(frozen=True, slots=True)
class Hidden:
    """Marks a setting whose value the logs never show.

    ``parts`` also hides each secret a list-valued setting holds, since a
    log line would carry one of them, never the whole setting.
    """

    parts: Callable[[str], Iterable[str]] | None = None

    def values(self, text: str) -> list[str]:
        return [text, *(self.parts(text) if self.parts is not None else ())]


def _not_blank(value: SecretStr | None) -> SecretStr | None:
    if value is not None and not value.get_secret_value().strip():
        raise ValueError("is set but blank; give it a value or unset it")
    return value


def _csv(value: object) -> object:
    if isinstance(value, str):
        return [item.strip() for item in value.split(",") if item.strip()]
    return value


_Key = TypeVar("_Key")


def parse_key_list(
    text: str, variable: str, error: type[Exception], key: Callable[[str, str], _Key]
) -> list[_Key]:
    """The keys of the keyring ``variable``, written ``kid:secret,kid:secret``, in order, each
    made by ``key(kid, secret)`` (which refuses a secret it cannot use); ``error``, one
    sentence naming ``variable``, when an entry has no kid or no secret, or when the list
    names no key or one kid twice."""
    keys: list[_Key] = []
    kids: list[str] = []
    for item in filter(None, (part.strip() for part in text.split(","))):
        kid, sep, secret = item.partition(":")
        if not sep or not kid or not secret:
            raise error(f"{variable} must look like 'kid:secret,kid:secret'; one entry has no ':'.")
        keys.append(key(kid, secret))
        kids.append(kid)
    if not keys:
        raise error(f"{variable} is set but names no key.")
    if len(set(kids)) != len(kids):
        raise error(f"{variable} names the same kid twice.")
    return keys


def key_list_secrets(text: str) -> list[str]:
    """A keyring's secrets (``Hidden``'s parts): a log line would hold one, never the whole."""
    return [key.partition(":")[2].strip() for key in text.split(",")]


NOT_BLANK = AfterValidator(_not_blank)
# A secret setting: refused when set but blank, and hidden from the logs.
Secret = Annotated[SecretStr | None, NOT_BLANK, Hidden()]
# A comma-separated list, read as text (not JSON) and split here.
CsvList = Annotated[list[str], NoDecode, BeforeValidator(_csv)]


class ComponentSettings(BaseSettings):
    """One component's settings; field aliases are the environment variables."""

    model_config = SettingsConfigDict(
        env_file=".env", extra="ignore", populate_by_name=True, frozen=True
    )

    @classmethod
    def variables(cls) -> frozenset[str]:
        """Every environment variable this component reads, aliases included."""
        names: set[str] = set()
        for field in cls.model_fields.values():
            if field.alias:
                names.add(field.alias)
            choices: Any = field.validation_alias
            if isinstance(choices, AliasChoices):
                names.update(choice for choice in choices.choices if isinstance(choice, str))
            elif isinstance(choices, str):
                names.add(choices)
        return frozenset(names)

    @classmethod
    def variable_for(cls, location: tuple[int | str, ...]) -> str:
        """The environment variable an error location points at; '' for the whole model."""
        if not location:
            return ""
        field = cls.model_fields.get(str(location[0]))
        if field is not None and field.alias:
            return field.alias
        return str(location[0])

    def warnings(self) -> list[str]:
        """Settings that start but likely do not do what was meant; one line each."""
        return []

    def secret_values(self) -> list[str]:
        """Each configured secret of this component, lists split into their secrets."""
        found: list[str] = []
        for name, field in type(self).model_fields.items():
            value = getattr(self, name)
            if not isinstance(value, SecretStr):
                continue
            for mark in field.metadata:
                if isinstance(mark, Hidden):
                    found += mark.values(value.get_secret_value())
        return found
