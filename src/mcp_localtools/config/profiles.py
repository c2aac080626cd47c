"""``[profiles.NAME]``: a tool set and policy overrides a client gets by its token or
``--profile``; and the keys that moved from ``[exec.sandbox]`` to ``[paths]`` (the old place is
still read)."""

from __future__ import annotations

from typing import Any

from pydantic import (
    model_validator,
)

from mcp_localtools.config.base import Section

MOVED_TO_PATHS = ("protected_paths", "unprotected_paths")
"""Keys that moved from ``[exec.sandbox]`` to ``[paths]``; the old place is still read."""


def move_to_paths(data: Any) -> Any:
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


class ProfileConfig(Section):
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
        return move_to_paths(data)

    @property
    def overrides(self) -> dict[str, dict[str, Any]]:
        """The sections this profile sets its own way: section name → its keys (raw TOML values)."""
        return {name: table for name in POLICY_SECTIONS if (table := getattr(self, name))}


POLICY_SECTIONS = ("paths", "exec", "web", "limits")
"""The sections a ``[profiles.NAME]`` may override; the others (``[server]``, ``[audit]``,
``[approval]``, ``[tools]``) belong to the server process, not to a client."""


def merged(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """``base`` with ``override``'s keys: tables merged key by key, other values replaced."""
    out = dict(base)
    for key, value in override.items():
        below = out.get(key)
        out[key] = merged(below, value) if isinstance(value, dict) and isinstance(below, dict) else value
    return out
