"""Every tool converts for every provider, and every way a client fills in arguments is accepted.

The real converters run in their own virtualenv (``tests/compat/requirements.txt``; ``.ci/run``
makes it and sets ``MCP_LOCALTOOLS_COMPAT_PYTHON``): openai-agents' strict mode as its MCP path
calls it, google-genai's MCP conversion, anthropic's ``transform_schema``, langchain-core's
``convert_to_openai_tool(strict=True)`` and mcp-use's argument models. The tools are the live
``tools/list`` of a session of a server with ``[server] select_tools = true`` (so ``selecttools``,
which the server itself serves, is converted too), so a tool added later is covered without
touching this file. Issue 15; issue 35, item 4.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from mcp_localtools.config import Config
from mcp_localtools.registry import Registry
from mcp_localtools.server.toolsets import SELECT_TOOL, _SelectArgs
from mcp_localtools.tools import build_registry
from tests.helpers import config_for

PYTHON = os.environ.get("MCP_LOCALTOOLS_COMPAT_PYTHON", "")
REQUIRED = os.environ.get("MCP_LOCALTOOLS_REQUIRE_COMPAT") == "1"
CONVERTERS = ["openai", "gemini", "gemini_strict", "anthropic", "langchain"]
ALSO_NEEDED: dict[str, dict[str, Any]] = {"findtext": {"query": "a"}}
"""Optional arguments that another argument's default makes necessary (findtext's default
queryType, substring, needs a query); everything else a call needs is in the schema's required."""

if not PYTHON and not REQUIRED:
    pytest.skip(
        "the converters are not installed: python3 -m venv .compat-venv && .compat-venv/bin/pip install "
        "-r tests/compat/requirements.txt, then set MCP_LOCALTOOLS_COMPAT_PYTHON=.compat-venv/bin/python "
        "(CI does; MCP_LOCALTOOLS_REQUIRE_COMPAT=1 makes this a failure instead of a skip)",
        allow_module_level=True,
    )


def sample(schema: dict[str, Any]) -> Any:
    """The smallest value ``schema`` accepts (strings ``"a"``, numbers at their minimum)."""
    if "enum" in schema:
        return next(value for value in schema["enum"] if value is not None)
    if "anyOf" in schema:
        return sample(next(branch for branch in schema["anyOf"] if branch.get("type") != "null"))
    kind = schema.get("type")
    if kind == "string":
        return "a" * max(1, schema.get("minLength", 1))
    if kind in ("integer", "number"):
        return max(1, schema.get("minimum", 1), schema.get("exclusiveMinimum", 0) + 1)
    if kind == "boolean":
        return False
    if kind == "array":
        return [
            sample(schema.get("items", {"type": "string"})) for _ in range(max(1, schema.get("minItems", 1)))
        ]
    if kind == "object":
        properties = schema.get("properties", {})
        return {name: sample(properties[name]) for name in schema.get("required", [])}
    raise AssertionError(f"no sample for {schema}")


DECLARED: dict[str, Any] = {
    "tests": {
        "description": "Run the tests.",
        "command": ["python3", "-m", "pytest", ["-k", "{match}"], ["-x", "{failFast}"], ["-n", "{workers}"],
                    ["--level={level}"], ["--ratio={ratio}"], "--", "{paths}"],
        "input_schema": {
            "type": "object",
            "required": ["paths"],
            "properties": {
                "match": {"type": "string", "pattern": "^[a-z_ ]+$", "maxLength": 100, "description": "-k."},
                "failFast": {"type": "boolean", "default": False, "description": "Stop early."},
                "workers": {"type": "integer", "minimum": 1, "maximum": 64, "description": "Processes."},
                "level": {"type": "string", "enum": ["quiet", "verbose"], "description": "Output."},
                "ratio": {"type": "number", "minimum": 0, "maximum": 1, "default": 0.5, "description": "S."},
                "paths": {"type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 1,
                          "description": "Test files."},
            },
        },
    },
    "release": {"description": "Lint, then test.", "steps": [["ruff", "check"], ["python3", "-m", "pytest"]]},
}  # fmt: skip
"""Declared tools (``[tools.custom]``) with every schema feature a declared tool may use: each must
convert for every provider like a built-in tool (what none could take is refused at start-up)."""


