"""The policies a tool asks before it touches the system."""

from mcp_localtools.policy.paths import PathPolicy, ResolvedPath

__all__ = ["PathPolicy", "ResolvedPath"]
