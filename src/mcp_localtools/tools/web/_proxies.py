"""Proxy settings for httpget from the server's environment (``http_proxy``, ``https_proxy``,
``all_proxy``, ``no_proxy``, either case; lower case wins). Kept apart from ``_fetch`` so that
building the tool does not import httpx (imported on the first fetch)."""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping

from mcp_localtools.policy.network import parse_ip

__all__ = ["bypasses", "proxies_from"]


def proxies_from(environ: Mapping[str, str]) -> dict[str, str]:
    """The proxy settings in ``environ`` as ``{"http": url, "https": url, "all": url, "no": list}``;
    lower-case names win over upper case, as in curl."""
    found: dict[str, str] = {}
    for name, value in environ.items():
        lower = name.lower()
        if not lower.endswith("_proxy") or not value:
            continue
        key = lower[: -len("_proxy")]
        if key not in ("http", "https", "all", "no"):
            continue
        if name == lower or key not in found:
            found[key] = value
    return found


def bypasses(host: str, no_proxy: str) -> bool:
    """True when ``no_proxy`` (comma-separated: ``*``, names matching themselves and their
    subdomains, addresses, CIDR networks) names ``host``."""
    name = host.strip("[]").rstrip(".").lower()
    ip = parse_ip(name)
    for raw in no_proxy.split(","):
        entry = raw.strip().lower().lstrip(".")
        if not entry:
            continue
        if entry == "*" or name == entry or name.endswith("." + entry):
            return True
        if ip is not None:
            try:
                if ip in ipaddress.ip_network(entry.strip("[]"), strict=False):
                    return True
            except ValueError:
                continue
    return False
