"""Which ``Host`` (and ``Origin``) a request may name: the defence against DNS rebinding.

A page on an attacker's domain can make the browser resolve that domain to
127.0.0.1 and talk to the bot as if it were same-origin; the request then
carries the attacker's host name. Accepting only names we chose closes it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from yarl import URL

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")
_DEFAULT_PORTS = {"http": 80, "https": 443}


@dataclass(frozen=True, slots=True)
class AllowedHosts:
    """Host names with their port; a port of None accepts the name with no port or 80/443.

    ``schemes`` says which scheme an ``Origin`` must have for an entry: the
    loopback names are served over http only, a public URL's name over its
    own scheme; an entry named there by nothing else may be either.
    """

    entries: frozenset[tuple[str, int | None]]
    schemes: frozenset[tuple[str, int | None, str]] = frozenset()
    _spellings: frozenset[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_spellings", frozenset(self.names()))

    @classmethod
    def loopback(cls, port: int, *, extra: Iterable[str] = ()) -> AllowedHosts:
        names = {(name, port) for name in LOOPBACK_NAMES}
        # The server itself speaks plain http; https://127.0.0.1 is some other server.
        schemes = frozenset((name, port, "http") for name, port in names)
        return cls(frozenset(names | {_entry(item) for item in extra}), schemes)

    @classmethod
    def public(cls, public_url: str | None, extra: Iterable[str] = ()) -> AllowedHosts:
        names = {_entry(item) for item in extra}
        schemes: set[tuple[str, int | None, str]] = set()
        if public_url:
            url = URL(public_url)
            if url.host:
                explicit = url.explicit_port
                names.add((url.host.lower(), explicit))
                if url.scheme in _DEFAULT_PORTS:
                    schemes.add((url.host.lower(), explicit, url.scheme))
        return cls(frozenset(names), frozenset(schemes))

    def merged(self, other: AllowedHosts) -> AllowedHosts:
        """Both sets of names, each with the schemes it was given."""
        return AllowedHosts(self.entries | other.entries, self.schemes | other.schemes)

    def names(self) -> list[str]:
        """The entries as ``name[:port]`` strings, IPv6 in brackets."""
        shown = []
        for name, port in sorted(self.entries, key=lambda e: (e[0], e[1] or 0)):
            host = f"[{name}]" if ":" in name else name
            shown.append(f"{host}:{port}" if port is not None else host)
        return shown

    def allows_host(self, header: str) -> bool:
        """The request's ``Host`` header names one of ours (with our port)."""
        if header in self._spellings:
            return True  # the usual case, without parsing: every request pays for this
        parsed = _split(header)
        return parsed is not None and self._match(*parsed)

    def allows_origin(self, origin: str) -> bool:
        """An ``Origin`` header is one of ours; ``null`` and garbage are not."""
        try:
            url = URL(origin)
        except ValueError:
            return False
        if not url.absolute or url.host is None or url.scheme not in _DEFAULT_PORTS:
            return False
        entry = self._entry_for(url.host.lower(), url.explicit_port)
        if entry is None:
            return False
        wanted = {scheme for name, port, scheme in self.schemes if (name, port) == entry}
        return not wanted or url.scheme in wanted

    def _match(self, name: str, port: int | None) -> bool:
        return self._entry_for(name, port) is not None

    def _entry_for(self, name: str, port: int | None) -> tuple[str, int | None] | None:
        if (name, port) in self.entries:
            return name, port
        # An entry without a port matches the bare name or the default ports.
        if (name, None) in self.entries and (port is None or port in (80, 443)):
            return name, None
        return None


def _entry(item: str) -> tuple[str, int | None]:
    parsed = _split(item.strip())
    if parsed is None:
        raise ValueError(f"{item!r} is not a host name or host:port")
    return parsed


def _split(header: str) -> tuple[str, int | None] | None:
    """``name[:port]`` or ``[v6][:port]`` -> (lowercase name, port), None if malformed."""
    text = header.strip().lower()
    if not text or any(ch in text for ch in "/?#@ \t"):
        return None
    if text.startswith("["):
        name, bracket, rest = text[1:].partition("]")
        if not bracket or (rest and not rest.startswith(":")):
            return None
        port_text = rest[1:] if rest else ""
    else:
        name, colon, port_text = text.rpartition(":") if ":" in text else (text, "", "")
        if colon and ":" in name:
            return None  # an unbracketed IPv6 literal is not a valid Host
    if not name:
        return None
    if not port_text:
        return name, None
    if not port_text.isdigit() or not 0 < int(port_text) < 65536:
        return None
    return name, int(port_text)
