"""What of a call's arguments may be logged or shown to a person: ``Scrubber``.

Arguments that carry file contents (``[audit] content_keys``: ``content``, ``stdin``,
``newText``, ...) become ``{"bytes": n, "sha256": ...}`` in the audit log (cut to 1000
characters in an approval question); every ``env`` value is masked; a value whose name matches
``[audit] secret_names`` (``*TOKEN*``, ``*KEY*``, ...) is masked; in every other string, anywhere
in it: ``Authorization`` credentials, well-known token shapes and PEM private keys, a URL's
password (``https://user:***@host``), secret-named query parameters, ``-u user:password``,
``-pPASSWORD``, ``-p PASSWORD`` of ``sshpass`` and ``docker``/``podman login``, OpenSSL's
``-passin pass:PASSWORD``, ``config set NAME value``, and ``NAME=value`` / ``NAME = value`` /
``name: value`` / ``--name value`` / JSON ``"name": value`` pairs with a secret-looking name;
long strings are cut. The audit log (``audit.py``) uses it; the approval question
(``approval.py``) takes only ``content_keys`` from it and shows everything else verbatim.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any

from mcp_localtools.config import AuditConfig

__all__ = ["MASK", "Scrubber", "digest"]

MASK = "***"
_MAX_STRING = 1000
"""Longest string kept in a logged argument (characters); longer ones are cut and hashed."""
_SCRUBBED_CHARS = _MAX_STRING + 4096
"""How much of a long string is scrubbed (characters): what is kept, and beyond it room for a
secret that begins before the cut to be seen whole. The rest is only hashed, so the cost of a
string is bounded whatever its length."""
_NAME_CHARS = 64
"""Longest name part a pattern reads (characters after the first): bounded, so no pattern rescans
a long run of name characters from each of its starts (``a.a.a.a...`` was quadratic)."""

_SHAPES = (
    r"(?s)(?i:bearer|basic|token|digest)\s+[A-Za-z0-9._~+/=-]{8,}"
    r"|\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|glpat-[A-Za-z0-9_-]{16,}"
    r"|sk-[A-Za-z0-9_-]{16,}|sk_(?:live|test)_[A-Za-z0-9]{16,}|[rp]k_(?:live|test)_[A-Za-z0-9]{16,}"
    r"|xox[abprse]-[A-Za-z0-9-]{10,}|(?:AKIA|ASIA)[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{35}"
    r"|npm_[A-Za-z0-9]{36}|hf_[A-Za-z0-9]{30,}|pypi-[A-Za-z0-9_-]{50,}"
    r"|eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})"
    r"|-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)"
)
"""Secrets recognised by their shape alone: an ``Authorization`` scheme and its credentials,
well-known token prefixes (GitHub, GitLab, OpenAI/Anthropic, Stripe, Slack, AWS, Google, npm,
Hugging Face, PyPI), JWTs, and PEM private-key blocks."""
_URL_USERINFO = (
    r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]{0,31}://)(?P<user>[^/\s:@'\"]*)(?::(?P<password>[^/\s@'\"]*))?@"
)
"""``scheme://user:password@host``: the password (and a user name that is itself a token, as in
``https://<token>@github.com``) is masked, the host kept."""
_USER_FLAG = r"(?P<flag>(?<![\w-])(?:-u|--user)(?:[ \t]+|=))(?P<user>[^\s:'\"]+):(?P<password>[^\s'\"]+)"
"""curl's ``-u user:password`` / ``--user user:password``."""
_ATTACHED_P = r"(?P<flag>(?<![\w-])-p)(?P<value>'[^']*'|\"[^\"]*\"|[^\s'\"-][^\s'\"]*)"
"""The MySQL/MariaDB client's ``-pPASSWORD``, also quoted (``-p'pass word'``; attached: ``-p 22``
and ``mkdir -p`` are left alone); see ``_attached_password``."""
_MYSQL = r"(?i)\b(?:mysql\w*|mariadb\w*)\b"
_SEPARATE_P = r"(?P<flag>(?<![\w-])-p[ \t]+)(?P<value>'[^']*'|\"[^\"]*\"|[^\s'\"-][^\s'\"]*)"
"""``-p PASSWORD`` (a word of its own), masked only in a command of ``_P_PASSWORD`` (``ssh -p 22``
is a port)."""
_P_PASSWORD = r"\bsshpass\b|\b(?:docker|podman|nerdctl|buildah)\b[^\n;&|]{0,200}?\blogin\b"  # noqa: S105
"""Commands whose ``-p`` takes a password: ``sshpass -p``, ``docker``/``podman login -p``."""
_OPENSSL_PASS = r"(?P<flag>(?<![\w-])-pass(?:in|out|word)?[ \t]+['\"]?pass:)(?P<value>[^\s'\"]+)"  # noqa: S105
"""OpenSSL's ``-passin pass:PASSWORD`` / ``-passout pass:PASSWORD`` / ``-pass pass:PASSWORD``."""
_CONFIG_SET = (
    r"(?P<name>(?<![\w-])config(?:ure)?[ \t]+set[ \t]+[^\s=]{1,200})(?P<sep>[ \t]+)"
    r"(?P<value>\"[^\"]*\"|'[^']*'|\S+)"
)
"""``aws configure set aws_secret_access_key VALUE``, ``npm config set //host/:_authToken VALUE``:
masked when the setting's name looks secret."""
_FLAG_LETTERS = r"[a-z]{1,12}"
_JSON_PAIR = (
    rf'"(?P<name>[A-Za-z_][\w.-]{{0,{_NAME_CHARS}}})"(?P<sep>\s*:\s*)(?P<value>"(?:[^"\\]|\\.)*"|[^\s,}}\]]+)'
)
"""``"password": "..."`` in JSON written into a string."""
_VALUE = r"(?P<value>\"[^\"]*\"|'[^']*'|[^\s\"',;&|]+)"
_ASSIGNMENT = (
    rf"(?P<name>\b[A-Za-z_][\w.-]{{0,{_NAME_CHARS}}})"
    rf"(?P<sep>[ \t]{{0,16}}=[ \t]{{0,16}}|:(?!//)(?!{re.escape(MASK)}@)[ \t]*)" + _VALUE
)
"""``NAME=value`` (also ``NAME = value``), ``name: value`` (YAML, HTTP headers) and ``?name=value``
query parameters; neither a URL's ``scheme://`` nor its ``user:***@`` (its password, masked
before) is a ``name:``, so the query parameters after them are still seen (``user:`` took the
rest of the URL, ``?token=...`` included, for its value)."""
_FLAG = rf"(?P<name>(?<![\w-])--?[A-Za-z][\w-]{{0,{_NAME_CHARS}}})(?P<sep>[ \t]+)(?!-)" + _VALUE
"""``--name value`` / ``-name value``; the value never starts with ``-``, so ``--verbose`` does not
take ``--password`` for its value and hide the pair after it."""
_TOKEN_USER_CHARS = 16
"""A URL user name this long is taken for a token (``https://ghp_...@github.com``) and masked."""


