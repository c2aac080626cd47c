"""A declared tool's arguments: its ``input_schema`` (a JSON Schema) read into a pydantic model.

The model is what every other tool has (``ToolArgs``): the registry validates calls with it and
publishes its generated schema, made portable the same way, so a declared tool converts for every
provider a built-in one does (``tests/compat``). The schema may use the part of JSON Schema that
every provider's converter takes (``docs/clients.md``); anything else is refused at start-up with
its key path, rather than published for a client to choke on:

* top level: ``type = "object"``, ``properties``, ``required``, ``additionalProperties = false``
  (unknown arguments are refused whatever it says);
* each property: ``type`` ``string`` | ``integer`` | ``number`` | ``boolean`` | ``array``, a
  ``description`` (required: it is the model's documentation), ``enum``, ``default``;
  ``minLength``/``maxLength``/``pattern`` for strings; ``minimum``/``maximum`` for numbers
  (``exclusiveMinimum`` is refused: Gemini's strict schema has no such field);
  ``items`` (a string, integer or number schema) and ``minItems``/``maxItems`` for arrays.

Property names are camelCase (``testPath``), as every argument on the wire. An optional property
without a ``default`` is absent (``null`` counts as absent); an optional array defaults to ``[]``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import Field, TypeAdapter, ValidationError, create_model
from pydantic_core import SchemaError

from mcp_localtools.errors import ConfigError
from mcp_localtools.spec import ToolArgs

__all__ = ["Arguments", "read_arguments"]

MAX_PROPERTIES = 64
_PROPERTY = re.compile(r"^[a-z][A-Za-z0-9]{0,63}$")
_SCALARS: dict[str, type] = {"string": str, "integer": int, "number": float, "boolean": bool}
_COMMON = {"type", "description", "enum", "default"}
_KEYS: dict[str, set[str]] = {
    "string": _COMMON | {"minLength", "maxLength", "pattern"},
    "integer": _COMMON | {"minimum", "maximum"},
    "number": _COMMON | {"minimum", "maximum"},
    "boolean": {"type", "description", "default"},
    "array": {"type", "description", "default", "items", "minItems", "maxItems"},
}
_TOP = {"type", "properties", "required", "additionalProperties", "description"}
_HINTS = {
    "exclusiveMinimum": "use minimum (Gemini's strict schema has no exclusive bounds)",
    "exclusiveMaximum": "use maximum (Gemini's strict schema has no exclusive bounds)",
    "$ref": "write the property's schema in place",
    "anyOf": "one type per argument; leave it out of required to make it optional",
    "oneOf": "one type per argument",
    "nullable": "leave it out of required to make it optional",
}


@dataclass(frozen=True, slots=True)
class Arguments:
    """A declared tool's arguments.

    Attributes:
        model: the arguments model (wire names are the property names).
        kinds: each argument's type (wire name → ``string``, ..., ``array``).
        fixed: the arguments with an ``enum`` (their values were written by the config's author).
    """

    model: type[ToolArgs]
    kinds: dict[str, str]
    fixed: frozenset[str]


def read_arguments(schema: Any, tool: str, where: str) -> Arguments:
    """Read ``input_schema`` into the tool's arguments model.

    Args:
        schema: the configured schema (a table).
        tool: the tool's name (names the model).
        where: the schema's key path (``tools.custom.tests.input_schema``).

    Raises:
        ConfigError: the schema is not an object schema of the supported part (the message names
            the key path and what to write instead).
    """
    if not isinstance(schema, Mapping):
        raise ConfigError(f'{where}: a JSON Schema table (type = "object", properties = ...)')
    _known_keys(schema, _TOP, where)
    if schema.get("type", "object") != "object":
        raise ConfigError(f'{where}.type: the arguments are an object (type = "object")')
    if schema.get("additionalProperties", False) is not False:
        raise ConfigError(f"{where}.additionalProperties: only false (unknown arguments are refused)")
    properties = schema.get("properties", {})
    if not isinstance(properties, Mapping) or len(properties) > MAX_PROPERTIES:
        raise ConfigError(f"{where}.properties: a table of at most {MAX_PROPERTIES} argument schemas")
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(name in properties for name in required):
        raise ConfigError(f"{where}.required: a list of names of properties (got {required!r})")
    fields: dict[str, Any] = {}
    kinds: dict[str, str] = {}
    fixed: set[str] = set()
    for number, (name, node) in enumerate(properties.items()):
        here = f"{where}.properties.{name}"
        if not isinstance(name, str) or not _PROPERTY.match(name):
            raise ConfigError(f"{here}: an argument name is camelCase letters and digits (testPath)")
        kinds[name] = _kind(node, here)
        if "enum" in node:
            fixed.add(name)
        fields[f"a{number}"] = _field(name, node, required=name in required, where=here)
    model = create_model(f"{tool.capitalize()}Args", __base__=ToolArgs, __module__=__name__, **fields)
    return Arguments(model, kinds, frozenset(fixed))


def _known_keys(node: Mapping[str, Any], allowed: set[str], where: str) -> None:
    for key in node:
        if key not in allowed:
            hint = _HINTS.get(key, f"the keys taken here: {', '.join(sorted(allowed))}")
            raise ConfigError(f"{where}.{key}: not taken by every client's schema converter; {hint}")


def _kind(node: Any, where: str) -> str:
    if not isinstance(node, Mapping):
        raise ConfigError(f"{where}: an argument's schema is a table (type, description, ...)")
    kind = node.get("type")
    if not isinstance(kind, str) or kind not in _KEYS:
        raise ConfigError(f"{where}.type: one of {', '.join(_KEYS)} (got {kind!r})")
    _known_keys(node, _KEYS[kind], where)
    description = node.get("description")
    if not isinstance(description, str) or not description.strip():
        raise ConfigError(f"{where}.description: every argument needs one (it is the model's documentation)")
    return kind


def _field(name: str, node: Mapping[str, Any], *, required: bool, where: str) -> tuple[Any, Any]:
    """``(annotation, FieldInfo)`` of one property.

    Raises:
        ConfigError: a bound, pattern, enum or default the type cannot take.
    """
    kind = node["type"]
    annotation = _array(node, where) if kind == "array" else _scalar(kind, node, where)
    if "default" in node and required:
        raise ConfigError(f"{where}.default: a required argument has no default; leave one of them out")
    if "default" in node:
        _check(annotation, node["default"], f"{where}.default")
        default: dict[str, Any] = {"default": node["default"]}
    elif required:
        default = {}
    elif kind == "array":
        default = {"default_factory": list}
    else:
        annotation, default = annotation | None, {"default": None}
    return annotation, Field(alias=name, description=node["description"].strip(), **default)


def _scalar(kind: str, node: Mapping[str, Any], where: str) -> Any:
    base = _SCALARS[kind]
    if "enum" in node:
        values = node["enum"]
        if not isinstance(values, list) or not values:
            raise ConfigError(f"{where}.enum: a non-empty list of values")
        for index, value in enumerate(values):
            _check(base, value, f"{where}.enum[{index}]")
        return Literal[tuple(values)]
    bounds: dict[str, Any] = {}
    for key, option in (
        ("minLength", "min_length"),
        ("maxLength", "max_length"),
        ("pattern", "pattern"),
        ("minimum", "ge"),
        ("maximum", "le"),
    ):
        if key in node:
            bounds[option] = _bound(key, node[key], f"{where}.{key}")
    if kind == "number":
        bounds["allow_inf_nan"] = False  # 1e309 arrives as inf: no command takes the word "inf"
    annotation = Annotated[base, Field(**bounds)] if bounds else base
    _check(annotation, None, where, probe=True)
    return annotation


def _array(node: Mapping[str, Any], where: str) -> Any:
    items = node.get("items")
    if not isinstance(items, Mapping) or items.get("type") not in ("string", "integer", "number"):
        raise ConfigError(f'{where}.items: a string, integer or number schema (type = "string")')
    _known_keys(items, _KEYS[items["type"]] - {"default"}, f"{where}.items")
    item = _scalar(items["type"], items, f"{where}.items")
    bounds = {
        option: _bound(key, node[key], f"{where}.{key}")
        for key, option in (("minItems", "min_length"), ("maxItems", "max_length"))
        if key in node
    }
    return Annotated[list[item], Field(**bounds)] if bounds else list[item]  # type: ignore[valid-type]


def _bound(key: str, value: Any, where: str) -> Any:
    if key == "pattern":
        if not isinstance(value, str):
            raise ConfigError(f"{where}: a regular expression (a string)")
        return value
    numeric = key in ("minimum", "maximum")
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or (not numeric and not isinstance(value, int))
    ):
        raise ConfigError(f"{where}: a {'number' if numeric else 'whole number'}")
    if not numeric and value < 0:
        raise ConfigError(f"{where}: at least 0")
    return value


def _check(annotation: Any, value: Any, where: str, *, probe: bool = False) -> None:
    """Build a validator of ``annotation`` (a bad pattern fails here) and, unless ``probe``, check
    that it takes ``value``.

    Raises:
        ConfigError: the validator cannot be built, or refuses ``value``.
    """
    try:
        adapter: TypeAdapter[Any] = TypeAdapter(annotation, config={"strict": True})
        if not probe:
            adapter.validate_python(value)
    except SchemaError as exc:
        raise ConfigError(f"{where}: {str(exc).splitlines()[-1].strip()}") from None
    except ValidationError as exc:
        raise ConfigError(f"{where}: {value!r}: {exc.errors()[0]['msg']}") from None
