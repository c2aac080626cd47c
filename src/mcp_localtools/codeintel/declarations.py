"""What a definition's node says of it: its first line with its decorations, its signature and
its doc line.

``tags`` finds definitions with its queries; this module reads each one's node. A definition's
decorators, attributes and annotations (Python's and TypeScript's ``@decorator``, Rust's
``#[...]``, C#'s ``[...]``, Java's annotations) are its first lines, the doc comment above them is
its doc, and its signature is its declaration's, not its first decorator's. Pure functions of
tree-sitter nodes and the source bytes.
"""

from __future__ import annotations

import html
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import tree_sitter

__all__ = ["MAX_DOC", "MAX_SIGNATURE", "body_of", "doc_of", "first_line", "node_text", "signature"]

MAX_SIGNATURE = 200
"""Characters of a signature (white space collapsed); longer ones end with an ellipsis."""
MAX_DOC = 160
"""Characters of the first docstring or comment line."""

_COMMENTS = frozenset({"comment", "line_comment", "block_comment", "doc_comment"})
_WRAPPERS = frozenset(
    {
        "export_statement", "decorated_definition", "template_declaration", "ambient_declaration",
        "type_declaration", "const_declaration", "var_declaration", "expression_statement",
    }
)  # fmt: skip
_DECORATIONS = frozenset({"decorator", "attribute_item", "attribute_list", "annotation", "marker_annotation"})
"""What a definition is decorated with, written before it: Python's and TypeScript's decorators,
Rust's ``#[...]`` and C#'s ``[...]`` attributes, Java's annotations (inside its ``modifiers``)."""
_DECORATED = frozenset({"decorated_definition", "export_statement"})
"""Wrappers whose start is their definition's when it is decorated (``@d def f``, ``@d export
class C``)."""
_MARKED_UP = frozenset({"csharp", "java", "javascript", "typescript", "tsx"})
"""Languages whose doc comments hold markup (``_MARKUP``)."""
_MARKUP = re.compile(
    r"<(/?)(summary|remarks|returns|value|para|p|br|b|i|u|em|strong|tt|code|c|pre|ul|ol|li|dl|dt|dd"
    r"|h[1-6]|example|inheritdoc|a|see|seealso|paramref|typeparamref)"
    r"((?:\s+[\w:.-]+\s*=\s*(?:\"[^\"]*\"|'[^']*'))*)\s*(/?)>"
    r"|\{@(?:code|link|linkplain|linkcode|literal|value|return|summary)\s([^{}]*)\}"
    r"|\{@inheritDoc\}"
)
"""A doc comment's markup: C#'s XML documentation tags, Javadoc's HTML and inline tags, JSDoc's and
TSDoc's inline tags. A tag is its name then only attributes (``a<b and c>d``, ``<b-table>`` are
not tags). Its separators are single characters where a run could split two ways (``{@code x}``),
and a line is cut to ``4 * MAX_DOC`` characters before it runs, which bounds its work."""
_NAMING = frozenset({"see", "seealso", "paramref", "typeparamref"})
"""Tags that stand for a name: ``<see cref="X"/>`` reads as ``X``."""
_INLINE = frozenset({"b", "i", "u", "em", "strong", "tt", "code", "c", "a"})
"""Tags within a line's words (``a <c>herd</c>.``); the others part words (``a.<br>B``)."""
_VALUE = re.compile(r"=\s*(?:\"([^\"]*)\"|'([^']*)')")


def _unmarked(match: re.Match[str]) -> str:
    """What a piece of markup reads as: the name a ``<see cref="X"/>`` stands for, an inline tag's
    text (``{@code x}``: ``x``), nothing for a tag within words, else a space."""
    if match[5] is not None:
        return match[5].strip()
    if match[2] in _NAMING and match[4] and (value := _VALUE.search(match[3] or "")):
        return value[1] if value[1] is not None else value[2]
    return "" if match[2] in _INLINE else " "


def node_text(node: tree_sitter.Node, source: bytes) -> str:
    """The source text of ``node`` (invalid UTF-8 replaced)."""
    return source[node.start_byte : node.end_byte].decode("utf-8", "replace")


def body_of(node: tree_sitter.Node) -> tree_sitter.Node | None:
    """A definition's body node (a JavaScript declarator's: its function value's), or None."""
    body = node.child_by_field_name("body")
    if body is None:
        for child in node.named_children:  # JavaScript declarators: the function's body
            if child.type == "variable_declarator":
                return body_of(child)
        value = node.child_by_field_name("value")
        if value is not None and value.type in ("arrow_function", "function_expression", "function"):
            body = value.child_by_field_name("body")
    return body


def first_line(node: tree_sitter.Node) -> int:
    """The 0-based row a definition starts on with its decorations: the wrapper it is decorated
    in (Python's ``decorated_definition``, an ``export_statement`` that starts with decorators),
    and the decorations just before it (a TypeScript method's, Rust's attributes), comments among
    them included."""
    first = node
    while first.parent is not None and first.parent.type in _DECORATED:
        first = first.parent
    sibling = first.prev_named_sibling
    while sibling is not None and (sibling.type in _DECORATIONS or sibling.type in _COMMENTS):
        if sibling.type in _DECORATIONS:  # past comments between them, not past those above them
            first = sibling
        sibling = sibling.prev_named_sibling
    return min(first.start_point[0], node.start_point[0])


