"""The code group: outlines, definitions and callers, a repository map, and search by meaning.

One module per tool, named for it and listed in ``tools.GROUPS``; each exposes
``spec(workspace)``. The machinery (grammars, the index, ranking, embeddings) is
``mcp_localtools.codeintel``; ``_group`` is private to this group.
"""

from __future__ import annotations

from mcp_localtools.tools.code._group import IndexSummary, build_index

__all__ = ["IndexSummary", "build_index"]
