"""What every published input schema must be, for every provider's converter (issue 30, item 7).

``tests/compat`` runs the real converters in their own virtualenv; these checks hold without them:
every optional list says ``"default": []`` (mcp-use sends ``null`` for a property without a default,
and some converters drop ``null``), no ``exclusiveMinimum``/``exclusiveMaximum`` anywhere (Gemini's
strict schema model has no such field and refuses it), and no description states a figure that
the config changes.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mcp_localtools.registry import Registry
from mcp_localtools.tools import build_registry
from tests.helpers import config_for, connect

pytestmark = pytest.mark.anyio


@pytest.fixture
def registry(tmp_path: Path) -> Registry:
    return build_registry(config_for(tmp_path))


def _nodes(node: Any, path: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    if isinstance(node, dict):
        yield path, node
        for key, value in node.items():
            yield from _nodes(value, f"{path}/{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _nodes(value, f"{path}/{index}")


def _is_list(schema: dict[str, Any]) -> bool:
    return schema.get("type") == "array" or any(
        isinstance(branch, dict) and branch.get("type") == "array" for branch in schema.get("anyOf", [])
    )


def test_every_optional_list_argument_defaults_to_an_empty_list(registry: Registry) -> None:
    missing = []
    for name in registry.names():
        schema = registry.manifest(name)["inputSchema"]
        for path, node in _nodes(schema):
            required = set(node.get("required", []))
            for field, prop in node.get("properties", {}).items():
                if _is_list(prop) and field not in required and prop.get("default") != []:
                    missing.append(f"{name}{path}/properties/{field}: default {prop.get('default')!r}")
    assert missing == []


def test_no_schema_uses_an_exclusive_bound(registry: Registry) -> None:
    found = [
        f"{name}{path}"
        for name in registry.names()
        for kind in ("inputSchema", "outputSchema")
        for path, node in _nodes(registry.manifest(name).get(kind, {}))
        if "exclusiveMinimum" in node or "exclusiveMaximum" in node
    ]
    assert found == []


async def test_an_empty_list_for_an_optional_list_is_the_same_as_leaving_it_out(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("a\nmark\nb\nx\n", encoding="utf-8")
    async with connect(config_for(tmp_path)) as client:
        read = await client.call_tool(
            "readtextrange", {"path": "f.txt", "startMatchLines": [], "endMatchLines": [], "startLine": 2}
        )
        assert not read.is_error and read.structured_content["startLine"] == 2
        found = await client.call_tool("findtext", {"path": "f.txt", "query": "mark", "matchLines": []})
        assert not found.is_error and found.structured_content["matchesReturned"] == 1
        deleted = await client.call_tool(
            "deletetextlines", {"path": "f.txt", "matchLines": ["x"], "beforeLines": [], "afterLines": []}
        )
        assert not deleted.is_error
        inserted = await client.call_tool(
            "inserttextlines", {"path": "f.txt", "linesToInsert": ["z"], "anchorMatchLines": []}
        )
        assert not inserted.is_error
    assert (tmp_path / "f.txt").read_text(encoding="utf-8") == "a\nmark\nb\nz\n"


async def test_a_list_argument_that_needs_items_still_says_so_when_given_empty(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("a\n", encoding="utf-8")
    async with connect(config_for(tmp_path)) as client:
        block = await client.call_tool(
            "findtext", {"path": "f.txt", "queryType": "lineBlock", "matchLines": []}
        )
        anchor = await client.call_tool(
            "inserttextlines",
            {"path": "f.txt", "linesToInsert": ["z"], "position": "afterAnchor", "anchorMatchLines": []},
        )
    assert block.is_error and "matchLines is required" in block.content[0].text  # type: ignore[union-attr]
    assert anchor.is_error and "needs anchorMatchLines" in anchor.content[0].text  # type: ignore[union-attr]


def test_figures_that_come_from_the_config_are_rendered_from_it(tmp_path: Path) -> None:
    limits = {"max_read_bytes": 3 * 1024 * 1024, "max_write_bytes": 5 * 1024 * 1024}
    registry = build_registry(config_for(tmp_path, limits=limits))
    listed = json.dumps([registry.manifest(name) for name in registry.names()])
    assert "16 MiB" not in listed and "16777216" not in listed
    search = registry.manifest("searchfiles")
    assert "3 MiB" in search["description"] + json.dumps(search["inputSchema"])
    assert "5 MiB" in registry.manifest("writefile")["description"]


async def test_no_listed_schema_has_a_boolean_additional_properties_selecttools_included(
    tmp_path: Path,
) -> None:
    """google-genai's MCP converter reads ``additionalProperties`` as a mapping and crashes on
    ``false``: selecttools' input schema had a top-level ``"additionalProperties": false``."""
    config = config_for(tmp_path, server={"select_tools": True})
    async with connect(config, mode="legacy") as client:  # selecttools is served to sessions
        tools = (await client.list_tools()).tools
    assert "selecttools" in {tool.name for tool in tools}
    found = [
        f"{tool.name}{path}"
        for tool in tools
        for path, node in _nodes(tool.input_schema)
        if isinstance(node.get("additionalProperties"), bool)
    ]
    assert found == []
    select = next(tool for tool in tools if tool.name == "selecttools").input_schema
    assert not any("title" in node for _, node in _nodes(select.get("properties", {}))), select
