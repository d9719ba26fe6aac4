"""Where a callback may point: a public http(s) address, checked when given and when sent.

The check when a URL is given refuses what is plainly wrong and names
whose addresses are private; the resolver checks again at each connection,
because a name can resolve elsewhere by then (DNS rebinding). A literal
address never reaches a resolver, so the sender checks those itself.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from typing import Any

from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.resolver import ThreadedResolver
from yarl import URL

from bot.webhooks._errors import TargetRefused

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
# NAT64 embeds an IPv4 address in its last 32 bits, as IPv4-mapped addresses do.
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
# RFC 1035's limits, in characters of the name as the URL spells it (already IDNA-encoded).
_MAX_NAME = 253
_MAX_LABEL = 63


def is_private(address: Address) -> bool:
    """Loopback, private, link-local, multicast, reserved, unspecified, or not global,
    including the IPv4 address an IPv4-mapped, 6to4 or NAT64 address stands for."""
    if isinstance(address, ipaddress.IPv6Address):
        embedded = address.ipv4_mapped or address.sixtofour
        if embedded is None and address in _NAT64:
            embedded = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
        if embedded is not None and is_private(embedded):
            return True
        if address.is_site_local:
            return True
    return (
        address.is_loopback
        or address.is_private
        or address.is_link_local
        or address.is_multicast
        or address.is_reserved
        or address.is_unspecified
        or not address.is_global
    )


def literal_address(host: str) -> Address | None:
    """The address ``host`` spells, or None for a name."""
    try:
        return ipaddress.ip_address(host.split("%", 1)[0])  # an IPv6 zone names no other host
    except ValueError:
        return None


def shape_problem(url: str, *, allow_private: bool) -> str | None:
    """What is wrong with the URL itself, without asking DNS; None when nothing."""
    try:
        parsed = URL(url)
    except (ValueError, TypeError):
        return "callback_url is not a valid URL; give an absolute http or https URL."
    if parsed.scheme not in ("http", "https"):
        return "callback_url must be an http or https URL."
    host = parsed.raw_host
    if not host:
        return "callback_url must name a host, as in https://example.com/hooks."
    if parsed.raw_user is not None or parsed.raw_password is not None:
        return (
            "callback_url must not carry a user name or password; authenticate the webhook "
            "by its signature instead."
        )
    address = literal_address(host)
    if address is None and host.replace(".", "").isdigit():
        # 2130706433 or 127.1: another spelling of an address, refused by the HTTP client too.
        return "callback_url's host is a number but not a dotted IPv4 address; write it in full."
    if address is not None and not allow_private and is_private(address):
        return _private(host)
    if address is None and not _fits_dns(host):
        # The resolver would fail on it with an encoding error, not a lookup error.
        return (
            "callback_url's host is not a name DNS can hold (at most 253 characters, "
            "1 to 63 between dots); check the name."
        )
    return None


def _fits_dns(name: str) -> bool:
    labels = name.removesuffix(".").split(".")
    return len(name.removesuffix(".")) <= _MAX_NAME and all(
        0 < len(label) <= _MAX_LABEL for label in labels
    )


async def check_target(url: str, *, allow_private: bool) -> str | None:
    """None when a callback may point at ``url``, else one sentence saying why not.

    Unless ``allow_private``, a name is resolved and refused when any of its
    addresses is private; a name that does not resolve is refused too.
    """
    problem = shape_problem(url, allow_private=allow_private)
    if problem is not None or allow_private:
        return problem
    parsed = URL(url)
    host = parsed.raw_host or ""
    if literal_address(host) is not None:
        return None
    try:
        addresses = await _addresses(host, parsed.port or 0)
    except (OSError, UnicodeError):  # UnicodeError: a name the IDNA codec refuses
        return f"callback_url's host {host} does not resolve; check the name."
    if not addresses:
        return f"callback_url's host {host} does not resolve; check the name."
    if any(is_private(address) for address in addresses):
        return _private(host)
    return None


class PublicResolver(AbstractResolver):
    """Resolves as the HTTP client would, then refuses a name with any private address."""

    def __init__(self, inner: AbstractResolver | None = None) -> None:
        self._inner = inner

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        if self._inner is None:
            self._inner = ThreadedResolver()  # needs the running loop
        found = await self._inner.resolve(host, port, family)
        for result in found:
            address = literal_address(result["host"])
            if address is None or is_private(address):
                raise TargetRefused(_private(host.rstrip(".")))
        return found

    async def close(self) -> None:
        if self._inner is not None:
            await self._inner.close()


async def _addresses(host: str, port: int) -> list[Address]:
    infos: list[tuple[Any, ...]] = await asyncio.get_running_loop().getaddrinfo(
        host, port, type=socket.SOCK_STREAM
    )
    found = (literal_address(str(info[4][0])) for info in infos)
    return [address for address in found if address is not None]


def _private(host: str) -> str:
    return (
        f"callback_url's host {host} is a loopback, private or otherwise non-public address; "
        "use a public one (or set BOT_WEBHOOK_ALLOW_PRIVATE=true for a private network)."
    )
