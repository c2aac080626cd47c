"""httpget's checks of a URL before anything is sent: its form (an absolute http or https URL,
with what to do instead for a file path or a bare host) and the ``[web]`` network policy."""

from __future__ import annotations

import re
from typing import Any

from mcp_localtools.errors import InvalidArguments, NetworkError, PolicyViolation
from mcp_localtools.policy.network import NetworkPolicy, parse_ip

__all__ = ["check_url", "check_url_form"]

_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*):(//)?")
_PATH_LIKE = ("/", "./", "../", "~", "\\")


def check_url_form(url: str) -> None:
    """Refuse, before anything is sent, a ``url`` that is no absolute http(s) URL, saying what
    to do instead: a ``file:`` URL or a file path (read files with ``readfile``), a URL without
    a scheme (``example.com/x``, ``localhost:8080``: add ``https://``), another scheme.

    Raises:
        PolicyViolation: a ``file:`` URL, or a scheme other than http and https.
        InvalidArguments: a file path, or no scheme.
    """
    text = url.strip()
    found = _SCHEME.match(text)
    scheme = found.group(1).lower() if found else ""
    if scheme == "file":
        path = re.sub(r"^file:(//[^/]*)?", "", text, flags=re.IGNORECASE) or "/"
        raise PolicyViolation(
            f"file: URLs are not fetched: httpget reads only http and https URLs; read the file with "
            f"readfile (path {path})"
        )
    if found is not None and found.group(2) is not None and scheme not in ("http", "https"):
        raise PolicyViolation(f"refusing scheme {scheme!r}: only http and https URLs can be fetched")
    if found is not None and found.group(2) is None and not text[found.end() :][:1].isdigit():
        raise PolicyViolation(f"refusing scheme {scheme!r}: only http and https URLs can be fetched")
    if found is not None and found.group(2) is not None:
        return
    if text.startswith(_PATH_LIKE):
        raise InvalidArguments(
            f"{text!r} is a file path, not a URL: httpget fetches http and https URLs; read files "
            "with readfile"
        )
    raise InvalidArguments(
        f"{text!r} has no scheme: httpget needs an absolute URL; add https:// (https://{text})"
    )


def check_url(args: Any, *, policy: NetworkPolicy) -> None:
    """httpget's checks before anything is sent (its ``ToolSpec.check``; ``args.url``): the URL's form
    (``check_url_form``), its scheme and host against ``[web]`` (``NetworkPolicy.check_url``),
    and a host given as an address (a cloud metadata address, a private one) as the fetch would
    check it. A host name is not resolved here: the fetch checks every address it resolves to.

    Raises:
        PolicyViolation: as ``check_url_form``, or the host or address is refused by ``[web]``.
        InvalidArguments: a file path or a URL without a scheme.
        NetworkError: the URL cannot be parsed.
    """
    import httpx  # the URL as the fetch will read it

    check_url_form(args.url)
    try:
        url = httpx.URL(args.url.strip())
    except httpx.InvalidURL as exc:
        raise NetworkError(f"not a valid URL: {args.url}: {exc}") from exc
    policy.check_url(url.scheme, url.host)
    address = parse_ip(url.host)
    if address is not None:
        policy.check_address(url.host, address)
