"""A symbol as the code tools return it (symbols' outline entries, findsymbol's definitions)."""

from __future__ import annotations

from pydantic import Field

from mcp_localtools.codeintel.tags import Symbol
from mcp_localtools.spec import ToolOutput

__all__ = ["SymbolEntry", "symbol_entry"]


class SymbolEntry(ToolOutput):
    kind: str = Field(description="function, method, class, interface, module, enum, type, constant, ...")
    name: str = Field(description="Its name.")
    qualified_name: str = Field(description="Names of the enclosing symbols and its own, joined by `.`.")
    start_line: int = Field(description="First line, 1-based.")
    end_line: int = Field(description="Last line, inclusive.")
    signature: str = Field(description="The definition up to its body.")
    doc: str | None = Field(None, description="First line of its docstring or leading comment.")


def symbol_entry(symbol: Symbol) -> SymbolEntry:
    """The wire form of a symbol."""
    return SymbolEntry(
        kind=symbol.kind,
        name=symbol.name,
        qualified_name=symbol.qualified_name,
        start_line=symbol.start_line,
        end_line=symbol.end_line,
        signature=symbol.signature,
        doc=symbol.doc or None,
    )