@functools.cache
def _re(source: str) -> re.Pattern[str]:
    """The pattern ``source`` (one of the module's), compiled at its first use: a server that never
    scrubs (no audit log, no question with text) never compiles them."""
    return re.compile(source)


def digest(data: bytes) -> dict[str, Any]:
    """``{"bytes": n, "sha256": ...}`` of ``data``."""
    return {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}


@dataclass(frozen=True)
class Scrubber:
    """Masks secrets and replaces contents in arguments before they are logged.

    Args:
        secret_names: globs (any case) of names whose values are masked.
        content_keys: argument names whose values are file contents (logged as size + sha256).
    """

    secret_names: tuple[str, ...]
    content_keys: frozenset[str]

    @classmethod
    def of(cls, config: AuditConfig) -> Scrubber:
        return cls(tuple(name.upper() for name in config.secret_names), frozenset(config.content_keys))

    def secret_name(self, name: str) -> bool:
        """True when ``name`` looks like it holds a secret."""
        upper = name.upper().lstrip("-")
        return any(fnmatchcase(upper, pattern) for pattern in self.secret_names)

    def arguments(self, arguments: Mapping[str, Any], *, contents: bool = False) -> dict[str, Any]:
        """``arguments`` as they may be logged; with ``contents``, as they may be shown to the
        person approving the call (contents kept, cut to 1000 characters; secrets still masked)."""
        return {str(key): self._value(str(key), value, contents) for key, value in arguments.items()}

    def _value(self, key: str, value: Any, contents: bool) -> Any:
        if key in self.content_keys and value is not None:
            text = "\n".join(map(str, value)) if isinstance(value, list) else str(value)
            if contents:
                return (
                    text if len(text) <= _MAX_STRING else text[:_MAX_STRING] + f"[... {len(text)} characters]"
                )
            return digest(text.encode("utf-8", "surrogatepass"))
        if key == "env" and isinstance(value, Mapping):
            return {str(name): MASK for name in value}
        if self.secret_name(key) and value not in (None, "", [], {}):
            return MASK
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, Mapping):
            return {str(k): self._value(str(k), v, contents) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self._value(key, item, contents) for item in value]
        return value

    def text(self, text: str) -> str:
        """``text`` with secrets masked wherever they appear (``_SHAPES``; a URL's user
        password; ``-u user:password``; ``-pPASSWORD``; ``NAME=value``, ``name: value``, query
        parameters, ``--name value`` and JSON pairs whose name matches ``secret_names``), cut to
        1000 characters (then the original's size and sha256 follow). Linear in ``text``'s length:
        only its first ``_SCRUBBED_CHARS`` characters are searched."""
        head = text[:_SCRUBBED_CHARS]
        masked = _re(_SHAPES).sub(MASK, head)
        masked = _re(_URL_USERINFO).sub(_masked_userinfo, masked)
        masked = _re(_USER_FLAG).sub(lambda m: f"{m['flag']}{m['user']}:{MASK}", masked)
        mysql = _re(_MYSQL).search(masked) is not None
        masked = _re(_ATTACHED_P).sub(lambda m: _attached_password(m, mysql=mysql), masked)
        if _re(_P_PASSWORD).search(masked) is not None:
            masked = _re(_SEPARATE_P).sub(_masked_value, masked)
        masked = _re(_OPENSSL_PASS).sub(_masked_value, masked)
        for pattern in (_JSON_PAIR, _CONFIG_SET, _ASSIGNMENT, _FLAG):
            masked = _re(pattern).sub(self._masked_pair, masked)
        if len(masked) > _MAX_STRING or len(head) < len(text):
            info = digest(text.encode("utf-8", "surrogatepass"))
            masked = masked[:_MAX_STRING] + f"[... cut: {info['bytes']} bytes, sha256 {info['sha256']}]"
        return masked

    def _masked_pair(self, match: re.Match[str]) -> str:
        if not self.secret_name(match["name"]) or match["value"].strip("\"'").startswith(MASK):
            return match[0]
        quote = '"' if match["value"].startswith('"') and match[0].startswith('"') else ""
        name = f'"{match["name"]}"' if match[0].startswith('"') else match["name"]
        return f"{name}{match['sep']}{quote}{MASK}{quote}"


def _attached_password(match: re.Match[str], *, mysql: bool) -> str:
    """``-pVALUE`` masked when it is quoted, when the command runs a MySQL-family client, or when
    VALUE does not read as more short flags (``-pr``, ``-pv``) or a long option (``-password``)."""
    value = match["value"]
    if value[:1] in ("'", '"'):  # quoted: a value, never more short flags
        return f"{match['flag']}{value[0]}{MASK}{value[0]}"
    if mysql or not _re(_FLAG_LETTERS).fullmatch(value):
        return match["flag"] + MASK
    return match[0]


def _masked_value(match: re.Match[str]) -> str:
    """``flag`` kept, ``value`` masked (quotes kept)."""
    value = match["value"]
    quote = value[0] if value[:1] in ("'", '"') and value[-1:] == value[0] and len(value) > 1 else ""
    return f"{match['flag']}{quote}{MASK}{quote}"


def _masked_userinfo(match: re.Match[str]) -> str:
    user = match["user"]
    if match["password"] is None:
        shown = MASK if len(user) >= _TOKEN_USER_CHARS or user == MASK else user
        return f"{match['scheme']}{shown}@"
    return f"{match['scheme']}{user}:{MASK}@"