def _config(root: Path) -> Config:
    return config_for(root, tools={"custom": DECLARED}, server={"select_tools": True})


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Registry:
    return build_registry(_config(tmp_path_factory.mktemp("compat")))


def _validate(registry: Registry, tool: str, arguments: dict[str, Any]) -> None:
    """Validate ``arguments`` as the server does for ``tool`` (``selecttools`` is the server's own)."""
    if tool == SELECT_TOOL:  # the server reads a null as the default, as ToolArgs does
        _SelectArgs.model_validate({key: value for key, value in arguments.items() if value is not None})
    else:
        registry.get(tool).args_model.model_validate(arguments)


async def _listed(root: Path) -> list[dict[str, Any]]:
    """The tools a session lists (``selecttools`` among them), as wire JSON."""
    from tests.helpers import connect

    async with connect(_config(root), mode="legacy") as client:
        listed = (await client.list_tools()).tools
    return [tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in listed]


def test_the_declared_tools_and_selecttools_are_among_the_converted(converted: dict[str, Any]) -> None:
    assert set(DECLARED) | {SELECT_TOOL} <= set(converted["tools"])


SAMPLE_CALLS: dict[str, tuple[str, dict[str, Any]]] = {
    "zip as binary": ("readfile", {"path": "a.zip", "encoding": "binary"}),
    "png as binary": ("readfile", {"path": "a.png", "encoding": "binary"}),
    "pdf as binary": ("readfile", {"path": "a.pdf", "encoding": "binary"}),
    "pdf as text": ("readfile", {"path": "a.pdf"}),
    "text": ("readfile", {"path": "a.txt"}),
    "a listing": ("listdirectory", {"path": "."}),
}


async def _sample_results(root: Path) -> dict[str, Any]:
    """Real results of ours, as wire JSON, for the helpers that turn results into model input."""
    from tests.helpers import connect, make_pdf, make_png

    (root / "a.zip").write_bytes(b"PK\x05\x06" + bytes(18))
    (root / "a.png").write_bytes(make_png(8, 6))
    (root / "a.pdf").write_bytes(make_pdf(["page one"]))
    (root / "a.txt").write_text("hello\n", encoding="utf-8")
    results: dict[str, Any] = {}
    async with connect(config_for(root)) as client:
        for label, (tool, arguments) in SAMPLE_CALLS.items():
            result = await client.call_tool(tool, arguments)
            assert not result.is_error, label
            results[label] = result.model_dump(mode="json", by_alias=True, exclude_none=True)
    return results


