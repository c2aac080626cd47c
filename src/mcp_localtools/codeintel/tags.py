"""A file's definitions and references, from its grammar's tags queries.

``extract(grammar, source)`` parses the bytes once and runs the tags queries: every
``@definition.<kind>`` becomes a ``Symbol`` (kind, name, qualified name from the definitions that
enclose it, 1-based line range, signature, first line of its docstring or leading comment), every
``@reference.<kind>`` a ``Reference`` (name, line, the qualified name of the symbol it sits in).
Pure: no I/O, no state; a parser is made per call (parsers are not shared between threads).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import tree_sitter

from mcp_localtools.codeintel.declarations import doc_of, first_line, node_text, signature
from mcp_localtools.codeintel.imports import Import, extract_imports, qualifier
from mcp_localtools.codeintel.languages import Grammar
from mcp_localtools.codeintel.owners import cpp_scope, go_receiver, js_owner
from mcp_localtools.codeintel.scopes import Locals

__all__ = ["FileTags", "Reference", "Symbol", "extract"]

CONTAINERS = frozenset({"class", "interface", "module", "enum", "impl", "struct", "namespace"})
"""Kinds whose functions are methods."""

_REFERENCE_KINDS = {"send": "call", "implementation": "type", "interface": "type", "class": "type"}
_DECLARATOR_PARENTS = frozenset(
    {"pointer_declarator", "reference_declarator", "function_declarator", "parenthesized_declarator"}
)
_DECLARATION_NODES = frozenset({"function_definition", "declaration", "field_declaration"})
_JS_DECLARATIONS = frozenset({"lexical_declaration", "variable_declaration"})
_JS_MEMBERS = frozenset({"assignment_expression", "call_expression", "method_definition", "pair"})
_REQUIRING = frozenset({"javascript", "typescript", "tsx"})
"""Languages whose locals may take their value from an import call (``require``)."""
# Which definition wins when two patterns capture the same node (Rust's methods are functions too).
_PRIORITY = {"method": 3, "constant": 2, "function": 1}


@dataclass(frozen=True, slots=True)
class Symbol:
    """One definition.

    Attributes:
        name: its identifier.
        kind: function, method, class, interface, module, enum, type, constant, field, macro,
            variable or impl.
        qualified_name: the names of the definitions around it and its own, joined by ``.``.
        start_line: first line, 1-based, its decorators, attributes or annotations included.
        line: the line its declaration itself starts on, after those (0 for a symbol read back
            from the index, which keeps ``start_line`` only): ``declaration_line``.
        end_line: last line, 1-based, inclusive.
        signature: the definition up to its body, white space collapsed, at most
            ``declarations.MAX_SIGNATURE``.
        doc: the first line of its docstring or of the comment just above it (above its
            decorations), or ``""``.
        depth: how many definitions enclose it (0: top level).
    """

    name: str
    kind: str
    qualified_name: str
    start_line: int
    end_line: int
    signature: str
    doc: str
    depth: int
    line: int = 0

    @property
    def declaration_line(self) -> int:
        """The line the declaration starts on after its decorations (``start_line`` when unknown)."""
        return self.line or self.start_line


@dataclass(frozen=True, slots=True)
class Reference:
    """One use of a name.

    Attributes:
        name: the identifier used.
        kind: ``call`` or ``type``.
        line: 1-based.
        scope: qualified name of the innermost symbol around it, ``""`` at the top level.
        qualifier: the dotted names the use is qualified with as written (``pkg.mod`` of
            ``pkg.mod.f()``, spaces left out), ``""`` when it is bare or qualified otherwise (a
            call's result, an index).
    """

    name: str
    kind: str
    line: int
    scope: str
    qualifier: str = ""


@dataclass(frozen=True, slots=True)
class FileTags:
    """What a file defines and uses.

    Attributes:
        language: our language name.
        symbols: definitions in source order (by start, outer before inner).
        references: uses in source order.
        lines: the file's line count.
        imports: what it imports (``imports.extract_imports``; with references only).
    """

    language: str
    symbols: tuple[Symbol, ...]
    references: tuple[Reference, ...]
    lines: int
    imports: tuple[Import, ...] = ()


@dataclass(slots=True)
class _Definition:
    node: Any  # tree_sitter.Node: the whole definition (its range)
    name: str
    name_start: int
    kind: str


def _outer(node: tree_sitter.Node) -> tree_sitter.Node:
    """The node whose range a definition has: C's function declarator grows to its function
    definition or declaration, a JavaScript declarator to its ``const``/``let``/``var`` when it is
    the statement's only one (``var a = 1, f = function () {}``: ``f``'s is its own)."""
    if node.type == "function_declarator":
        current = node
        while current.parent is not None and current.parent.type in _DECLARATOR_PARENTS:
            current = current.parent
        if current.parent is not None and current.parent.type in _DECLARATION_NODES:
            return current.parent
    if (
        node.type == "variable_declarator"
        and node.parent is not None
        and node.parent.type in _JS_DECLARATIONS
        and _alone(node)
    ):
        return node.parent
    return node


def _alone(declarator: tree_sitter.Node) -> bool:
    """Whether ``declarator`` is its statement's only declarator (its neighbours, past comments,
    are not declarators: constant time, where counting them all was quadratic in a statement of
    thousands)."""
    for step in ("prev_named_sibling", "next_named_sibling"):
        sibling = getattr(declarator, step)
        while sibling is not None and sibling.type == "comment":
            sibling = getattr(sibling, step)
        if sibling is not None and sibling.type == "variable_declarator":
            return False
    return True


def _same_definition(outer: _Definition, inner: _Definition) -> bool:
    """Whether ``inner`` is the value of ``outer`` under the same name (``x.f = function f() {}``)."""
    parent = inner.node.parent
    if parent is not None and parent.type == "arguments" and outer.node.type == "call_expression":
        parent = parent.parent  # defineGetter(req, 'ip', function ip() {...})
    if parent is not None and parent.type == "variable_declarator" and outer.node.type in _JS_DECLARATIONS:
        parent = parent.parent  # var f = function f() {...}: the statement is the outer's range
    return (
        parent is not None
        and (parent.start_byte, parent.end_byte) == (outer.node.start_byte, outer.node.end_byte)
        and (
            inner.name == outer.name
            or inner.node.type in ("function_expression", "function", "arrow_function")
        )
    )


def _matches(
    grammar: Grammar, tree: tree_sitter.Tree, references: bool
) -> tuple[
    list[dict[str, list[tree_sitter.Node]]], list[dict[str, list[tree_sitter.Node]]], dict[str, list[Any]]
]:
    """The tags query's matches, the imports query's matches and the locals query's captures by
    name (``Grammar.analysis``, one walk of the tree); only the definitions' without ``references``."""
    import tree_sitter

    tags: list[dict[str, list[tree_sitter.Node]]] = []
    imports: list[dict[str, list[tree_sitter.Node]]] = []
    scoped: dict[str, list[Any]] = {}
    if not references:
        for query in grammar.definition_queries:
            tags.extend(captures for _, captures in tree_sitter.QueryCursor(query).matches(tree.root_node))
        return tags, imports, scoped
    for query, imports_from, locals_from in grammar.analysis:
        for pattern, captures in tree_sitter.QueryCursor(query).matches(tree.root_node):
            if pattern < imports_from:
                tags.append(captures)
            elif pattern < locals_from:
                imports.append(captures)
            else:
                for capture, nodes in captures.items():
                    scoped.setdefault(capture, []).extend(nodes)
    return tags, imports, scoped


