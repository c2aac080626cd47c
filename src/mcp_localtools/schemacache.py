"""The tools' JSON Schemas, generated ahead of time so that start-up need not build them.

Generating the input and output schemas of every tool (and, before that, pydantic's core schema
of every model) was most of what registering the tools cost at start-up. ``schemas.json`` beside
this module holds each model's generated schema with a fingerprint of the model's source of truth
(its fields: names, aliases, types, defaults, descriptions and constraints, recursively through
nested models and enums, and its docstring and config). ``Registry.register`` takes a schema from
here when the fingerprint matches, and generates it otherwise, so a stale entry is never served:
it only costs the time the cache exists to save. ``tests/test_schema_cache.py`` fails when an
entry is missing or differs from what the code generates, and rewrites the file when asked
(``MCP_LOCALTOOLS_WRITE_SCHEMA_CACHE=1``).
"""

from __future__ import annotations

import enum
import hashlib
import json
import re
import typing
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

__all__ = ["CACHE_FILE", "Kind", "cached_schema", "entry_key", "fingerprint"]

CACHE_FILE = Path(__file__).with_name("schemas.json")
"""The cache: ``{"<module>:<qualname>:<kind>": {"fingerprint": ..., "schema": {...}}}``."""

Kind = Literal["input", "output"]

_entries: dict[str, Any] | None = None

_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
"""Memory addresses in a repr (``<function f at 0x7f...>``), which differ from run to run."""


def entry_key(model: type[BaseModel], kind: Kind) -> str:
    """The cache key of ``model``'s ``kind`` schema."""
    return f"{model.__module__}:{model.__qualname__}:{kind}"


def cached_schema(model: type[BaseModel], kind: Kind) -> dict[str, Any] | None:
    """``model``'s cached ``kind`` schema (a fresh copy), or None when the cache has none for the
    model as it is now (no entry, or the fingerprint differs). A missing or unreadable cache file
    counts as empty."""
    global _entries
    if _entries is None:
        try:
            _entries = json.loads(CACHE_FILE.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            _entries = {}
    entry = _entries.get(entry_key(model, kind)) if isinstance(_entries, dict) else None
    if not isinstance(entry, dict) or entry.get("fingerprint") != fingerprint(model):
        return None
    schema = entry.get("schema")
    return json.loads(json.dumps(schema)) if isinstance(schema, dict) else None


def fingerprint(model: type[BaseModel]) -> str:
    """A hash of everything in ``model`` its JSON Schema is generated from, computed without
    building the model (``defer_build`` models stay unbuilt): hex SHA-256."""
    digest = hashlib.sha256()
    seen: set[object] = set()

    def text(value: object) -> str:
        if callable(value) and hasattr(value, "__qualname__"):
            return f"{getattr(value, '__module__', '')}.{value.__qualname__}"
        return repr(value)

    def walk(node: object) -> None:
        if node in seen if isinstance(node, type) else False:
            return
        if isinstance(node, type) and issubclass(node, BaseModel):
            seen.add(node)
            config = sorted((key, text(value)) for key, value in node.model_config.items())
            digest.update(f"M {node.__module__}.{node.__qualname__}|{node.__doc__}|{config}\n".encode())
            for name, info in node.model_fields.items():
                default = info.default
                parts = [
                    name,
                    info.alias,
                    repr(info.annotation),
                    "" if default is PydanticUndefined else repr(default),
                    text(info.default_factory) if info.default_factory else "",
                    info.description,
                    repr(info.metadata),
                    repr(info.json_schema_extra),
                    repr(info.examples),
                ]
                digest.update(_ADDRESS.sub("", f"F {parts}\n").encode())
                walk(info.annotation)
        elif isinstance(node, type) and issubclass(node, enum.Enum):
            seen.add(node)
            digest.update(f"E {node.__qualname__}|{[member.value for member in node]}\n".encode())
        for arg in typing.get_args(node):
            walk(arg)

    walk(model)
    return digest.hexdigest()
