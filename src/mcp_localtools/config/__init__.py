"""The TOML configuration: pydantic models of every section, and ``load_config``.

Every key is optional; unknown keys and bad values fail at start-up with the key path and the
reason (``paths.allowed_roots[0]: ...``). Limits come in three tiers (``docs/ARCHITECTURE.md``):
the hard maxima are constants, the config sets defaults under them, and a call may ask for less
(or, where a tool allows it, more up to the configured maximum). ``config.example.toml``
documents every key and its default.

One module per concept; import their names from here:

- ``base``: the hard maxima (``HARD_MAX_*``) and ``Section``, the base model of every section;
- ``files``: ``[paths]``, ``[tools]``, ``[limits]``, ``[index]``;
- ``commands``: ``[exec]``, ``[exec.sandbox]``, ``[exec.scripts]``, ``host_and_port``;
- ``serving``: ``[web]``, ``[server]``, ``[approval]``, ``[audit]``;
- ``profiles``: ``[profiles.NAME]``, the sections a profile may override, and the keys that
  moved from ``[exec.sandbox]`` to ``[paths]``;
- ``loading``: ``Config`` (the whole file), ``parse_config`` and ``load_config``.
"""

from __future__ import annotations

from mcp_localtools.config.base import (
    HARD_MAX_COMMAND_LENGTH,
    HARD_MAX_COMMANDS,
    HARD_MAX_OUTPUT_BYTES,
    HARD_MAX_READ_BYTES,
    HARD_MAX_READ_LINES,
    HARD_MAX_RESULT_CHARS,
    HARD_MAX_TIMEOUT_SECONDS,
    HARD_MAX_WRITE_BYTES,
)
from mcp_localtools.config.commands import (
    DEFAULT_PASS_ENV,
    ExecConfig,
    SandboxConfig,
    SandboxMode,
    ScriptsConfig,
    ShellName,
    host_and_port,
)
from mcp_localtools.config.files import IndexConfig, LimitsConfig, PathsConfig, ToolsConfig
from mcp_localtools.config.loading import Config, load_config, parse_config
from mcp_localtools.config.profiles import MOVED_TO_PATHS, POLICY_SECTIONS, ProfileConfig
from mcp_localtools.config.serving import (
    APPROVAL_CLASSES,
    ApprovalConfig,
    AuditConfig,
    ServerConfig,
    WebConfig,
)

__all__ = [
    "APPROVAL_CLASSES",
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
    "IndexConfig",
    "LimitsConfig",
    "PathsConfig",
    "ProfileConfig",
    "SandboxConfig",
    "SandboxMode",
    "ScriptsConfig",
    "ServerConfig",
    "ShellName",
    "ToolsConfig",
    "WebConfig",
    "host_and_port",
    "load_config",
    "parse_config",
]
