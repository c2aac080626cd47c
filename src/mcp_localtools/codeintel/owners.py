"""Whose member a definition is, where the language writes it outside the definition's own
name: a Go method's receiver, a C++ definition's ``A::B::`` scope, a JavaScript member's object
(``tags`` qualifies the definition's name with it)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import tree_sitter

__all__ = ["cpp_scope", "go_receiver", "js_owner"]


def _text(node: tree_sitter.Node, source: bytes) -> str:
    return source[node.start_byte : node.end_byte].decode("utf-8", "replace")


def go_receiver(node: tree_sitter.Node, source: bytes) -> str:
    """The receiver type of a Go method (``T`` of ``func (t *T) f()``), ``""`` for none."""
    receiver = node.child_by_field_name("receiver")
    if receiver is None:
        return ""
    stack = [receiver]
    while stack:
        current = stack.pop()
        if current.type == "type_identifier":
            return _text(current, source)
        stack.extend(reversed(current.named_children))
    return ""


def cpp_scope(node: tree_sitter.Node, source: bytes) -> str:
    """``A::B`` of a C++ definition written outside its class (``void A::B::f() {...}``), as ``A.B``."""
    declarator = node.child_by_field_name("declarator")
    while declarator is not None and declarator.type != "function_declarator":
        declarator = declarator.child_by_field_name("declarator")
    inner = declarator.child_by_field_name("declarator") if declarator is not None else None
    scope = (
        inner.child_by_field_name("scope")
        if inner is not None and inner.type == "qualified_identifier"
        else None
    )
    return _text(scope, source).replace("::", ".") if scope is not None else ""


def js_owner(node: tree_sitter.Node, source: bytes) -> str:
    """The object a JavaScript member belongs to: ``res`` of ``res.send = function ...``, ``Layer``
    of ``Layer.prototype.match = ...``, ``req`` of ``defineGetter(req, 'ip', ...)`` and of
    ``Object.defineProperty(req, 'ip', {...})``, ``utils`` of ``const utils = {parse() {...}}``
    and of ``Foo.prototype = {parse() {...}}``; ``""`` for none."""
    target = None
    if node.type == "assignment_expression":
        left = node.child_by_field_name("left")
        target = (
            left.child_by_field_name("object")
            if left is not None and left.type == "member_expression"
            else None
        )
    elif node.type == "call_expression":
        arguments = node.child_by_field_name("arguments")
        target = arguments.named_children[0] if arguments is not None and arguments.named_children else None
    elif (
        node.type in ("method_definition", "pair")
        and node.parent is not None
        and node.parent.type == "object"
    ):
        holder = node.parent.parent
        if holder is not None and holder.type == "variable_declarator":
            target = holder.child_by_field_name("name")
        elif holder is not None and holder.type == "assignment_expression":
            target = holder.child_by_field_name("left")
    if target is None or len(_text(target, source)) > 80:
        return ""
    return _text(target, source).removesuffix(".prototype")