def _collect(
    matches: Iterable[dict[str, list[tree_sitter.Node]]], source: bytes
) -> tuple[dict[tuple[int, int], _Definition], list[tuple[tree_sitter.Node, str]]]:
    definitions: dict[tuple[int, int], _Definition] = {}
    references: list[tuple[tree_sitter.Node, str]] = []
    for captures in matches:
        names = captures.get("name")
        if not names:
            continue
        name = names[0]
        for capture, nodes in captures.items():
            kind_of, _, kind = capture.partition(".")
            if kind_of == "definition" and kind:
                node = _outer(nodes[0])
                key = (node.start_byte, node.end_byte)
                known = definitions.get(key)
                if known is None or _PRIORITY.get(kind, 0) > _PRIORITY.get(known.kind, 0):
                    definitions[key] = _Definition(node, node_text(name, source), name.start_byte, kind)
            elif kind_of == "reference" and kind:
                references.append((name, _REFERENCE_KINDS.get(kind, kind)))
    return definitions, references


def _symbols(
    definitions: Iterable[_Definition], source: bytes, language: str
) -> tuple[list[Symbol], list[tuple[int, int, str]]]:
    """The symbols in source order, and their byte spans with qualified names."""
    ordered = sorted(definitions, key=lambda d: (d.node.start_byte, -d.node.end_byte))
    symbols: list[Symbol] = []
    spans: list[tuple[int, int, str]] = []
    stack: list[tuple[int, str, str]] = []  # (end byte, qualified name, kind) of open definitions
    previous: _Definition | None = None
    for definition in ordered:
        node = definition.node
        if previous is not None and _same_definition(previous, definition):
            continue  # JavaScript's `res.send = function send() {}` is one definition, not two
        previous = definition
        while stack and stack[-1][0] <= node.start_byte:
            stack.pop()
        kind = definition.kind
        if kind == "function" and stack and stack[-1][2] in CONTAINERS:
            kind = "method"
        prefix = stack[-1][1] if stack else ""
        if language == "go" and node.type == "method_declaration":
            prefix = go_receiver(node, source) or prefix
        elif language == "cpp" and node.type == "function_definition" and (scope := cpp_scope(node, source)):
            prefix = f"{prefix}.{scope}" if prefix else scope
        qualified = f"{prefix}.{definition.name}" if prefix else definition.name
        if node.type in _JS_MEMBERS and (owner := js_owner(node, source)):
            qualified = f"{owner}.{definition.name}"
            if node.type != "assignment_expression" and prefix:  # an object literal or call inside a symbol
                qualified = f"{prefix}.{qualified}"
            if kind == "function" and node.type in ("method_definition", "pair"):
                kind = "method"
        symbols.append(
            Symbol(
                name=definition.name,
                kind=kind,
                qualified_name=qualified,
                start_line=first_line(node) + 1,
                end_line=max(node.end_point[0] + (1 if node.end_point[1] else 0), node.start_point[0] + 1),
                signature=signature(node, source),
                doc=doc_of(node, source, language),
                depth=len(stack),
                line=node.start_point[0] + 1,
            )
        )
        spans.append((node.start_byte, node.end_byte, qualified))
        stack.append((node.end_byte, qualified, kind))
    return symbols, spans


