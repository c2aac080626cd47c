"""The code group: outlines, definitions and callers, a repository map, and search by meaning.

One module per tool, named for it; each exposes ``spec(workspace)``. The machinery (grammars,
the index, ranking, embeddings) is ``mcp_localtools.codeintel``; ``_group`` is private to this group.
"""

from __future__ import annotations

from mcp_localtools.tools.code import findsymbol, repomap, semanticsearch, symbols
from mcp_localtools.tools.code._group import IndexSummary, build_index

__all__ = ["MODULES", "IndexSummary", "build_index"]

MODULES = (symbols, findsymbol, repomap, semanticsearch)
"""The group's tool modules."""
