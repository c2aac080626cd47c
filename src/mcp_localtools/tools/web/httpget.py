"""The web group: httpget, a GET or HEAD of an http(s) URL under the ``[web]`` network policy.

Every request, the first and each redirect, is checked by ``policy/network.py`` and sent to the
address that was checked (``_fetch.PinnedTransport``). The body is read up to ``maxBytes``
(``[web] max_bytes`` at most). HTML comes back as Markdown (html2text, imported when first
needed, converted in a worker thread), other text as text, images as image content fitted like
``readimage`` does it (decoded in a confined worker process), anything else described. The status,
the content type and the final URL are always in the result; a 404 is a result, not an error.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, Literal

import anyio
import anyio.to_thread
from pydantic import Field

from mcp_localtools._version import __version__
from mcp_localtools.config import WebConfig
from mcp_localtools.errors import NetworkError, ToolTimeout
from mcp_localtools.offload import offload
from mcp_localtools.parsers import ParserRunner
from mcp_localtools.parsers.images import (
    DEFAULT_MAX_DIMENSION,
    DEFAULT_MAX_IMAGE_BYTES,
    ReturnedImage,
    fit_image,
)
from mcp_localtools.policy.network import NetworkPolicy
from mcp_localtools.results import ImageContent, ToolResult, cut_text, fit_within
from mcp_localtools.spec import CallContext, ToolAnnotations, ToolArgs, ToolOutput, ToolSpec
from mcp_localtools.tools.web._decode import ACCEPT_ENCODING, BodyDecoder
from mcp_localtools.tools.web._proxies import proxies_from
from mcp_localtools.tools.web._urls import check_url, check_url_form
from mcp_localtools.workspace import Workspace

if TYPE_CHECKING:
    import httpx

__all__ = ["HttpGetArgs", "HttpGetResult", "http_get", "spec"]

WEB_ANNOTATIONS = ToolAnnotations(read_only=True, destructive=False, idempotent=True, open_world=True)

_HTML = ("text/html", "application/xhtml+xml")
_TEXT_APPS = (
    "application/json",
    "application/xml",
    "application/javascript",
    "application/ecmascript",
    "application/x-yaml",
    "application/yaml",
    "application/toml",
    "application/x-sh",
    "application/sql",
    "application/graphql",
    "image/svg+xml",
)


class HttpGetArgs(ToolArgs):
    url: str = Field(description="Absolute http:// or https:// URL.", min_length=1, max_length=8192)
    method: Literal["GET", "HEAD"] = Field(
        "GET",
        description="GET fetches the body; HEAD only the status and headers.",
    )
    max_bytes: int | None = Field(
        None,
        ge=1024,
        description="Most bytes of the body to read (default and ceiling: the server's [web] max_bytes).",
    )
    raw: bool = Field(False, description="Return HTML as it came instead of converting it to Markdown.")


class HttpGetResult(ToolOutput):
    url: str = Field(description="The URL as asked.")
    final_url: str = Field(description="The URL that answered, after redirects.")
    status: int = Field(description="HTTP status code of the final response.")
    reason: str = Field(description="HTTP reason phrase.")
    content_type: str | None = Field(None, description="The response's Content-Type header.")
    content_length: int | None = Field(None, description="The Content-Length header, when sent.")
    redirects: list[str] = Field(default_factory=list, description="Each URL redirected from, in order.")
    kind: Literal["markdown", "text", "image", "binary", "none"] = Field(
        description=(
            "What the content is: markdown (converted HTML), text, image (image content), binary "
            "(described, not returned) or none (HEAD, empty body)."
        )
    )
    bytes_read: int = Field(description="Bytes of the body read (after content decoding).")
    truncated: bool = Field(False, description="True when the body or the text was cut to a budget.")
    returned: ReturnedImage | None = Field(None, description="kind=image: the image content as returned.")
    note: str | None = Field(None, description="Something the caller should know about this result.")
    content: str | None = Field(
        None,
        description="kind=markdown or text: the page as text (clients that read only this copy see it here).",
    )


def _media_type(content_type: str | None) -> str:
    return (content_type or "").split(";", 1)[0].strip().lower()


def _is_text(media: str) -> bool:
    return media.startswith("text/") or media in _TEXT_APPS or media.endswith(("+json", "+xml"))


def _to_markdown(html: str) -> str:
    import html2text  # lazy: only httpget needs it

    converter = html2text.HTML2Text()
    converter.body_width = 0  # no hard wraps: the model reads lines, not a terminal
    converter.ignore_images = False
    converter.protect_links = True
    return str(converter.handle(html))


async def _read_body(response: httpx.Response, cap: int, url: str) -> tuple[bytes, bool]:
    """At most ``cap`` bytes of the decoded body (``_decode.BodyDecoder``: one content encoding,
    decoded within the budget), and whether more was there.

    Raises:
        UnsupportedContent: stacked or unknown content encodings, or a corrupt compressed body.
    """
    decoder = BodyDecoder(response.headers.get_list("content-encoding"), url)
    chunks: list[bytes] = []
    size = raw_size = 0
    async for raw in response.aiter_raw():
        raw_size += len(raw)
        chunk = decoder.decode(raw, cap + 1 - size)
        chunks.append(chunk)
        size += len(chunk)
        if size > cap or raw_size > cap + _RAW_SLACK:
            return b"".join(chunks)[:cap], True
    return b"".join(chunks), False


_RAW_SLACK = 1024 * 1024
"""Raw bytes read past the cap before a body that decodes to little is cut anyway (a compressed
body is never much larger than what it decodes to, unless it is built to waste time)."""


async def _fetch(
    client: httpx.AsyncClient, method: str, url: str, max_redirects: int
) -> tuple[httpx.Response, list[httpx.Response]]:
    """Send the request and follow redirects (each checked by the transport), closing every
    redirect response unread: httpx would read its body whole, decoded, however large.

    Returns:
        ``(response, history)``: the final response, open for streaming, and the redirects.

    Raises:
        httpx.TooManyRedirects: more than ``max_redirects``.
    """
    import httpx

    history: list[httpx.Response] = []
    response = await client.send(client.build_request(method, url), stream=True, follow_redirects=False)
    while response.next_request is not None:
        await response.aclose()
        if len(history) >= max_redirects:
            raise httpx.TooManyRedirects(f"more than {max_redirects} redirects", request=response.request)
        history.append(response)
        response = await client.send(response.next_request, stream=True, follow_redirects=False)
    return response, history


@dataclass(frozen=True)
class _Fetched:
    """What one fetch brought back: the final response (closed; its status, headers and URL
    remain), the redirects before it, and at most ``cap`` bytes of its decoded body."""

    response: httpx.Response
    history: list[httpx.Response]
    body: bytes
    cut: bool
    cap: int


@contextmanager
def _fetch_errors(url: str, web: WebConfig) -> Iterator[None]:
    """Turn what a fetch of ``url`` can raise into the tool's errors.

    Raises:
        ToolTimeout: the fetch took longer than ``[web] timeout_seconds``, or httpx timed out.
        NetworkError: too many redirects, an invalid URL or protocol, or any other httpx failure.
    """
    import httpx

    try:
        yield
    except TimeoutError as exc:
        raise ToolTimeout(
            f"fetching {url} took longer than {web.timeout_seconds} s; try again or a smaller resource"
        ) from exc
    except httpx.TooManyRedirects as exc:
        raise NetworkError(f"more than {web.max_redirects} redirects fetching {url}") from exc
    except httpx.InvalidURL as exc:
        raise NetworkError(f"not a valid URL: {url}: {exc}") from exc
    except httpx.UnsupportedProtocol as exc:
        raise NetworkError(f"cannot fetch {url}: {exc}; only http and https URLs work") from exc
    except httpx.TimeoutException as exc:
        raise ToolTimeout(f"fetching {url} timed out: {exc or type(exc).__name__}") from exc
    except httpx.HTTPError as exc:
        raise NetworkError(f"fetching {url} failed: {exc or type(exc).__name__}") from exc


async def _download(
    args: HttpGetArgs, *, web: WebConfig, policy: NetworkPolicy, proxies: dict[str, str]
) -> _Fetched:
    """The first step of httpget: the request (and each redirect) sent through the checking
    transport within ``[web] timeout_seconds``, and the body read within the byte budget.

    Raises:
        PolicyViolation: the URL, a redirect or an address is refused by ``[web]``.
        NetworkError, ToolTimeout: as ``_fetch_errors`` says.
        UnsupportedContent: stacked or unknown content encodings, or a corrupt compressed body.
    """
    import httpx  # on the first fetch: it costs ~35 ms of start-up

    from mcp_localtools.tools.web._fetch import PinnedTransport

    cap = min(args.max_bytes or web.max_bytes, web.max_bytes)
    headers = {
        "User-Agent": f"mcp-localtools/{__version__} (httpget)",
        "Accept": "*/*",
        "Accept-Encoding": ACCEPT_ENCODING,
    }
    with _fetch_errors(args.url, web), anyio.fail_after(web.timeout_seconds):
        async with httpx.AsyncClient(
            transport=PinnedTransport(policy, proxies),
            timeout=httpx.Timeout(web.timeout_seconds),
            headers=headers,
            trust_env=False,
        ) as client:
            response, history = await _fetch(client, args.method, args.url, web.max_redirects)
            try:
                body, cut = (
                    (b"", False) if args.method == "HEAD" else await _read_body(response, cap, args.url)
                )
            finally:
                await response.aclose()
    return _Fetched(response, history, body, cut, cap)


def _common(args: HttpGetArgs, fetched: _Fetched) -> tuple[dict[str, Any], str]:
    """The result fields every kind of content shares, and the head of the text (status line,
    content type, final URL)."""
    response = fetched.response
    content_type = response.headers.get("content-type")
    length = response.headers.get("content-length")
    common: dict[str, Any] = {
        "url": args.url,
        "final_url": str(response.url),
        "status": response.status_code,
        "reason": response.reason_phrase,
        "content_type": content_type,
        "content_length": int(length) if length and length.isdigit() else None,
        "redirects": [str(r.url) for r in fetched.history],
        "bytes_read": len(fetched.body),
    }
    head = f"HTTP {response.status_code} {response.reason_phrase} {content_type or '(no content type)'}"
    head += f"\nfinal URL: {response.url}"
    return common, head


async def _image(fetched: _Fetched, common: dict[str, Any], head: str, parsers: ParserRunner) -> ToolResult:
    """An image body as image content fitted like readimage's (or, cut at the budget, described).

    Raises:
        UnsupportedContent, TooLarge: an image that cannot be decoded or fitted.
    """
    if fetched.cut:
        note = f"image larger than {fetched.cap} bytes: not returned; raise maxBytes or fetch a smaller one"
        result = HttpGetResult(**common, kind="binary", truncated=True, note=note)
        return ToolResult.of(result, text=f"{head}\n{note}")
    fitted = await fit_image(
        parsers,
        fetched.body,
        failure=f"cannot read the image at {fetched.response.url}",
        max_dimension=DEFAULT_MAX_DIMENSION,
        max_bytes=DEFAULT_MAX_IMAGE_BYTES,
    )
    result = HttpGetResult(**common, kind="image", returned=fitted.returned)
    return ToolResult.of(result, ImageContent(fitted.data, fitted.returned.mime_type), text=head)


async def _text(
    args: HttpGetArgs, fetched: _Fetched, common: dict[str, Any], head: str, media: str, max_chars: int
) -> ToolResult:
    """A text body decoded by its charset (HTML converted to Markdown unless ``raw``), cut to
    ``max_chars`` characters; the note says what was cut."""
    text = fetched.body.decode(fetched.response.charset_encoding or "utf-8", errors="replace")
    kind: Literal["markdown", "text"] = "text"
    if media in _HTML and not args.raw:
        text = await anyio.to_thread.run_sync(_to_markdown, text, abandon_on_cancel=True)
        kind = "markdown"
    cut_note = f"the body was cut at {fetched.cap} bytes (decoded)" if fetched.cut else None

    def build(limit: int) -> ToolResult:  # the text in both copies (`content` for Claude Code)
        shown, over = cut_text(text, limit)
        over_note = f"text cut to {len(shown)} of {len(text)} characters to fit the result budget; "
        over_note += "download the page to a file and read that in windows for the rest"
        note = "; ".join(n for n in (cut_note, over_note if over else None) if n) or None
        result = HttpGetResult(**common, kind=kind, truncated=fetched.cut or over, note=note, content=shown)
        return ToolResult.of(result, text=f"{head}\n\n{shown}" + (f"\n[{note}]" if over else ""))

    return fit_within(build, max_chars, max_chars - 1000)


async def http_get(
    args: HttpGetArgs,
    ctx: CallContext,
    *,
    web: WebConfig,
    policy: NetworkPolicy,
    proxies: dict[str, str],
    parsers: ParserRunner,
    max_chars: int,
) -> ToolResult:
    """The httpget tool body, in its steps: download (checked, within the time and byte
    budgets), then render by media type (none, image, text or Markdown, or described).

    Raises:
        PolicyViolation: the URL, a redirect or an address is refused by ``[web]``; a ``file:``
            URL or another scheme than http(s) (``check_url_form``).
        InvalidArguments: a file path or a URL without a scheme (``check_url_form``).
        NetworkError: DNS, connection, TLS or protocol failure, or too many redirects.
        ToolTimeout: the fetch took longer than ``[web] timeout_seconds``.
        UnsupportedContent, TooLarge: an image that cannot be decoded or fitted.
    """
    check_url_form(args.url)
    fetched = await _download(args, web=web, policy=policy, proxies=proxies)
    common, head = _common(args, fetched)
    media = _media_type(fetched.response.headers.get("content-type"))
    body = fetched.body
    if not body:
        return ToolResult.of(HttpGetResult(**common, kind="none"), text=head)
    if media.startswith("image/") and media != "image/svg+xml":
        return await _image(fetched, common, head, parsers)
    if media in _HTML or _is_text(media) or (not media and b"\x00" not in body[:8192]):
        return await _text(args, fetched, common, head, media, max_chars)
    note = (
        f"{media or 'unknown'} content of {len(body)}{'+' if fetched.cut else ''} bytes: not returned as text"
    )
    result = HttpGetResult(**common, kind="binary", truncated=fetched.cut, note=note)
    return ToolResult.of(result, text=f"{head}\n{note}")


def spec(workspace: Workspace) -> ToolSpec[Any]:
    """The httpget tool, bound to ``workspace``.

    Raises:
        ConfigError: a ``[web]`` host entry is malformed.
    """
    web = workspace.config.web
    policy = NetworkPolicy.from_config(web)
    proxies = proxies_from(workspace.environ)
    parsers = workspace.parsers
    max_chars = workspace.limits.max_result_chars

    async def handler(args: HttpGetArgs, ctx: CallContext) -> ToolResult:
        return await http_get(
            args, ctx, web=web, policy=policy, proxies=proxies, parsers=parsers, max_chars=max_chars
        )

    return ToolSpec(
        name="httpget",
        title="Fetch a URL",
        description=(
            "GET or HEAD an http(s) URL. HTML comes back as Markdown, text as text, images as image "
            "content, other types described; the result gives the status, content type and final "
            "URL (a 404 is a result). Redirects are followed and checked. Loopback, private, "
            "link-local and cloud metadata addresses are refused unless the server allowlists them."
        ),
        args_model=HttpGetArgs,
        result_model=HttpGetResult,
        handler=handler,
        check=offload(partial(check_url, policy=policy)),
        annotations=WEB_ANNOTATIONS,
        timeout_seconds=web.timeout_seconds + 30,
    )
