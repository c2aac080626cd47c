"""The policies a tool asks before it touches the system."""

from .paths import PathPolicy, ResolvedPath

__all__ = ["PathPolicy", "ResolvedPath"]
