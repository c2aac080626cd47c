"""The tools' JSON Schemas: generated from their pydantic models, and cached ahead of time.

``input_schema`` and ``output_schema`` turn an arguments or result model into the schema clients
see (portable, self-contained, no titles). Generating them for every tool (and, before that,
pydantic's core schema of every model) was most of what registering the tools cost at start-up.
``schemas.json`` beside this module holds each model's generated schema with a fingerprint of
what it is generated from (``fingerprint``). ``Registry.register`` takes a schema from here when
the fingerprint matches, and generates it otherwise, so a stale entry is never served: it only
costs the time the cache exists to save. ``tests/test_schema_cache.py`` fails when an entry is
missing or differs from what the code generates, and rewrites the file when asked
(``MCP_LOCALTOOLS_WRITE_SCHEMA_CACHE=1``). Every fingerprint also covers this module's own source
and the pydantic version, so a change to how schemas are generated makes every entry stale.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import hashlib
import json
import re
import typing
from pathlib import Path
from typing import Annotated, Any, Literal

import pydantic
import pydantic_core
from pydantic import BaseModel
from pydantic.json_schema import GenerateJsonSchema

from mcp_localtools.errors import SpecError

__all__ = [
    "CACHE_FILE",
    "Kind",
    "cached_schema",
    "entry_key",
    "fingerprint",
    "input_schema",
    "models_in",
    "output_schema",
]

CACHE_FILE = Path(__file__).with_name("schemas.json")
"""The cache: ``{"<module>:<qualname>:<kind>": {"fingerprint": ..., "schema": {...}}}``."""

Kind = Literal["input", "output"]


@functools.cache
def _entries() -> Any:
    """The cache file's entries, read once (a missing or unreadable file counts as empty)."""
    try:
        return json.loads(CACHE_FILE.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
"""Memory addresses in a repr (``<function f at 0x7f...>``), which differ from run to run."""


def entry_key(model: type[BaseModel], kind: Kind) -> str:
    """The cache key of ``model``'s ``kind`` schema."""
    return f"{model.__module__}:{model.__qualname__}:{kind}"


def cached_schema(model: type[BaseModel], kind: Kind) -> dict[str, Any] | None:
    """``model``'s cached ``kind`` schema (a fresh copy), or None when the cache has none for the
    model as it is now (no entry, the fingerprint differs, or the model cannot be fingerprinted).
    A missing or unreadable cache file counts as empty."""
    entries = _entries()
    entry = entries.get(entry_key(model, kind)) if isinstance(entries, dict) else None
    if not isinstance(entry, dict):
        return None
    found = fingerprint(model)
    if found is None or entry.get("fingerprint") != found:
        return None
    schema = entry.get("schema")
    return json.loads(json.dumps(schema)) if isinstance(schema, dict) else None


@functools.cache
def _salt() -> str:
    """What every fingerprint starts with: the pydantic and pydantic-core versions and this
    module's source (the code that turns models into schemas); empty source where it cannot be
    read, which then only makes entries miss."""
    try:
        source = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()
    except OSError:
        source = ""
    return f"{pydantic.VERSION}|{pydantic_core.__version__}|{source}"


_FIELD_ATTRIBUTES = (
    "alias",
    "validation_alias",
    "serialization_alias",
    "description",
    "examples",
    "exclude",
    "deprecated",
    "discriminator",
    "json_schema_extra",
    "metadata",
)
"""The ``FieldInfo`` attributes, besides type and default, that can change a field's schema."""


def models_in(model: type[BaseModel]) -> list[type[BaseModel]]:
    """``model`` and every pydantic model its fields refer to (through lists, unions, ...),
    innermost first, each once."""
    found: list[type[BaseModel]] = []
    seen: set[type[BaseModel]] = set()

    def walk(node: object) -> None:
        if isinstance(node, type) and issubclass(node, BaseModel):
            if node in seen:
                return
            seen.add(node)
            for info in node.model_fields.values():
                walk(info.annotation)
            found.append(node)
            return
        if typing.get_origin(node) is not Literal:
            for arg in typing.get_args(node):
                walk(arg)

    walk(model)
    return found


_DECORATOR_GROUPS = (
    "validators",
    "field_validators",
    "root_validators",
    "field_serializers",
    "model_serializers",
    "model_validators",
    "computed_fields",
)
"""``DecoratorInfos`` attributes: a serializer's return type or a computed field changes a schema."""


@functools.cache
def fingerprint(model: type[BaseModel]) -> str | None:
    """A hash of everything ``model``'s JSON Schema is generated from (hex SHA-256), computed
    without building the model (``defer_build`` models stay unbuilt): for the model and every
    model, dataclass, TypedDict and enum its fields refer to, their names, docstrings, config,
    fields (type, default, and ``_FIELD_ATTRIBUTES``), computed fields and decorators (validators,
    serializers), with memory addresses left out of every repr; and ``_salt()``. None when a type
    is still an unresolved forward reference (its model cannot be cached: the fingerprint would
    change once the model is built)."""
    walker = _Fingerprint()
    return walker.digest.hexdigest() if walker.walk(model) else None


class _Fingerprint:
    """One fingerprint being computed: the hash so far and the types already walked."""

    def __init__(self) -> None:
        self.digest = hashlib.sha256(_salt().encode())
        self.seen: set[object] = set()

    def add(self, kind: str, parts: object) -> None:
        self.digest.update(_ADDRESS.sub("", f"{kind} {parts!r}\n").encode())

    def walk(self, node: object) -> bool:
        """Hash ``node`` and what it refers to; False at an unresolved forward reference."""
        if isinstance(node, typing.ForwardRef | str):
            return False
        if isinstance(node, type):
            if node in self.seen:
                return True
            self.seen.add(node)
            if not self._type(node):
                return False
        origin = typing.get_origin(node)
        if origin is Literal:  # its values are data (strings included), not types
            return True
        arguments = typing.get_args(node)
        if origin is Annotated:  # the metadata is in the field's repr; only the type is walked
            arguments = arguments[:1]
        return all(self.walk(arg) for arg in arguments)

    def _type(self, node: type) -> bool:
        if issubclass(node, BaseModel):
            return self._model(node)
        if issubclass(node, enum.Enum):
            self.add("E", (node.__qualname__, [member.value for member in node]))
            return True
        if dataclasses.is_dataclass(node) or typing.is_typeddict(node):
            return self._record(node)
        return True

    def _model(self, node: type[BaseModel]) -> bool:
        config = sorted((key, repr(value)) for key, value in node.model_config.items())
        self.add("M", (node.__module__, node.__qualname__, node.__doc__, config))
        for group in _DECORATOR_GROUPS:  # the decorators' kinds and settings, not their ids
            found = getattr(node.__pydantic_decorators__, group).items()
            self.add("D", sorted((name, repr(decorator.info)) for name, decorator in found))
        for name, info in node.model_fields.items():
            self.add("F", (name, repr(info.annotation), info.default, info.default_factory))
            self.add("A", [getattr(info, attribute, None) for attribute in _FIELD_ATTRIBUTES])
            if not self.walk(info.annotation):
                return False
        return True

    def _record(self, node: type) -> bool:
        """A dataclass or a TypedDict."""
        try:
            hints = typing.get_type_hints(node, include_extras=True)
        except (NameError, TypeError):
            return False
        fields = (
            {f.name: f.default for f in dataclasses.fields(node)} if dataclasses.is_dataclass(node) else {}
        )
        self.add(
            "T", (node.__module__, node.__qualname__, node.__doc__, sorted(map(repr, hints.items())), fields)
        )
        return all(self.walk(hint) for hint in hints.values())


class _SchemaWithoutTitles(GenerateJsonSchema):
    """Pydantic's schema without the ``title`` noise on every field and model."""

    def generate(self, schema: Any, mode: Any = "validation") -> Any:
        return _strip_titles(super().generate(schema, mode=mode))


def _strip_titles(node: Any) -> Any:
    if isinstance(node, dict):
        return {
            key: value if key in ("default", "const", "enum", "examples") else _strip_titles(value)
            for key, value in node.items()
            if not (key == "title" and isinstance(value, str))
        }
    if isinstance(node, list):
        return [_strip_titles(item) for item in node]
    return node


def input_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON Schema of an arguments model, wire names, no titles, self-contained (no ``$ref``
    or ``$defs``) and portable (``_portable``). A list field whose default is an empty list
    publishes ``"default": []`` (pydantic leaves a default factory out), so a client that fills
    in defaults sends a list, not ``null``."""
    schema: dict[str, Any] = model.model_json_schema(by_alias=True, schema_generator=_SchemaWithoutTitles)
    properties = schema.get("properties", {})
    for name, info in model.model_fields.items():
        key = info.alias or name
        if info.default_factory is list and key in properties:
            properties[key].setdefault("default", [])
    portable: dict[str, Any] = _portable(_inline_refs(schema))
    return portable


def _portable(node: Any) -> Any:
    """An input schema in the form every converter in ``docs/clients.md`` keeps
    (measured with the real converters, ``tests/compat``):

    * no ``additionalProperties: false``: google-genai's MCP converter crashes on a boolean there
      (``'bool' object has no attribute 'items'``, on every tool); the strict converters of
      openai-agents, anthropic and langchain add it themselves, and the server refuses unknown
      arguments whatever the schema says;
    * a nullable property stays ``anyOf: [T, {"type": "null"}]`` (anthropic's ``transform_schema``
      refuses ``"type": [T, "null"]``), with its description and default copied into the ``T``
      branch, because Gemini's ``Schema.from_json_schema`` keeps only that branch.
    """
    if isinstance(node, list):
        return [_portable(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {
        key: value if key in ("default", "const", "enum", "examples") else _portable(value)
        for key, value in node.items()
        if not (key == "additionalProperties" and value is False)
    }
    variants = out.get("anyOf")
    if isinstance(variants, list) and {"type": "null"} in variants:
        copied = {key: out[key] for key in ("description", "default") if key in out}
        if copied:
            out["anyOf"] = [
                variant if variant == {"type": "null"} else {**copied, **variant} for variant in variants
            ]
    return out


def output_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON Schema of a result model as serialised, wire names, only what a client can
    usefully validate: an object, and its fields whose values are a closed set (``_shallow``).

    Results are dumped without ``None`` fields, so an optional field is absent rather than null:
    its ``anyOf: [T, null]`` is written as plain ``T`` (a simpler schema, and a cheaper one for
    clients that validate every result against it).
    """
    schema = model.model_json_schema(
        by_alias=True, mode="serialization", schema_generator=_SchemaWithoutTitles
    )
    simplified: dict[str, Any] = _shallow(_drop_nulls(_inline_refs(schema)))
    return simplified


def _shallow(schema: dict[str, Any]) -> dict[str, Any]:
    """What a client can usefully validate of a result: that it is an object, and the values a
    field may take when they are a closed set (``enum``, e.g. ``sandbox``). The fields' names,
    types, bounds and nested entries are the result model's own output, serialised from the same
    model, so a check of them cannot fail; they cost the client time (the SDK's client spent
    19-50 ms validating one 30 KB ``symbols`` result against the whole nested schema) and
    ``tools/list`` bytes (output schemas were half of its 87 KB)."""
    properties = schema.get("properties") or {}
    closed = {
        name: {key: sub[key] for key in ("type", "enum") if key in sub}
        for name, sub in properties.items()
        if isinstance(sub, dict) and "enum" in sub
    }
    return {"type": "object", "properties": closed} if closed else {"type": "object"}


def _inline_refs(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with every ``$ref`` to its ``$defs`` replaced by the definition, and no
    ``$defs``: a flat schema that strict converters accept and validators walk without lookups.
    Output models are not recursive; a recursive reference is refused at registration.

    Raises:
        SpecError: a definition refers to itself.
    """
    definitions = schema.get("$defs", {})

    def inline(node: Any, seen: tuple[str, ...]) -> Any:
        if isinstance(node, list):
            return [inline(item, seen) for item in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            name = ref.removeprefix("#/$defs/")
            if name in seen:
                raise SpecError(f"output schema: {name} refers to itself; use a flat model")
            rest = {key: value for key, value in node.items() if key != "$ref"}
            return {**inline(definitions[name], (*seen, name)), **inline(rest, seen)}
        return {key: inline(value, seen) for key, value in node.items() if key != "$defs"}

    inlined: dict[str, Any] = inline(schema, ())
    return inlined


def _drop_nulls(node: Any) -> Any:
    if isinstance(node, list):
        return [_drop_nulls(item) for item in node]
    if not isinstance(node, dict):
        return node
    variants = node.get("anyOf")
    if isinstance(variants, list) and {"type": "null"} in variants and node.get("default", ...) is None:
        rest = [v for v in variants if v != {"type": "null"}]
        merged = {k: v for k, v in node.items() if k not in ("anyOf", "default")}
        node = {**merged, **rest[0]} if len(rest) == 1 else {**merged, "anyOf": rest}
    return {
        key: value if key in ("default", "const", "enum", "examples") else _drop_nulls(value)
        for key, value in node.items()
    }
