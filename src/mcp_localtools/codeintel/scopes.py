"""Names a function binds for itself: a bare use of one inside it is a local, not a use of a
definition elsewhere (tree-sitter's locals queries, ``queries/<language>.locals.scm``: scopes and
the names each binds: parameters, assignments, declarations).

``unshadowed`` drops from a file's references the bare names a scope around them binds, so that
``findsymbol`` and ``semanticsearch`` callers count only uses that can reach the definition; a
name after ``object.`` is a member, never shadowed by a local.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from mcp_localtools.codeintel.imports import is_member

if TYPE_CHECKING:
    import tree_sitter

__all__ = ["unshadowed"]


def unshadowed(
    query: tree_sitter.Query,
    tree: tree_sitter.Tree,
    source: bytes,
    references: Sequence[tuple[tree_sitter.Node, str]],
) -> list[tuple[tree_sitter.Node, str]]:
    """``references`` (a use's name node, its kind) but those whose bare name a scope around
    them binds, by the locals ``query`` (``@local.scope``, ``@local.definition``) of the parsed
    file ``tree`` of ``source``."""
    import tree_sitter

    found = tree_sitter.QueryCursor(query).captures(tree.root_node)
    scopes = {node.id for node in found.get("local.scope", [])}
    bound: dict[int, set[str]] = {}
    for node in found.get("local.definition", []):
        owner = node.parent
        while owner is not None and owner.id not in scopes:
            owner = owner.parent
        if owner is not None:
            bound.setdefault(owner.id, set()).add(
                source[node.start_byte : node.end_byte].decode("utf-8", "replace")
            )
    names = set().union(*bound.values()) if bound else set()
    kept: list[tuple[tree_sitter.Node, str]] = []
    for node, kind in references:
        name = source[node.start_byte : node.end_byte].decode("utf-8", "replace")
        if name in names and not is_member(node) and _bound_around(node, name, bound):
            continue
        kept.append((node, kind))
    return kept


def _bound_around(node: tree_sitter.Node, name: str, bound: dict[int, set[str]]) -> bool:
    """Whether a scope around ``node`` binds ``name``."""
    owner = node.parent
    while owner is not None:
        if name in bound.get(owner.id, ()):
            return True
        owner = owner.parent
    return False
