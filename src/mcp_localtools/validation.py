"""How a call's arguments are refused, worded for the model: a pydantic ``ValidationError`` as one
message (``validation_message``), and strings that no file, command line or environment can carry
(``lone_surrogate``). ``Registry.call`` uses both before a tool runs."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import ValidationError

from mcp_localtools.spec import ToolSpec

__all__ = ["lone_surrogate", "validation_message"]

_SURROGATE = re.compile("[\ud800-\udfff]")


def lone_surrogate(value: Any, where: str) -> str | None:
    """The argument path (``edits[0].newText``) of the first string in ``value`` holding a lone
    surrogate, which no UTF-8 file, command line or environment can carry; None if there is none.
    JSON over MCP cannot produce one, but the JSON command line and the Python API can."""
    if isinstance(value, str):
        return None if value.isascii() or not _SURROGATE.search(value) else where
    if isinstance(value, Mapping):
        items: Iterable[tuple[str, Any]] = (
            (f"{where}.{key}" if where else str(key), v) for key, v in value.items()
        )
    elif isinstance(value, list | tuple):
        items = ((f"{where}[{index}]", v) for index, v in enumerate(value))
    else:
        return None
    return next((found for path, item in items if (found := lone_surrogate(item, path))), None)


def validation_message(name: str, spec: ToolSpec[Any], exc: ValidationError) -> str:
    """``exc`` (the arguments of tool ``name`` failing ``spec.args_model``) as one message the
    model can act on: ``invalid arguments for NAME: `` and each problem, an unknown argument with
    the valid ones."""
    known = sorted((f.alias or n) for n, f in spec.args_model.model_fields.items())
    problems = []
    for err in exc.errors():
        where = ".".join(str(part) for part in err["loc"]) or "arguments"
        if err["type"] == "extra_forbidden":
            problems.append(f"unknown argument {where!r} (valid: {', '.join(known)})")
        elif err["type"] == "missing":
            problems.append(f"{where}: required")
        else:
            problems.append(f"{where}: {err['msg']}")
    return f"invalid arguments for {name}: " + "; ".join(problems)
