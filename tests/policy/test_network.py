"""The address check of ``policy/network.py`` (httpget, and the command proxy): a table of
addresses, public or not, with the special IPv6 ranges that embed or stand for other addresses."""

from __future__ import annotations

import pytest

from mcp_localtools.config import WebConfig
from mcp_localtools.errors import PolicyViolation
from mcp_localtools.policy.network import NetworkPolicy, is_public, parse_ip

REFUSED = [
    ("127.0.0.1", "loopback"),
    ("10.1.2.3", "private"),
    ("172.16.0.1", "private"),
    ("192.168.1.1", "private"),
    ("100.64.0.1", "shared"),
    ("169.254.1.1", "link-local"),
    ("0.0.0.0", "unspecified"),
    ("224.0.0.1", "multicast"),
    ("240.0.0.1", "reserved"),
    ("192.0.2.1", "documentation"),
    ("::1", "loopback"),
    ("::", "unspecified"),
    ("fe80::1", "link-local"),
    ("fc00::1", "unique local"),
    ("fd12:3456::1", "unique local"),
    ("ff02::1", "multicast"),
    ("::ffff:127.0.0.1", "IPv4-mapped loopback"),
    ("::ffff:10.0.0.1", "IPv4-mapped private"),
    ("64:ff9b::7f00:1", "NAT64 of 127.0.0.1"),
    ("64:ff9b::808:808", "NAT64 of a public address: still a translator's"),
    ("64:ff9b:1::a00:1", "local-use NAT64"),
    ("2002:7f00:1::1", "6to4 of 127.0.0.1"),
    ("2002:808:808::1", "6to4 of a public address"),
    ("::7f00:1", "IPv4-compatible 127.0.0.1"),
    ("::808:808", "IPv4-compatible public"),
    ("fec0::1", "site-local"),
    ("feff:ffff::1", "site-local, last"),
    ("2001:0:4136:e378:8000:63bf:3fff:fdd2", "Teredo"),
    ("2001:db8::1", "documentation"),
    ("3fff::1", "documentation (RFC 9637)"),
    ("100::1", "discard-only"),
    ("5f00::1", "SRv6 SIDs"),
    ("::ffff:0:7f00:1", "IPv4-translated"),
]
PUBLIC = ["8.8.8.8", "1.1.1.1", "2606:4700::1111", "2a00:1450:4001::200e", "::ffff:8.8.8.8", "2620:fe::fe"]


@pytest.mark.parametrize(("address", "what"), REFUSED)
def test_an_address_that_is_not_public_is_refused_unless_listed(address: str, what: str) -> None:
    ip = parse_ip(address)
    assert ip is not None
    assert not is_public(ip), what
    with pytest.raises(PolicyViolation, match="refusing host"):
        NetworkPolicy.from_config(WebConfig()).check_address("example.test", ip)
    listed = NetworkPolicy.from_config(WebConfig(allowed_hosts=[address]))
    listed.check_address("example.test", ip)  # the operator may still allow it on purpose


@pytest.mark.parametrize("address", PUBLIC)
def test_a_public_address_passes(address: str) -> None:
    ip = parse_ip(address)
    assert ip is not None and is_public(ip)
    NetworkPolicy.from_config(WebConfig()).check_address("example.test", ip)


def test_the_refusal_names_the_special_range() -> None:
    ip = parse_ip("64:ff9b::7f00:1")
    assert ip is not None
    with pytest.raises(PolicyViolation, match="NAT64"):
        NetworkPolicy.from_config(WebConfig()).check_address("example.test", ip)