def _scope_of(position: int, spans: list[tuple[int, int, str]], starts: list[int]) -> str:
    index = bisect.bisect_right(starts, position) - 1
    while index >= 0:
        start, end, qualified = spans[index]
        if start <= position < end:
            return qualified
        index -= 1
    return ""


def extract(grammar: Grammar, source: bytes, *, references: bool = True) -> FileTags:
    """Parse ``source`` with ``grammar`` and return its definitions and (unless ``references``
    is false: an outline) its references.

    A file with syntax errors still yields what the parser recovered. Never raises for bad input.
    """
    tree = grammar.parser().parse(source)
    tagged, imports, scoped = _matches(grammar, tree, references)
    definitions, raw_references = _collect(tagged, source)
    language = grammar.info.name
    symbols, spans = _symbols(definitions.values(), source, language)
    starts = [span[0] for span in spans]
    own_names = {definition.name_start for definition in definitions.values()}
    used: list[tuple[tree_sitter.Node, str, str, str]] = []  # node, kind, name, qualifier
    for node, kind in raw_references:
        if node.start_byte not in own_names:  # a definition's own name is no use of it
            name = node_text(node, source)
            if name and len(name) <= 200:
                used.append((node, kind, name, qualifier(node, source)))
    local = None
    if used and scoped:
        wanted = {name for _, _, name, _ in used} | {written.partition(".")[0] for *_, written in used}
        local = Locals(scoped, source, wanted, own_names, requires=language in _REQUIRING)
    seen: set[tuple[str, int, str, str, str]] = set()
    found: list[Reference] = []
    for node, kind, name, written in sorted(used, key=lambda item: item[0].start_byte):
        if local is not None:
            if not written and kind == "call" and local.binds(node, name):
                continue  # a local of the function it is in (types are another namespace)
            if written and local.binds(node, written.partition(".")[0]):
                written = ""  # qualified by a local, not by an imported module
        scope = _scope_of(node.start_byte, spans, starts)
        key = (name, node.start_point[0], kind, written, scope)  # a callback's use is its own
        if key in seen:
            continue
        seen.add(key)
        found.append(Reference(name, kind, node.start_point[0] + 1, scope, written))
    lines = source.count(b"\n") + (1 if source and not source.endswith(b"\n") else 0)
    imported = extract_imports(imports, source)
    return FileTags(language, tuple(symbols), tuple(found), lines, imported)
