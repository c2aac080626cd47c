"""The address check of ``policy/network.py`` (httpget, and the command proxy): a table of
addresses, public or not, with the special IPv6 ranges that embed or stand for other addresses."""

from __future__ import annotations

import ipaddress

import pytest

from mcp_localtools.config import WebConfig
from mcp_localtools.errors import PolicyViolation
from mcp_localtools.policy.network import (
    METADATA_ADDRESSES,
    NOT_PUBLIC_IPV4,
    NOT_PUBLIC_IPV6,
    SPECIAL_IPV6,
    IPNetwork,
    NetworkPolicy,
    is_public,
    parse_ip,
    special_range,
)

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


# The address rules as a table: every range of NOT_PUBLIC_IPV4, NOT_PUBLIC_IPV6 and SPECIAL_IPV6,
# its first and last address refused and named in the refusal, and the public address just outside.
def _ranges() -> list[tuple[IPNetwork, str]]:
    return [*NOT_PUBLIC_IPV4, *NOT_PUBLIC_IPV6, *SPECIAL_IPV6]


@pytest.mark.parametrize(("network", "name"), _ranges(), ids=[str(network) for network, _ in _ranges()])
def test_every_range_of_the_tables_is_refused_from_its_first_to_its_last_address_and_named(
    network: IPNetwork, name: str
) -> None:
    policy = NetworkPolicy.from_config(WebConfig())
    for ip in (network.network_address, network.broadcast_address, network.network_address + 1):
        assert not is_public(ip), (ip, name)
        named = special_range(ip)
        assert named is not None, ip
        if ip in METADATA_ADDRESSES:
            continue
        with pytest.raises(PolicyViolation, match="refusing host") as refused:
            policy.check_address("example.test", ip)
        assert named in str(refused.value)


NEIGHBOURS = [  # the first public address past (or before) a range
    ("1.0.0.0", "0.0.0.0/8"),
    ("9.255.255.255", "10.0.0.0/8"),
    ("11.0.0.0", "10.0.0.0/8"),
    ("100.63.255.255", "100.64.0.0/10"),
    ("100.128.0.0", "100.64.0.0/10"),
    ("126.255.255.255", "127.0.0.0/8"),
    ("128.0.0.0", "127.0.0.0/8"),
    ("169.253.255.255", "169.254.0.0/16"),
    ("169.255.0.0", "169.254.0.0/16"),
    ("172.15.255.255", "172.16.0.0/12"),
    ("172.32.0.0", "172.16.0.0/12"),
    ("191.255.255.255", "192.0.0.0/24"),
    ("192.0.1.0", "192.0.0.0/24"),
    ("192.0.3.0", "192.0.2.0/24"),
    ("192.88.98.255", "192.88.99.0/24"),
    ("192.88.100.0", "192.88.99.0/24"),
    ("192.167.255.255", "192.168.0.0/16"),
    ("192.169.0.0", "192.168.0.0/16"),
    ("198.17.255.255", "198.18.0.0/15"),
    ("198.20.0.0", "198.18.0.0/15"),
    ("198.51.99.255", "198.51.100.0/24"),
    ("198.51.101.0", "198.51.100.0/24"),
    ("203.0.112.255", "203.0.113.0/24"),
    ("203.0.114.0", "203.0.113.0/24"),
    ("223.255.255.255", "224.0.0.0/4"),
    ("::ffff:8.8.8.8", "::ffff:0:0/96, judged by its IPv4 address"),
    ("64:ff9a:ffff:ffff:ffff:ffff:ffff:ffff", "64:ff9b::/96"),
    ("2001:db9::1", "2001:db8::/32"),
    ("2003::1", "2002::/16"),
    ("2001:4860:4860::8888", "a public IPv6 address"),
    ("3000::1", "3fff::/20"),
    ("4000::1", "3fff::/20"),
    ("5eff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "5f00::/16"),
    ("5f01::1", "5f00::/16"),
    ("fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "fc00::/7"),
]


@pytest.mark.parametrize(("address", "beside"), NEIGHBOURS)
def test_the_address_just_outside_a_range_is_public(address: str, beside: str) -> None:
    ip = parse_ip(address)
    assert ip is not None
    assert special_range(ip) is None and is_public(ip), beside
    NetworkPolicy.from_config(WebConfig()).check_address("example.test", ip)


def test_loopback_is_named_loopback_though_it_lies_in_the_ipv4_compatible_range_too() -> None:
    assert special_range(ipaddress.ip_address("::1")) == "loopback (RFC 4291)"
    assert special_range(ipaddress.ip_address("::ffff:127.0.0.1")) == "loopback (RFC 1122)"
