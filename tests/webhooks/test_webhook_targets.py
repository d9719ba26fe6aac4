"""Callback targets: only public http(s) addresses, checked when given and at each connection."""

from __future__ import annotations

import ipaddress
import socket

import pytest
from aiohttp.abc import AbstractResolver, ResolveResult

from bot.webhooks import PublicResolver, TargetRefused, check_target, is_private

PRIVATE = [
    "http://127.0.0.1/hooks",
    "http://127.8.9.10:8080/hooks",
    "https://10.1.2.3/hooks",
    "http://172.16.0.1/",
    "http://192.168.1.1/",
    "http://169.254.169.254/latest/meta-data/",
    "http://0.0.0.0/",
    "http://100.64.0.1/",  # shared address space (carrier NAT)
    "http://224.0.0.1/",
    "http://240.0.0.1/",
    "http://[::1]/hooks",
    "http://[::]/",
    "http://[::ffff:127.0.0.1]/hooks",
    "http://[::ffff:10.0.0.1]/",
    "http://[2002:7f00:1::]/",  # 6to4 of 127.0.0.1
    "http://[2002:a9fe:a9fe::]/",  # 6to4 of 169.254.169.254
    "http://[64:ff9b::a00:1]/",  # NAT64 of 10.0.0.1
    "http://[fe80::1]/",
    "http://[fc00::1]/",
    "http://[ff02::1]/",
    "http://localhost:9000/hooks",  # a name that resolves to loopback
]


@pytest.mark.parametrize("url", PRIVATE)
async def test_a_private_target_is_refused_unless_allowed(url: str) -> None:
    refused = await check_target(url, allow_private=False)
    assert refused is not None
    assert "non-public address" in refused and "BOT_WEBHOOK_ALLOW_PRIVATE=true" in refused
    assert await check_target(url, allow_private=True) is None


@pytest.mark.parametrize("url", ["https://8.8.8.8/hooks", "http://[2606:4700::1111]/x"])
async def test_a_public_address_is_a_fine_target(url: str) -> None:
    assert await check_target(url, allow_private=False) is None


@pytest.mark.parametrize(
    ("url", "sentence"),
    [
        ("ftp://example.com/hooks", "callback_url must be an http or https URL."),
        ("file:///etc/passwd", "callback_url must be an http or https URL."),
        ("/hooks", "callback_url must be an http or https URL."),
        ("http:///hooks", "callback_url must name a host, as in https://example.com/hooks."),
        (
            "https://user:pass@example.com/hooks",
            "callback_url must not carry a user name or password; authenticate the webhook "
            "by its signature instead.",
        ),
        (
            "https://user@example.com/hooks",
            "callback_url must not carry a user name or password; authenticate the webhook "
            "by its signature instead.",
        ),
        (
            "http://2130706433/",
            "callback_url's host is a number but not a dotted IPv4 address; write it in full.",
        ),
        (
            "http://127.1/",
            "callback_url's host is a number but not a dotted IPv4 address; write it in full.",
        ),
        *(
            (
                url,
                "callback_url's host is not a name DNS can hold (at most 253 characters, "
                "1 to 63 between dots); check the name.",
            )
            for url in (
                f"https://{'a' * 300}.com/hooks",  # the resolver's IDNA codec refused it: a 500
                f"https://{'a' * 64}.example.com/hooks",
                f"https://{'abc.' * 64}com/hooks",
                "https://a..example.com/hooks",
            )
        ),
    ],
)
@pytest.mark.parametrize("allow_private", [False, True])
async def test_a_malformed_target_is_refused_even_when_private_ones_are_allowed(
    url: str, sentence: str, allow_private: bool
) -> None:
    assert await check_target(url, allow_private=allow_private) == sentence


async def test_a_name_that_does_not_resolve_is_refused() -> None:
    refused = await check_target("https://no-such-host.invalid/hooks", allow_private=False)
    assert refused == "callback_url's host no-such-host.invalid does not resolve; check the name."


@pytest.mark.parametrize(
    ("address", "private"),
    [
        ("8.8.8.8", False),
        ("1.1.1.1", False),
        ("2606:4700::1111", False),
        ("2002:0808:0808::", False),  # 6to4 of a public address
        ("::ffff:127.0.0.1", True),
        ("fec0::1", True),  # site-local
        ("192.0.2.1", True),  # documentation
    ],
)
def test_which_addresses_are_private(address: str, private: bool) -> None:
    assert is_private(ipaddress.ip_address(address)) is private


class Answers(AbstractResolver):
    """A resolver that answers every name with the given addresses (a name that rebinds)."""

    def __init__(self, *hosts: str) -> None:
        self.hosts = hosts

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        return [
            ResolveResult(hostname=host, host=found, port=port, family=family, proto=0, flags=0)
            for found in self.hosts
        ]

    async def close(self) -> None:
        return None


@pytest.mark.parametrize(
    "hosts", [("127.0.0.1",), ("93.184.216.34", "10.0.0.7"), ("::ffff:169.254.169.254",)]
)
async def test_the_connect_time_resolver_refuses_a_name_that_now_resolves_privately(
    hosts: tuple[str, ...],
) -> None:
    """A name checked as public when given may resolve to loopback by the time it is sent."""
    with pytest.raises(TargetRefused, match=r"hooks\.example\.com is a loopback, private"):
        await PublicResolver(Answers(*hosts)).resolve("hooks.example.com", 443)


async def test_the_connect_time_resolver_passes_public_addresses_through() -> None:
    found = await PublicResolver(Answers("93.184.216.34")).resolve("hooks.example.com", 443)
    assert [result["host"] for result in found] == ["93.184.216.34"]
