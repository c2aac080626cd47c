"""The image group: readimage (metadata, and image content sized for a model).

One module per tool, named for it; each exposes ``spec(workspace)``.
"""

from __future__ import annotations

from mcp_localtools.tools.image import readimage

__all__ = ["MODULES"]

MODULES = (readimage,)
"""The group's tool modules."""
