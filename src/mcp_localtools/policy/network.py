"""The network policy of httpget: which hosts and addresses a fetch may reach.

A URL passes two checks. ``check_url`` looks at the URL alone (scheme, ``blocked_hosts``,
``allowed_hosts``) before anything is resolved. ``check_address`` looks at each address the host
name resolved to: an address that is not public (one of the tables below: ``NOT_PUBLIC_IPV4``
and ``NOT_PUBLIC_IPV6`` — loopback, private, link-local, shared, documentation, multicast,
reserved, unspecified — and ``SPECIAL_IPV6``, ranges such as NAT64 and 6to4 that stand for an
IPv4 address; IPv4-mapped IPv6 is judged by its IPv4 address; the refusal names the range) is
refused unless the host or the address is listed in ``allowed_hosts`` by name, address or network (a
bare ``"*"`` does not count), and a cloud metadata address unless that very address is listed.
The fetch then connects to the address that was checked (``tools/web/_fetch.py``), so a second
DNS answer cannot slip another address in between.

``ProxyPolicy`` is the same check for the commands' proxy (``sandbox/proxy.py``) with
``[exec.sandbox] allowed_domains``, by host and port: an entry opens ports 80 and 443 of its hosts,
or the one port it names (``host:port``); an address that is not public is reached only through
an entry that names it exactly (the host's name without a wildcard, or the address or its network),
never through a wildcard such as ``*.example.com`` or ``*``, whose names anyone may point anywhere.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase

from mcp_localtools.config import WebConfig, host_and_port
from mcp_localtools.errors import ConfigError, PolicyViolation

__all__ = [
    "DEFAULT_PROXY_PORTS",
    "METADATA_ADDRESSES",
    "NOT_PUBLIC_IPV4",
    "NOT_PUBLIC_IPV6",
    "SPECIAL_IPV6",
    "NetworkPolicy",
    "ProxyPolicy",
    "is_public",
    "parse_ip",
    "special_range",
]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(a)
    for a in (
        "169.254.169.254",  # AWS, GCP, Azure, OpenStack, DigitalOcean, ...
        "169.254.170.2",  # AWS ECS task metadata
        "fd00:ec2::254",  # AWS IPv6
        "100.100.100.200",  # Alibaba Cloud
    )
)
"""Cloud instance metadata services: reached only when the address itself is allowlisted."""

NOT_PUBLIC_IPV4: tuple[tuple[ipaddress.IPv4Network, str], ...] = tuple(
    (ipaddress.IPv4Network(network), name)
    for network, name in (
        ("0.0.0.0/8", "this network (RFC 791)"),
        ("10.0.0.0/8", "private (RFC 1918)"),
        ("100.64.0.0/10", "shared address space (RFC 6598)"),
        ("127.0.0.0/8", "loopback (RFC 1122)"),
        ("169.254.0.0/16", "link-local (RFC 3927)"),
        ("172.16.0.0/12", "private (RFC 1918)"),
        ("192.0.0.0/24", "IETF protocol assignments (RFC 6890)"),
        ("192.0.2.0/24", "documentation (RFC 5737)"),
        ("192.88.99.0/24", "6to4 relay anycast (deprecated, RFC 7526)"),
        ("192.168.0.0/16", "private (RFC 1918)"),
        ("198.18.0.0/15", "benchmarking (RFC 2544)"),
        ("198.51.100.0/24", "documentation (RFC 5737)"),
        ("203.0.113.0/24", "documentation (RFC 5737)"),
        ("224.0.0.0/4", "multicast (RFC 5771)"),
        ("240.0.0.0/4", "reserved, and the broadcast address (RFC 1112, RFC 919)"),
    )
)
"""The IPv4 ranges that are never public (IANA's IPv4 special-purpose registry, RFC 6890, less
the few single addresses it calls globally reachable, plus multicast): the rule does not depend on
what a Python version's ``is_global`` says. ``192.0.0.0/24`` is refused whole (its anycast
``192.0.0.9``/``.10`` serve no web pages)."""

NOT_PUBLIC_IPV6: tuple[tuple[ipaddress.IPv6Network, str], ...] = tuple(
    (ipaddress.IPv6Network(network), name)
    for network, name in (
        ("::1/128", "loopback (RFC 4291)"),
        ("::/128", "unspecified (RFC 4291)"),
        ("100::/64", "discard-only (RFC 6666)"),
        ("2001:db8::/32", "documentation (RFC 3849)"),
        ("fc00::/7", "unique local (RFC 4193)"),
        ("fe80::/10", "link-local (RFC 4291)"),
        ("ff00::/8", "multicast (RFC 4291)"),
    )
)
"""The IPv6 ranges every resolver knows are not public (loopback, unique local, link-local, ...);
looked up before ``SPECIAL_IPV6``, so ``::1`` is named loopback, not IPv4-compatible."""

SPECIAL_IPV6: tuple[tuple[ipaddress.IPv6Network, str], ...] = tuple(
    (ipaddress.IPv6Network(network), name)
    for network, name in (
        ("64:ff9b::/96", "NAT64 (RFC 6052): a translator reaches the IPv4 address inside"),
        ("64:ff9b:1::/48", "local-use NAT64 (RFC 8215)"),
        ("2002::/16", "6to4 (RFC 3056): a relay reaches the IPv4 address inside"),
        ("::/96", "IPv4-compatible (deprecated, RFC 4291)"),
        ("::ffff:0:0:0/96", "IPv4-translated (RFC 2765)"),
        ("fec0::/10", "site-local (deprecated, RFC 3879)"),
        ("2001::/32", "Teredo (RFC 4380): a relay reaches the IPv4 address inside"),
        ("3fff::/20", "documentation (RFC 9637)"),
        ("5f00::/16", "SRv6 segment identifiers (RFC 9602)"),
    )
)
"""IPv6 ranges that Python's ``is_global`` (3.11) calls public although they are not globally
reachable, or stand for an IPv4 address a translator or relay would reach (``64:ff9b::7f00:1`` is
127.0.0.1 behind NAT64): never public, whatever the address inside."""

SCHEMES = ("http", "https")


def parse_ip(host: str) -> IPAddress | None:
    """``host`` as an IP address (brackets and an IPv6 zone stripped), None for a name."""
    text = host.strip("[]").split("%", 1)[0]
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def _unmapped(ip: IPAddress) -> IPAddress:
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


def special_range(ip: IPAddress) -> str | None:
    """The name of the range of ``NOT_PUBLIC_IPV4``, ``NOT_PUBLIC_IPV6`` or ``SPECIAL_IPV6`` that
    ``ip`` lies in (the first that holds it; an IPv4-mapped address by its IPv4 address), or None."""
    ip = _unmapped(ip)
    if isinstance(ip, ipaddress.IPv4Address):
        return next((name for network, name in NOT_PUBLIC_IPV4 if ip in network), None)
    return next((name for network, name in (*NOT_PUBLIC_IPV6, *SPECIAL_IPV6) if ip in network), None)


def is_public(ip: IPAddress) -> bool:
    """True when ``ip`` is a globally reachable unicast address: in no range of
    ``NOT_PUBLIC_IPV4``, ``NOT_PUBLIC_IPV6`` or ``SPECIAL_IPV6`` (loopback, private, link-local,
    shared, reserved, documentation, multicast, unspecified, NAT64, 6to4, ...), and global for
    Python's ``is_global`` too (which knows a few more, such as most of ``2001::/23``); an
    IPv4-mapped address (``::ffff:a.b.c.d``) is judged by its IPv4 address. httpget and the
    command proxy reach only such addresses unless one is listed."""
    ip = _unmapped(ip)
    return ip.is_global and not ip.is_multicast and special_range(ip) is None


def _normal_host(host: str) -> str:
    return host.strip("[]").rstrip(".").lower()


@dataclass(frozen=True)
class _Entries:
    """One ``[web]`` host list: name globs, exact addresses and networks."""

    globs: tuple[str, ...]
    networks: tuple[IPNetwork, ...]

    @classmethod
    def parse(cls, key: str, entries: list[str]) -> _Entries:
        globs: list[str] = []
        networks: list[IPNetwork] = []
        for entry in entries:
            text = _normal_host(entry.strip())
            if not text:
                raise ConfigError(f"web.{key}: an entry must not be empty")
            if "/" in text:
                try:
                    networks.append(ipaddress.ip_network(text, strict=False))
                except ValueError as exc:
                    raise ConfigError(f"web.{key}: {entry!r} is not a network: {exc}") from exc
                continue
            ip = parse_ip(text)
            if ip is not None:
                networks.append(ipaddress.ip_network(ip))
            else:
                globs.append(text)
        return cls(tuple(globs), tuple(networks))

    def names(self, host: str, *, bare_star: bool = True) -> bool:
        """True when the host name matches a glob (``"*"`` alone only with ``bare_star``)."""
        return any(fnmatchcase(host, g) for g in self.globs if bare_star or g != "*")

    def address(self, ip: IPAddress) -> bool:
        """True when ``ip`` (or its IPv4 form) lies in a listed address or network."""
        return any(candidate in net for candidate in {ip, _unmapped(ip)} for net in self.networks)


@dataclass(frozen=True)
class NetworkPolicy:
    """``[web]`` as a policy; build it with ``NetworkPolicy.from_config``."""

    allowed: _Entries
    blocked: _Entries

    @classmethod
    def from_config(cls, web: WebConfig) -> NetworkPolicy:
        """The policy of ``[web]``.

        Raises:
            ConfigError: an entry is empty or a malformed network.
        """
        return cls(
            _Entries.parse("allowed_hosts", web.allowed_hosts),
            _Entries.parse("blocked_hosts", web.blocked_hosts),
        )

    @property
    def open(self) -> bool:
        """True when ``allowed_hosts`` is empty: any public host may be fetched."""
        return not self.allowed.globs and not self.allowed.networks

    def check_url(self, scheme: str, host: str) -> None:
        """Check a URL's scheme and host before resolving it.

        Raises:
            PolicyViolation: not http(s), no host, a blocked host, or a host outside a non-empty
                ``allowed_hosts``.
        """
        if scheme not in SCHEMES:
            raise PolicyViolation(f"refusing scheme {scheme!r}: only http and https URLs can be fetched")
        name = _normal_host(host)
        if not name:
            raise PolicyViolation("refusing a URL without a host; give an absolute http(s) URL")
        ip = parse_ip(name)
        if self.blocked.names(name) or (ip is not None and self.blocked.address(ip)):
            raise PolicyViolation(f"refusing host {host}: it is in [web] blocked_hosts")
        if self.open:
            return
        if not (self.allowed.names(name) or (ip is not None and self.allowed.address(ip))):
            raise PolicyViolation(
                f"refusing host {host}: it is not in [web] allowed_hosts; ask the user to add it"
            )

    def check_address(self, host: str, ip: IPAddress) -> None:
        """Check one address ``host`` resolved to (or is).

        Raises:
            PolicyViolation: the address is blocked, or is not public and neither the host nor
                the address is allowlisted (metadata addresses: only the address itself).
        """
        name = _normal_host(host)
        if self.blocked.address(ip):
            raise PolicyViolation(f"refusing host {host}: its address {ip} is in [web] blocked_hosts")
        if _unmapped(ip) in METADATA_ADDRESSES:
            if any(_unmapped(ip) in net and net.num_addresses == 1 for net in self.allowed.networks):
                return
            raise PolicyViolation(
                f"refusing host {host}: {ip} is a cloud metadata address; it is reached only when "
                "that address is listed in [web] allowed_hosts"
            )
        if is_public(ip):
            return
        if self.allowed.address(ip) or self.allowed.names(name, bare_star=False):
            return
        special = special_range(ip)
        what = (
            f"an address in the {special} range" if special else "an address that is not globally reachable"
        )
        raise PolicyViolation(
            f"refusing host {host}: it resolves to {ip}, {what}; "
            "such hosts are reached only when listed in [web] allowed_hosts"
        )


DEFAULT_PROXY_PORTS = frozenset({80, 443})
"""The ports an ``allowed_domains`` entry without one opens: http and https."""

_GLOB_CHARACTERS = frozenset("*?[")


@dataclass(frozen=True)
class _Opening:
    """One ``allowed_domains`` entry: its hosts, the ports it opens, and whether it names its
    hosts exactly (a name without a wildcard, an address, a network)."""

    entry: str
    hosts: _Entries
    ports: frozenset[int]
    exact: bool

    def names(self, name: str, ip: IPAddress | None) -> bool:
        """True when the entry lists the host ``name`` (``ip``: the host as an address, if it is one)."""
        return self.hosts.names(name) or (ip is not None and self.hosts.address(ip))


@dataclass(frozen=True)
class ProxyPolicy:
    """``[exec.sandbox] allowed_domains`` (and ``[web] blocked_hosts``) as the commands' proxy's
    policy; build it with ``ProxyPolicy.from_config``. ``check_target`` before the host is
    resolved, ``check_address`` for each address it resolves to."""

    openings: tuple[_Opening, ...]
    blocked: _Entries

    @classmethod
    def from_config(cls, allowed_domains: Sequence[str], web: WebConfig) -> ProxyPolicy:
        """The policy of ``allowed_domains`` entries (``host``, ``host:port``, ``[v6]:port``;
        ``config.host_and_port``) and ``web``'s ``blocked_hosts``.

        Raises:
            ConfigError: an entry is malformed (the message names
                ``exec.sandbox.allowed_domains[i]``) or a ``blocked_hosts`` entry is.
        """
        openings: list[_Opening] = []
        for index, entry in enumerate(allowed_domains):
            key = f"exec.sandbox.allowed_domains[{index}]"
            try:
                host, port = host_and_port(entry)
                hosts = _Entries.parse("allowed_hosts", [host])
            except (ValueError, ConfigError) as exc:
                raise ConfigError(f"{key}: {exc}") from None
            exact = not any(char in _GLOB_CHARACTERS for glob in hosts.globs for char in glob)
            ports = DEFAULT_PROXY_PORTS if port is None else frozenset({port})
            openings.append(_Opening(entry.strip(), hosts, ports, exact))
        return cls(tuple(openings), _Entries.parse("blocked_hosts", web.blocked_hosts))

    def check_target(self, host: str, port: int) -> None:
        """Check a request's ``host`` and ``port`` before the host is resolved.

        Raises:
            PolicyViolation: no host, a blocked host, a host no entry lists, or a port no entry
                that lists the host opens.
        """
        name = _normal_host(host)
        if not name:
            raise PolicyViolation("refusing a request without a host; give host:port")
        ip = parse_ip(name)
        if self.blocked.names(name) or (ip is not None and self.blocked.address(ip)):
            raise PolicyViolation(f"refusing host {host}: it is in [web] blocked_hosts")
        listing = [opening for opening in self.openings if opening.names(name, ip)]
        if not listing:
            raise PolicyViolation(
                f"refusing host {host}: it is not in [exec.sandbox] allowed_domains; ask the user to add "
                "it (or to set [exec.sandbox] network = true)"
            )
        if not any(port in opening.ports for opening in listing):
            shown = f"[{name}]" if ":" in name else name
            raise PolicyViolation(
                f"refusing {shown}:{port}: port {port} is not open for {host}: an [exec.sandbox] "
                "allowed_domains entry opens ports 80 and 443 of its hosts unless it names its port "
                f'("{shown}:{port}"); ask the user to add that entry'
            )

    def check_address(self, host: str, port: int, ip: IPAddress) -> None:
        """Check one address ``host`` resolved to (or is), for a connection to ``port``.

        Raises:
            PolicyViolation: the address is blocked; a cloud metadata address not listed itself;
                or an address that is not public, which no entry opening ``port`` names exactly
                (by the host's name without a wildcard, or by the address or its network).
        """
        name = _normal_host(host)
        if self.blocked.address(ip):
            raise PolicyViolation(f"refusing host {host}: its address {ip} is in [web] blocked_hosts")
        opening = [entry for entry in self.openings if port in entry.ports]
        if _unmapped(ip) in METADATA_ADDRESSES:
            if any(
                _unmapped(ip) in net and net.num_addresses == 1
                for entry in opening
                for net in entry.hosts.networks
            ):
                return
            raise PolicyViolation(
                f"refusing host {host}: {ip} is a cloud metadata address; it is reached only when that "
                "address is listed in [exec.sandbox] allowed_domains"
            )
        if is_public(ip):
            return
        if any(entry.hosts.address(ip) or (entry.exact and entry.hosts.names(name)) for entry in opening):
            return
        special = special_range(ip)
        what = (
            f"an address in the {special} range" if special else "an address that is not globally reachable"
        )
        wildcards = [entry.entry for entry in opening if not entry.exact and entry.hosts.names(name)]
        why = (
            f"; the wildcard entry {wildcards[0]!r} of [exec.sandbox] allowed_domains never reaches such "
            "an address (anyone may point a name under a wildcard anywhere): list the host by its exact "
            "name or address"
            if wildcards
            else "; such hosts are reached only when listed by exact name or address in "
            "[exec.sandbox] allowed_domains"
        )
        raise PolicyViolation(f"refusing host {host}: it resolves to {ip}, {what}{why}")
