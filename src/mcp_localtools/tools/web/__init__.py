"""The web group: httpget (a URL fetched under the ``[web]`` network policy).

One module per tool, named for it; each exposes ``spec(workspace)``.
"""

from __future__ import annotations

from mcp_localtools.tools.web import httpget

__all__ = ["MODULES"]

MODULES = (httpget,)
"""The group's tool modules."""
