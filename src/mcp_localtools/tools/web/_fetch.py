"""The web group's HTTP client: every request checked, then sent to the address that was checked.

``PinnedTransport`` is an httpx transport. For each request (the first and every redirect) it
checks the URL (``NetworkPolicy.check_url``), resolves the host once, checks every address it got
(``check_address``), and sends the request to the first of them by rewriting the URL's host to
that address while the ``Host`` header and the TLS server name (SNI, and the certificate check)
keep the name. No second lookup happens, so a DNS answer that changes between check and connect
(DNS rebinding) cannot reach an address that was not checked.

Proxies come from the server's environment (``http_proxy``, ``https_proxy``, ``all_proxy``,
``no_proxy``, either case; lower case wins). Through a proxy the same checks run on the name and
on the addresses it resolves to here, but the proxy resolves and connects by itself: the check
cannot pin its connection, and the proxy's own address is not checked (the operator chose it).
"""

from __future__ import annotations

import socket
from collections.abc import Mapping
from typing import Any

import anyio
import httpx

from mcp_localtools.errors import NetworkError, PolicyViolation
from mcp_localtools.policy.network import IPAddress, NetworkPolicy, parse_ip
from mcp_localtools.tools.web._proxies import bypasses

__all__ = ["PinnedTransport"]

_DEFAULT_PORTS = {"http": 80, "https": 443}


async def _resolve(host: str, port: int) -> list[IPAddress]:
    """The addresses of ``host`` (itself when it is an address), in resolver order.

    Raises:
        NetworkError: the name does not resolve.
    """
    literal = parse_ip(host)
    if literal is not None:
        return [literal]
    try:
        infos = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise NetworkError(f"cannot resolve host {host}: {exc}; check the URL") from exc
    addresses: list[IPAddress] = []
    for info in infos:
        ip = parse_ip(str(info[4][0]))
        if ip is not None and ip not in addresses:
            addresses.append(ip)
    if not addresses:
        raise NetworkError(f"host {host} has no address; check the URL")
    return addresses


class PinnedTransport(httpx.AsyncBaseTransport):
    """An httpx transport that refuses what ``policy`` refuses and connects to checked addresses.

    Args:
        policy: the ``[web]`` policy.
        proxies: ``proxies_from(environ)``; empty: connect directly.
        verify: passed to httpx (True: the system's CA bundle).
    """

    def __init__(self, policy: NetworkPolicy, proxies: Mapping[str, str], *, verify: bool = True) -> None:
        self._policy = policy
        self._proxies = dict(proxies)
        self._direct = httpx.AsyncHTTPTransport(verify=verify, trust_env=False)
        self._via: dict[str, httpx.AsyncHTTPTransport] = {}
        self._verify = verify

    def _proxy_for(self, url: httpx.URL) -> httpx.AsyncHTTPTransport | None:
        proxy = self._proxies.get(url.scheme) or self._proxies.get("all")
        if not proxy:
            return None
        no_proxy = self._proxies.get("no", "")
        if no_proxy and bypasses(url.host, no_proxy):
            return None
        if proxy not in self._via:
            self._via[proxy] = httpx.AsyncHTTPTransport(proxy=proxy, verify=self._verify, trust_env=False)
        return self._via[proxy]

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Check ``request``'s URL and addresses, then send it (pinned, or through the proxy).

        Raises:
            PolicyViolation: the URL or an address it resolves to is refused.
            NetworkError: the host does not resolve.
            httpx.TransportError: the connection failed (the caller translates it).
        """
        url = request.url
        host = url.host
        self._policy.check_url(url.scheme, host)
        port = url.port or _DEFAULT_PORTS[url.scheme]
        addresses = await _resolve(host, port)
        for ip in addresses:
            self._policy.check_address(host, ip)
        via = self._proxy_for(url)
        if via is not None:
            return await via.handle_async_request(request)
        extensions: dict[str, Any] = dict(request.extensions)
        if url.scheme == "https" and parse_ip(host) is None:
            extensions["sni_hostname"] = host
        pinned = httpx.Request(
            request.method,
            url.copy_with(host=str(addresses[0])),
            headers=request.headers,  # keeps Host: the name
            stream=request.stream,
            extensions=extensions,
        )
        if parse_ip(str(pinned.url.host)) != addresses[0]:  # defensive: never send to an unchecked host
            raise PolicyViolation(f"refusing host {host}: cannot pin the connection to {addresses[0]}")
        return await self._direct.handle_async_request(pinned)

    async def aclose(self) -> None:
        """Close the pooled connections."""
        await self._direct.aclose()
        for via in self._via.values():
            await via.aclose()
