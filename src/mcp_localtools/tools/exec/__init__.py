"""The exec tool group: shellcommand and runscript under the execution policy.

Modules: ``group`` (shared state), ``shell`` and ``scripts`` (the tools), ``shells`` (which shell,
which argv), ``sessions``, ``environment`` (allowlisted base env, BootstrapDefaults), ``process``
(spawn, timeout, stop, drain), ``proctree`` (finding escaped descendants), ``output`` (head+tail
capture), ``streaming`` (progress notifications), ``report`` (result fields and text).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcp_localtools.config import ExecConfig, LimitsConfig
from mcp_localtools.policy.paths import PathPolicy
from mcp_localtools.registry import ToolSpec
from mcp_localtools.tools.exec.group import ExecGroup
from mcp_localtools.tools.exec.scripts import script_specs
from mcp_localtools.tools.exec.shell import shell_specs

__all__ = ["ExecGroup", "exec_specs"]


def exec_specs(
    config: ExecConfig, paths: PathPolicy, limits: LimitsConfig, host_env: Mapping[str, str]
) -> list[ToolSpec[Any]]:
    """shellcommand and runscript, bound to one ``ExecGroup``.

    Args:
        host_env: the server's environment; only allowlisted names (and ``base_env``) reach commands.

    Raises:
        ConfigError: a ``denied_patterns`` regex or an ``[exec.scripts]`` entry is invalid.
    """
    group = ExecGroup.create(config, paths, limits, host_env)
    return [*shell_specs(group), *script_specs(group)]
