"""Run the real schema converters of the clients in ``docs/clients.md`` over our tools.

Runs in its own virtualenv (``.ci/compat`` makes it): openai-agents and mcp-use pin the MCP SDK
to 1.x, which the server cannot share. Reads the ``tools/list`` manifests as JSON on stdin and
writes, per tool, what each converter made of it to the JSON file named by its argument.
``test_converters.py`` judges.
"""

from __future__ import annotations

import copy
import json
import os
import sys
import traceback
from types import SimpleNamespace
from typing import Any


def versions() -> dict[str, str]:
    from importlib.metadata import version

    names = ["openai-agents", "google-genai", "anthropic", "langchain-core", "mcp-use", "mcp"]
    return {name: version(name) for name in names}


def failure(exc: BaseException) -> dict[str, Any]:
    return {"ok": False, "error": f"{type(exc).__name__}: {exc}", "trace": traceback.format_exc(limit=3)}


def openai_strict(schema: dict[str, Any]) -> dict[str, Any]:
    """openai-agents' MCP path: ``ensure_strict_json_schema(..., _reject_open_objects=True)``."""
    from agents.strict_schema import ensure_strict_json_schema

    try:
        converted = ensure_strict_json_schema(copy.deepcopy(schema), _reject_open_objects=True)
    except Exception as exc:
        return failure(exc)
    return {"ok": True, "schema": converted}


def gemini(tool: dict[str, Any]) -> dict[str, Any]:
    """google-genai's MCP conversion (``_mcp_utils.mcp_to_gemini_tool``); lists the top-level
    properties whose description the conversion lost."""
    from google.genai import _mcp_utils

    mcp_tool = SimpleNamespace(
        name=tool["name"], description=tool["description"], inputSchema=tool["inputSchema"]
    )
    try:
        converted = _mcp_utils.mcp_to_gemini_tool(mcp_tool)
    except Exception as exc:
        return failure(exc)
    declaration = converted.function_declarations[0]
    properties = declaration.parameters.properties or {}
    lost = [
        name
        for name, original in tool["inputSchema"].get("properties", {}).items()
        if original.get("description") and not (name in properties and properties[name].description)
    ]
    return {
        "ok": True,
        "lost_descriptions": lost,
        "schema": declaration.parameters.model_dump(exclude_none=True),
    }


def gemini_strict(schema: dict[str, Any]) -> dict[str, Any]:
    """google-genai's typed schema model, strictly: ``JSONSchema`` (unknown keywords refused, e.g.
    ``exclusiveMinimum``) converted by ``Schema.from_json_schema`` with
    ``raise_error_on_unsupported_field=True``, for the Gemini API."""
    from google.genai import types

    try:
        parsed = types.JSONSchema.model_validate(copy.deepcopy(schema))
        converted = types.Schema.from_json_schema(
            json_schema=parsed, api_option="GEMINI_API", raise_error_on_unsupported_field=True
        )
    except Exception as exc:
        return failure(exc)
    return {"ok": True, "schema": converted.model_dump(exclude_none=True, mode="json")}


def anthropic_strict(schema: dict[str, Any]) -> dict[str, Any]:
    """anthropic's ``transform_schema`` (what its helpers apply for strict tools)."""
    from anthropic.lib._parse._transform import transform_schema

    try:
        converted = transform_schema(copy.deepcopy(schema))
    except Exception as exc:
        return failure(exc)
    return {"ok": True, "schema": converted}


def langchain_strict(tool: dict[str, Any]) -> dict[str, Any]:
    """langchain-core's ``convert_to_openai_tool(strict=True)``."""
    from langchain_core.utils.function_calling import convert_to_openai_tool

    spec = {
        "name": tool["name"],
        "description": tool["description"],
        "parameters": copy.deepcopy(tool["inputSchema"]),
    }
    try:
        converted = convert_to_openai_tool(spec, strict=True)
    except Exception as exc:
        return failure(exc)
    return {"ok": True, "schema": converted["function"]["parameters"]}


def mcp_use_arguments(schema: dict[str, Any], required: dict[str, Any]) -> dict[str, Any]:
    """What mcp-use sends: its adapter's argument model (``jsonschema_to_pydantic`` of
    ``fix_schema``) filled with ``required``, dumped with every property (``None`` for the rest)."""
    from jsonschema_pydantic import jsonschema_to_pydantic
    from mcp_use.agents.adapters.langchain_adapter import LangChainAdapter

    try:
        model = jsonschema_to_pydantic(LangChainAdapter().fix_schema(copy.deepcopy(schema)))
        sent = model.model_validate(required).model_dump(mode="json", by_alias=True)
    except Exception as exc:
        return failure(exc)
    return {"ok": True, "arguments": sent}


def anthropic_results(results: dict[str, Any]) -> dict[str, Any]:
    """anthropic's MCP helper on real results of ours (``_convert_tool_result``, what its
    ``mcp_tool`` returns to the model): raises on an embedded resource it cannot show."""
    from anthropic.lib.tools.mcp import _convert_tool_result
    from mcp.types import CallToolResult

    report: dict[str, Any] = {}
    for name, raw in results.items():
        try:
            _convert_tool_result(CallToolResult.model_validate(raw))
        except Exception as exc:
            report[name] = failure(exc)
        else:
            report[name] = {"ok": True}
    return report


def main() -> None:
    os.environ["MCP_USE_ANONYMIZED_TELEMETRY"] = "false"  # and no network: nothing else is reachable
    request = json.load(sys.stdin)
    report: dict[str, Any] = {"versions": versions(), "tools": {}}
    for tool in request["tools"]:
        schema = tool["inputSchema"]
        report["tools"][tool["name"]] = {
            "openai": openai_strict(schema),
            "gemini": gemini(tool),
            "gemini_strict": gemini_strict(schema),
            "anthropic": anthropic_strict(schema),
            "langchain": langchain_strict(tool),
            "mcp_use": mcp_use_arguments(schema, request["required"][tool["name"]]),
        }
    report["anthropic_results"] = anthropic_results(request.get("results", {}))
    with open(sys.argv[1], "w", encoding="utf-8") as out:  # stdout: mcp-use logs there
        json.dump(report, out)


if __name__ == "__main__":
    main()
