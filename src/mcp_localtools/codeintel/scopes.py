"""Names a function binds for itself: a bare use of one inside it is a local, not a use of a
definition elsewhere (tree-sitter's locals queries, ``queries/<language>.locals.scm``: scopes,
the names each binds, and Python's ``global``/``nonlocal`` names, which it does not).

``Locals.binds`` says whether a scope around a use binds a name, as the language scopes it: a
Python class body binds nothing for the methods in it, a parameter's default is evaluated
outside its function, JavaScript's ``let`` and ``const`` (and a loop's, a switch's or a catch's
names) hold only inside their block or statement while its ``var`` holds in the whole function,
and a binding that is itself an indexed definition (a local function) or
an import (a ``require`` in a function) is not a local: a use of it resolves as usual.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import tree_sitter

__all__ = ["Locals"]

_PARAMETERS = frozenset({"parameters", "lambda_parameters", "formal_parameters"})
"""Parameter lists: a use in one (a default) is evaluated outside the function it belongs to."""
_FUNCTIONS = frozenset(
    {"function_definition", "lambda", "function_declaration", "function_expression", "arrow_function",
     "generator_function", "generator_function_declaration", "method_definition", "class_static_block"}
)  # fmt: skip
"""What JavaScript's ``var`` belongs to (and Python's functions): a generator and a class static
block are functions for it."""
_IMPORTING = frozenset({"require"})
_NAMES = frozenset({"identifier", "shorthand_property_identifier_pattern"})
_PATTERNS = frozenset(
    {"object_pattern", "array_pattern", "rest_pattern", "pattern_list", "tuple_pattern", "list_pattern",
     "list_splat_pattern"}
)  # fmt: skip
"""Patterns every named child of which binds (or holds what binds)."""
_PATTERN_FIELDS = {
    "pair_pattern": "value",
    "assignment_pattern": "left",
    "object_assignment_pattern": "left",
    "required_parameter": "pattern",
    "optional_parameter": "pattern",
}
"""Patterns whose one field binds (a property's value, a default's left side, a TypeScript
parameter's pattern)."""


class Locals:
    """The names each scope of one parsed file binds, by its locals query.

    Args:
        found: the nodes the locals query captured in the file, by capture: ``local.scope``,
            ``local.definition`` (bound in the scope around it), ``local.hoisted`` (JavaScript's
            ``var``: bound in the function around it) and (Python) ``local.global``.
        source: the file.
        wanted: the names the file uses (bindings of other names are not kept).
        definitions: start bytes of the names of the file's indexed definitions (not locals).
        requires: whether a binding may be an import by a call (``require``: JavaScript and
            TypeScript); a binding that is one is not a local.
    """

    def __init__(
        self,
        found: Mapping[str, Sequence[tree_sitter.Node]],
        source: bytes,
        wanted: Collection[str],
        definitions: Collection[int],
        *,
        requires: bool = True,
    ) -> None:
        scopes = {node.id for node in found.get("local.scope", [])}
        self._bound: dict[int, set[str]] = {}
        declared: dict[int, set[str]] = {}  # global / nonlocal names, per scope
        for capture, into in (
            ("local.global", declared),
            ("local.definition", self._bound),
            ("local.hoisted", self._bound),
        ):
            hoisted = capture == "local.hoisted"  # JavaScript's var: the function's, not its block's
            for captured in found.get(capture, []):
                if requires and _imported(captured, source):
                    continue
                for node in _bound_names(captured):
                    name = source[node.start_byte : node.end_byte].decode("utf-8", "replace")
                    if name not in wanted or node.start_byte in definitions:
                        continue
                    owner = node.parent
                    while owner is not None and (
                        owner.id not in scopes or (hoisted and owner.type not in _FUNCTIONS)
                    ):
                        owner = owner.parent
                    if owner is not None and name not in declared.get(owner.id, ()):
                        into.setdefault(owner.id, set()).add(name)
        self._names = set().union(*self._bound.values())  # bound somewhere in the file

    def binds(self, node: tree_sitter.Node, name: str) -> bool:
        """Whether a scope around the use ``node`` binds ``name`` for it."""
        if name not in self._names:  # most uses: no walk up the tree
            return False
        in_parameters = in_function = False
        owner = node.parent
        while owner is not None:
            kind = owner.type
            if kind in _PARAMETERS:
                in_parameters = True
            elif kind in _FUNCTIONS and in_parameters:  # a default: not this function's scope
                in_parameters = False
                in_function = True
                owner = owner.parent
                continue
            if not (kind == "class_definition" and in_function) and name in self._bound.get(owner.id, ()):
                return True
            in_function = in_function or kind in _FUNCTIONS
            owner = owner.parent
        return False


def _bound_names(node: tree_sitter.Node) -> list[tree_sitter.Node]:
    """The identifiers the captured ``node`` binds: itself when it is a name, else those its
    pattern binds (``{a, b: c, d = 1, ...e}``, ``[f = 1, ...g]``, nested; Python's ``a, (b, *c)``),
    not a default's value nor a property's key."""
    found: list[tree_sitter.Node] = []
    stack = [node]
    while stack:
        current = stack.pop()
        kind = current.type
        if kind in _NAMES:
            found.append(current)
        elif kind in _PATTERNS:
            stack.extend(current.named_children)
        elif (field := _PATTERN_FIELDS.get(kind)) and (inner := current.child_by_field_name(field)):
            stack.append(inner)
    return found


def _imported(node: tree_sitter.Node, source: bytes) -> bool:
    """Whether the bound ``node`` takes its value from an import (``const {a} = require('m')``)."""
    holder = node.parent
    for _ in range(3):
        if holder is None or holder.type == "variable_declarator":
            break
        holder = holder.parent
    value = holder.child_by_field_name("value") if holder is not None else None
    function = (
        value.child_by_field_name("function")
        if value is not None and value.type == "call_expression"
        else None
    )
    return (
        function is not None
        and source[function.start_byte : function.end_byte].decode(errors="replace") in _IMPORTING
    )
