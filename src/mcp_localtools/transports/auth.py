"""The bearer tokens an HTTP request may present: the server's and each profile's, compared in
constant time; a token names its holder (``token_principal``) without revealing it."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping

from mcp.server.auth.provider import AccessToken, TokenVerifier

from mcp_localtools.errors import ConfigError

__all__ = ["PROFILE_SCOPE", "StaticTokenVerifier", "token_principal"]


PROFILE_SCOPE = "mcp-localtools-profile:"
"""Scope prefix of a profile token's ``AccessToken``: the profile's name follows it."""


class StaticTokenVerifier(TokenVerifier):
    """Accepts the server's bearer token and each profile's token, compared in constant time.

    Args:
        token: the server's token (every tool), or None.
        profile_tokens: more tokens, each mapped to a ``[profiles]`` name; the access token of
            one carries the scope ``PROFILE_SCOPE + name``.

    Raises:
        ConfigError: the same token is given twice.
    """

    def __init__(self, token: str | None, profile_tokens: Mapping[str, str] | None = None) -> None:
        self._tokens: list[tuple[bytes, str | None]] = []
        if token is not None:
            self._tokens.append((token.encode("utf-8"), None))
        for secret, profile in (profile_tokens or {}).items():
            if secret == token:
                raise ConfigError(f"profile {profile!r} uses the server's own bearer token; give it its own")
            self._tokens.append((secret.encode("utf-8"), profile))

    async def verify_token(self, token: str) -> AccessToken | None:
        given = token.encode("utf-8")
        found: AccessToken | None = None
        for secret, profile in self._tokens:  # every comparison runs: no early exit to time
            if hmac.compare_digest(given, secret) and found is None:
                scopes = [] if profile is None else [PROFILE_SCOPE + profile]
                found = AccessToken(token="<redacted>", client_id=token_principal(secret), scopes=scopes)  # noqa: S106
        return found


def token_principal(secret: bytes) -> str:
    """Who presented a bearer token, as the owner of what its requests keep (exec sessions,
    processes, kept outputs): ``token-`` and 16 hex digits of the token's SHA-256, which names the
    token without revealing it (audit lines carry it)."""
    return "token-" + hashlib.sha256(secret).hexdigest()[:16]
