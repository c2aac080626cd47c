"""The ``env`` argument of the command tools: environment variables as a list of ``{name, value}``.

An open map (``{"type": "object", "additionalProperties": {"type": "string"}}``) is what strict
converters cannot keep: OpenAI strict mode refuses it (openai-agents falls back to non-strict),
and the strict transforms of langchain, pydantic-ai and anthropic turn it into an object that must
stay empty, so the model can no longer pass a variable (``docs/clients.md``). A list of
closed ``{name, value}`` objects survives every one of them, so that is what the schema publishes;
the object form (``{"NAME": "value"}``) keeps working for clients that send it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import BeforeValidator, Field, WithJsonSchema

__all__ = ["ENV_ITEM_SCHEMA", "EnvArgument", "env_field"]

ENV_ITEM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "Variable name."},
        "value": {"anyOf": [{"type": "string"}, {"type": "null"}], "description": "null unsets it."},
    },
    "required": ["name", "value"],
    "additionalProperties": False,
}


def _from_list(value: Any) -> Any:
    """``[{"name": N, "value": V}, ...]`` as ``{N: V, ...}``; anything else is left for the
    ``dict[str, str | None]`` check (the object form, ``null``).

    Raises:
        ValueError: an item is not exactly ``{name, value}`` with string values, or a name is
            given twice.
    """
    if not isinstance(value, list):
        return value
    env: dict[str, str | None] = {}
    for index, item in enumerate(value):
        if not isinstance(item, Mapping) or set(item) != {"name", "value"}:
            raise ValueError(f'item {index} must be {{"name": "...", "value": "..."}}')
        name, text = item["name"], item["value"]
        if not isinstance(name, str) or not (text is None or isinstance(text, str)):
            raise ValueError(f"item {index}: name must be a string, value a string or null")
        if name in env:
            raise ValueError(f"{name} is given twice")
        env[name] = text
    return env


EnvArgument = Annotated[
    dict[str, str | None],
    BeforeValidator(_from_list),
    WithJsonSchema({"type": "array", "items": ENV_ITEM_SCHEMA}),
]
"""``env``: a list of ``{name, value}`` (published) or an object of names to values (accepted);
validates to ``dict[str, str | None]``; a None value unsets the variable. Declare it with
``env_field(description)``: absent, ``null`` and ``[]`` all mean no variables."""


def env_field(description: str) -> Any:
    """The ``Field`` of an ``EnvArgument``: empty by default, published as ``"default": []``
    (mcp-use sends ``null`` for a property without a default; ``[]`` is what the schema's type allows)."""
    return Field(default_factory=dict, json_schema_extra={"default": []}, description=description)
