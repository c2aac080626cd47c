"""The sections of the server process: ``[web]`` (httpget's hosts), ``[server]`` (transport,
binding, sessions), ``[approval]`` (who is asked, about what) and ``[audit]`` (the call log)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import (
    Field,
    field_validator,
)

from mcp_localtools.config.base import (
    HARD_MAX_READ_BYTES,
    HARD_MAX_TIMEOUT_SECONDS,
    HARD_MAX_WRITE_BYTES,
    MiB,
    Section,
)


class WebConfig(Section):
    """``[web]``: where httpget may connect (``policy/network.py``)."""

    allowed_hosts: list[str] = []
    """Host globs (``"docs.python.org"``, ``"*.example.com"``), IP addresses or CIDR networks;
    empty: any host with a public address. A loopback, private or link-local address is reached
    only when its host name or address is listed here (not through a bare ``"*"``), a cloud
    metadata address only when the address itself is listed."""
    blocked_hosts: list[str] = []
    """Host globs, IP addresses or CIDR networks always refused (checked before ``allowed_hosts``)."""
    max_bytes: Annotated[int, Field(ge=1024, le=HARD_MAX_READ_BYTES)] = 4 * MiB
    """Most bytes of a response body read; a longer body is cut (text) or refused (images)."""
    timeout_seconds: Annotated[int, Field(ge=1, le=HARD_MAX_TIMEOUT_SECONDS)] = 30
    """Time for the whole fetch, redirects included."""
    max_redirects: Annotated[int, Field(ge=0, le=20)] = 5
    """Redirects followed; each target is checked like the first URL."""


class ServerConfig(Section):
    """``[server]``: the transport and its network settings."""

    transport: Literal["stdio", "sse", "streamable-http"] = "stdio"
    host: str = "127.0.0.1"
    port: Annotated[int, Field(ge=1, le=65535)] = 8765
    auth_token_file: str = ""
    allowed_hosts: list[str] = []
    allowed_origins: list[str] = []
    max_request_body_bytes: Annotated[int, Field(ge=1024, le=HARD_MAX_WRITE_BYTES * 2)] = 4 * MiB
    session_idle_timeout_seconds: Annotated[int, Field(ge=1)] = 1800
    max_sessions: Annotated[int, Field(ge=1, le=100_000)] = 100
    max_stdio_line_bytes: Annotated[int, Field(ge=0, le=HARD_MAX_WRITE_BYTES * 2)] = 0
    """stdio: longest message line in bytes; longer ones are refused unread. 0: 2 x ``max_write_bytes``."""
    select_tools: bool = False
    """Serve ``selecttools``: a client narrows its own session's tool set (to a profile's, or to
    named tools and groups) and is sent ``notifications/tools/list_changed``."""


APPROVAL_CLASSES: tuple[str, ...] = ("destructive", "writes", "exec", "all")
"""The classes ``[approval] require`` accepts besides tool names (``approval.py``)."""


class ApprovalConfig(Section):
    """``[approval]``: which calls wait for a person's yes, asked through MCP elicitation."""

    require: list[str] = []
    """Tool names (``"shellcommand"``) and classes: ``"destructive"`` (tools annotated destructive),
    ``"writes"`` (every tool that is not read-only), ``"exec"`` (the command tools), ``"all"``."""
    on_unsupported: Literal["refuse", "allow"] = "refuse"
    """What a call that needs approval does when the client cannot ask (no elicitation support,
    the JSON command line): refuse it (default), or run it without asking."""
    timeout_seconds: Annotated[int, Field(ge=1, le=HARD_MAX_TIMEOUT_SECONDS)] = 120
    """How long the server waits for the answer (seconds); no answer is a refusal."""
    trusted_commands: list[str] = []
    """Program names (``git``, ``ls``, ``pytest``) a shellcommand call may run without asking
    although ``require`` names it: a call is not asked when every program each of its commands
    runs is one of these (bare literal names found on the commands' ``PATH`` outside the roots,
    through their real paths; wrappers such as ``env`` or ``xargs`` are judged by the program
    they run) and no command redirects output (``>``) or sets ``PATH``/``LD_PRELOAD``-like
    variables. Trust them with any arguments."""
    prompt: Annotated[str, Field(max_length=2000)] = ""
    """Text shown first in every question (Hector's ``ApprovalPrompt``): the house rule the person
    should weigh, "Commands may change only this project."; empty: none."""
    session_approval: bool = True
    """Offer "approve for this session" (handshake-era connections only; the 2026-07-28 revision
    has no sessions): the same call with the same arguments is not asked again on that connection."""

    @field_validator("trusted_commands")
    @classmethod
    def _programs(cls, names: list[str]) -> list[str]:
        for name in names:
            if not name.strip() or any(ch.isspace() or ch in "/\\" for ch in name) or "\x00" in name:
                raise ValueError(f"{name!r} is not a program name (no spaces or slashes, not empty)")
        return names

    @field_validator("require")
    @classmethod
    def _names(cls, names: list[str]) -> list[str]:
        for name in names:
            if not name.strip() or not name.isalnum() or not name.islower():
                raise ValueError(f"{name!r} is not a tool name or one of {', '.join(APPROVAL_CLASSES)}")
        return names


class AuditConfig(Section):
    """``[audit]``: one JSON line per tool call (``audit.py``)."""

    enabled: bool = False
    """Write the audit log."""
    path: str = ""
    """The log file; default ``$XDG_STATE_HOME/mcp-localtools/audit.jsonl`` (else
    ``~/.local/state/...``), outside the roots. Protected from the tools when it lies in a root.
    Needs ``enabled`` to be given (``checks.check`` refuses a path alone: it would write nothing)."""
    required: bool = False
    """Fail closed: refuse every call while the log cannot be written (the server still starts
    and says so at ERROR). Needs ``enabled`` (``checks.check`` refuses it alone)."""
    max_bytes: Annotated[int, Field(ge=4096)] = 10 * MiB
    """Rotate when the file would grow past this size (bytes)."""
    keep: Annotated[int, Field(ge=1, le=100)] = 5
    """Rotated files kept (``audit.jsonl.1`` is the newest)."""
    secret_names: list[str] = [
        "*TOKEN*",
        "*KEY*",
        "*SECRET*",
        "*PASSWORD*",
        "*PASSWD*",
        "*CREDENTIAL*",
        "*AUTH*",
        "*SIGNATURE*",
        "SIG",
        "*COOKIE*",
    ]
    """Argument and variable names (globs, any case) whose values are masked."""
    content_keys: list[str] = [
        "content",
        "stdin",
        "oldText",
        "newText",
        "linesToInsert",
        "replaceWithLines",
        "matchLines",
        "beforeLines",
        "afterLines",
        "anchorMatchLines",
        "startMatchLines",
        "endMatchLines",
    ]
    """Arguments that carry file contents: logged as their size and sha256 only."""