@pytest.fixture(scope="module")
def converted(registry: Registry, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    import anyio

    tools = anyio.run(_listed, tmp_path_factory.mktemp("listed"))
    results = anyio.run(_sample_results, tmp_path_factory.mktemp("results"))
    required = {
        tool["name"]: {
            **sample({**tool["inputSchema"], "type": "object"}),
            **ALSO_NEEDED.get(tool["name"], {}),
        }
        for tool in tools
    }
    out = tmp_path_factory.mktemp("converted") / "report.json"
    script = Path(__file__).with_name("convert.py")
    done = subprocess.run(
        [PYTHON or "python3", str(script), str(out)],
        input=json.dumps({"tools": tools, "required": required, "results": results}),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={**os.environ, "MCP_USE_ANONYMIZED_TELEMETRY": "false"},
    )
    assert done.returncode == 0, done.stderr[-4000:]
    report: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    report["required"] = required
    report["schemas"] = {tool["name"]: tool["inputSchema"] for tool in tools}
    return report


def test_every_tool_converts_strictly_for_openai_anthropic_langchain_and_gemini(
    converted: dict[str, Any],
) -> None:
    failures = {
        f"{tool}/{converter}": result[converter]["error"]
        for tool, result in converted["tools"].items()
        for converter in CONVERTERS
        if not result[converter]["ok"] and not _open_object(tool, converter, result, converted)
    }
    assert failures == {}
    assert len(converted["tools"]) >= 22


def _open_object(tool: str, converter: str, result: dict[str, Any], converted: dict[str, Any]) -> bool:
    """openai-agents' strict mode refuses an object with no properties unless it says
    ``additionalProperties: false``, which google-genai's MCP converter crashes on: a declared tool
    without arguments (``release``) is published as ``{"type": "object", "properties": {}}``, and
    openai-agents' MCP path then uses it non-strict (``agents/mcp/util.py`` falls back). Only that
    refusal, of a tool without arguments, is expected."""
    return (
        converter == "openai"
        and not converted["required"][tool]
        and "permits undeclared properties" in result[converter]["error"]
        and tool in DECLARED
        and not DECLARED[tool].get("input_schema")
    )


def test_gemini_keeps_the_description_of_every_property(converted: dict[str, Any]) -> None:
    lost = {tool: result["gemini"]["lost_descriptions"] for tool, result in converted["tools"].items()}
    assert {tool: names for tool, names in lost.items() if names} == {}


def _takes_a_string(schema: dict[str, Any]) -> bool:
    """A string is valid: ``{"type": "string"}``, or a branch of ``anyOf`` is one (``null``
    beside it unsets a variable)."""
    return any(branch.get("type") == "string" for branch in schema.get("anyOf", [schema]))


def _env_is_usable(schema: dict[str, Any]) -> bool:
    """``env`` still lets the model pass variables: a list of objects whose name is a string and
    whose value may be a string."""
    env = schema["properties"]["env"]
    branches = env.get("anyOf", [env])
    arrays = [branch for branch in branches if branch.get("type") == "array"]
    if not arrays:
        return False
    item = arrays[0]["items"]
    properties = item.get("properties", {})
    return (
        {"name", "value"} <= set(properties)
        and properties["name"].get("type") == "string"
        and _takes_a_string(properties["value"])
    )


def test_env_stays_usable_after_every_strict_transform(converted: dict[str, Any]) -> None:
    with_env = [
        tool
        for tool, result in converted["tools"].items()
        if "env" in result["openai"].get("schema", {}).get("properties", {})
    ]
    assert {"shellcommand", "runscript"} <= set(with_env)
    for tool in with_env:
        for converter in ("openai", "anthropic", "langchain"):
            assert _env_is_usable(converted["tools"][tool][converter]["schema"]), f"{tool}/{converter}"


def test_what_mcp_use_sends_is_accepted_by_every_tool(converted: dict[str, Any], registry: Registry) -> None:
    for tool, result in converted["tools"].items():
        assert result["mcp_use"]["ok"], f"{tool}: {result['mcp_use'].get('error')}"
        _validate(registry, tool, result["mcp_use"]["arguments"])


def test_calls_with_all_defaults_or_all_nulls_are_accepted(
    converted: dict[str, Any], registry: Registry
) -> None:
    for tool in converted["tools"]:
        schema = converted["schemas"][tool]
        required = converted["required"][tool]
        optional = [name for name in schema.get("properties", {}) if name not in required]
        defaults = {
            name: schema["properties"][name]["default"]
            for name in optional
            if "default" in schema["properties"][name]
        }
        _validate(registry, tool, {**required, **defaults})
        _validate(registry, tool, {**required, **dict.fromkeys(optional)})


def test_anthropics_helper_takes_every_kind_of_result_we_send(converted: dict[str, Any]) -> None:
    """An embedded resource of a type other than image or PDF made it raise and lose the result."""
    report = converted["anthropic_results"]
    assert set(report) == set(SAMPLE_CALLS)
    assert {label: r["error"] for label, r in report.items() if not r["ok"]} == {}