def _signature_start(node: tree_sitter.Node) -> int:
    """The byte a definition's signature starts at: its first child that is not a decoration
    (Java's annotations are inside its ``modifiers``, C#'s attribute lists and TypeScript's class
    decorators are its children), else its start."""
    for child in node.children:
        if child.type == "modifiers":
            kept = [part for part in child.children if part.type not in _DECORATIONS]
            if kept:
                return int(kept[0].start_byte)
        elif child.type not in _DECORATIONS and not child.type.endswith("comment"):
            return int(child.start_byte)
    return int(node.start_byte)


def signature(node: tree_sitter.Node, source: bytes) -> str:
    """A definition's signature: its text from its first child that is not a decoration up to its
    body, as many lines as its open brackets need, white space collapsed, at most
    ``MAX_SIGNATURE`` characters (longer ones end with an ellipsis)."""
    body = body_of(node)
    start = _signature_start(node)
    end = body.start_byte if body is not None and body.start_byte > start else node.end_byte
    kept: list[str] = []
    depth = 0
    for line in source[start:end].decode("utf-8", "replace").splitlines():
        kept.append(line)
        depth += line.count("(") + line.count("[") - line.count(")") - line.count("]")
        if depth <= 0:  # the first line, or as many as its open brackets need
            break
    text = " ".join(" ".join(kept).split()).rstrip("{ ").rstrip()
    return text if len(text) <= MAX_SIGNATURE else text[: MAX_SIGNATURE - 1] + "…"


def _clean_comment(text: str, language: str) -> str:
    """The first line of a comment's or docstring's text that says something, without its
    comment markers and, in ``_MARKED_UP`` languages, its markup (``_MARKUP``; C# and Java's
    character references decoded), at most ``MAX_DOC`` characters; ``""`` for none."""
    marked_up = language in _MARKED_UP
    for raw in text.splitlines():
        line = raw.strip()[: 4 * MAX_DOC]  # what markup can take from a doc line, bounded
        for prefix in ("/**", "/*!", "/*", "///", "//!", "//", "#", "*"):
            if line.startswith(prefix):
                line = line[len(prefix) :]
                break
        line = line.removesuffix("*/").strip().lstrip("*").strip()
        if marked_up:
            line = " ".join(_MARKUP.sub(_unmarked, line).split())
            if "&" in line and language in ("csharp", "java"):
                line = html.unescape(line)
        if line and set(line) - set("-=*#/"):
            return line if len(line) <= MAX_DOC else line[: MAX_DOC - 1] + "…"
    return ""


def _python_docstring(node: tree_sitter.Node, source: bytes) -> str:
    body = node.child_by_field_name("body")
    if body is None or not body.named_children:
        return ""
    first = body.named_children[0]
    if first.type != "expression_statement" or not first.named_children:
        return ""
    string = first.named_children[0]
    if string.type != "string":
        return ""
    text = node_text(string, source).lstrip("rRbBuUfF")
    return _clean_comment(text.strip("\"'"), "python")


def _leading_comment(node: tree_sitter.Node, source: bytes, language: str) -> str:
    """The doc line of the comments just above a definition (its wrappers'; one blank line
    between allowed): those above its decorations, else those among them."""
    if node.type == "variable_declarator" and node.parent is not None and _first_declarator(node):
        node = node.parent  # /** doc */ const h = ..., k = ...: the statement's comment is h's
    while node.parent is not None and node.parent.type in _WRAPPERS:
        node = node.parent
    comments: list[tree_sitter.Node] = []
    between: list[tree_sitter.Node] = []  # the comments nearest it, below a decoration
    row = node.start_point[0]
    sibling = node.prev_named_sibling
    while sibling is not None and sibling.end_point[0] >= row - 2:
        if sibling.type in _DECORATIONS:
            between, comments = between or comments, []  # the doc is the comment above them all
        elif sibling.type in _COMMENTS:
            comments.append(sibling)
        else:
            break
        row = sibling.start_point[0]
        sibling = sibling.prev_named_sibling
    chosen = comments or between
    return _clean_comment("\n".join(node_text(c, source) for c in reversed(chosen)), language)


def _first_declarator(declarator: tree_sitter.Node) -> bool:
    """Whether ``declarator`` comes first in its statement (no declarator before it)."""
    sibling = declarator.prev_named_sibling
    while sibling is not None and sibling.type == "comment":
        sibling = sibling.prev_named_sibling
    return sibling is None or sibling.type != "variable_declarator"


def doc_of(node: tree_sitter.Node, source: bytes, language: str) -> str:
    """A definition's doc line: Python's docstring, else the comment above it; ``""`` for none."""
    if language == "python":
        return _python_docstring(node, source) or _leading_comment(node, source, language)
    return _leading_comment(node, source, language)
