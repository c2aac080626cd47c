"""Network transports: SSE and Streamable HTTP with a bearer token and DNS-rebinding protection.

What every HTTP request passes before a tool can run:

1. the bearer token (the SDK's ``BearerAuthBackend`` + ``RequireAuthMiddleware`` with a
   constant-time static-token verifier): missing or wrong → 401. The token is read only from the
   ``Authorization`` header, never from the URL, and never logged;
2. the Host and Origin checks (the SDK's ``TransportSecuritySettings``, always enabled and given
   explicitly, because the SDK turns them off for a non-loopback ``host``): foreign Host → 421,
   foreign Origin → 403;
3. the request-body cap (413), and for Streamable HTTP the session idle timeout and the session cap.

In front of those, ``edge.EdgeGuard`` answers 400 to a request with two ``Host`` or two
``Authorization`` headers or with both ``Transfer-Encoding`` and ``Content-Length``; 403 to an
``Origin`` whose scheme, host and numeric port do not exactly match an allowed one (no prefix
match); 401 "invalid bearer token" to a wrong token (a missing one keeps the SDK's "Authentication
required"); 400 with a JSON-RPC error (its id recovered where it can be) to a POST body that
``jsonrpc.parse`` refuses (nesting past ``jsonrpc.MAX_NESTING``, an integer too long to convert,
broken JSON) or whose request id is neither a string nor an integer; and a JSON-RPC error to a
second request whose id is still in flight on the same Streamable HTTP session (the first is
still answered); at ``max_sessions`` a new session evicts the
least recently used idle one instead of getting 503. uvicorn closes a connection that sends no
complete request head within ``HEAD_TIMEOUT_SECONDS``, answers 503 beyond ``limit_concurrency``
connections, and runs with the soft ``RLIMIT_NOFILE`` raised to the hard limit; repeated accept
errors are logged once per ``ACCEPT_ERROR_LOG_SECONDS``.

``/healthz`` answers ``{"status": "ok", "version": ...}`` without authentication and says nothing
else. The one way to run without a token is ``--allow-unauthenticated-loopback``, accepted only
when the server binds a loopback address.

The package: ``auth`` (the bearer tokens a request may present, ``StaticTokenVerifier``),
``edge`` (``NetworkSettings``: what is served where, the Host/Origin rules; ``EdgeGuard``: the
checks in front of the SDK's app) and ``serve`` (``http_app``, ``serve_network``: uvicorn on a
bound socket). Token files are read by ``tokens.py``; the bind rules are ``checks.bind_problems``.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp_localtools.checks import is_loopback
    from mcp_localtools.tokens import MIN_TOKEN_CHARS, read_token_file
    from mcp_localtools.transports.auth import PROFILE_SCOPE, StaticTokenVerifier, token_principal
    from mcp_localtools.transports.edge import NetworkSettings
    from mcp_localtools.transports.serve import http_app, serve_network

__all__ = [
    "MIN_TOKEN_CHARS",
    "PROFILE_SCOPE",
    "NetworkSettings",
    "StaticTokenVerifier",
    "http_app",
    "is_loopback",
    "read_token_file",
    "serve_network",
    "token_principal",
]

_HOME = {
    "MIN_TOKEN_CHARS": "mcp_localtools.tokens",
    "PROFILE_SCOPE": "mcp_localtools.transports.auth",
    "NetworkSettings": "mcp_localtools.transports.edge",
    "StaticTokenVerifier": "mcp_localtools.transports.auth",
    "http_app": "mcp_localtools.transports.serve",
    "is_loopback": "mcp_localtools.checks",
    "read_token_file": "mcp_localtools.tokens",
    "serve_network": "mcp_localtools.transports.serve",
    "token_principal": "mcp_localtools.transports.auth",
}
"""Each public name → its module, imported at first use: a stdio server (whose routes read
``auth.PROFILE_SCOPE``) never imports the HTTP app and uvicorn's glue."""


if not TYPE_CHECKING:  # type checkers read the imports above: a misspelt name stays an error

    def __getattr__(name: str) -> Any:
        if name in _HOME:
            return getattr(import_module(_HOME[name]), name)
        raise AttributeError(f"module 'mcp_localtools.transports' has no attribute {name!r}")
