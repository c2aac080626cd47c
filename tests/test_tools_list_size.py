"""The model-facing part of tools/list stays small: what clients hand the model for each tool
(name, description, input schema) costs context on every request (issue 14, item 6)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import config_for, connect

pytestmark = pytest.mark.anyio

TOOLS_OF_ISSUE_14 = {
    "copypath", "deletefile", "deletetextlines", "directorytree", "editfile", "findtext", "globfiles",
    "inserttextlines", "listdirectory", "makedirectory", "mimeforextension", "mimeforpath", "movepath",
    "readfile", "readimage", "readtextrange", "replacetextlines", "runscript", "searchfiles",
    "shellcommand", "statpath", "writefile",
}  # fmt: skip
"""The 22 tools that existed when the budget was set; tools added later have budgets of their own."""

BUDGET_BYTES = 24 * 1024
"""For those 22 tools together, as ``json.dumps`` writes it (with its default spaces), both as
actually sent and with each description counted once (the copy of a nullable field's description
and default in its non-null ``anyOf`` branch, issue 15, for converters that keep only that branch,
left out). The 22 tools were 26.7 KB as sent and 24.1 KB counted once on 2026-11-24; after the
descriptions were shortened, 24.2 KB (24,234 bytes) as sent and 22.2 KB (22,201 bytes) once."""


def _without_branch_copies(node: object) -> object:
    """``node`` without the description/default repeated inside ``anyOf`` branches."""
    if isinstance(node, list):
        return [_without_branch_copies(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: _without_branch_copies(value) for key, value in node.items()}
    if isinstance(out.get("anyOf"), list):
        branches: list[Any] = list(out["anyOf"])  # type: ignore[call-overload]
        out["anyOf"] = [
            {k: v for k, v in branch.items() if k not in ("description", "default")}
            if isinstance(branch, dict)
            else branch
            for branch in branches
        ]
    return out


async def _sizes(tmp_path: Path, *, branch_copies: bool) -> dict[str, int]:
    """Bytes of each of the 22 tools' name, description and input schema, with or without the
    ``anyOf`` branch copies."""
    async with connect(config_for(tmp_path)) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert tools.keys() >= TOOLS_OF_ISSUE_14
    return {
        name: len(
            json.dumps(
                {
                    "name": name,
                    "description": tools[name].description,
                    "inputSchema": tools[name].input_schema
                    if branch_copies
                    else _without_branch_copies(tools[name].input_schema),
                }
            ).encode()
        )
        for name in TOOLS_OF_ISSUE_14
    }


async def test_names_descriptions_and_input_schemas_fit_24_kib(tmp_path: Path) -> None:
    sizes = await _sizes(tmp_path, branch_copies=False)
    assert sum(sizes.values()) <= BUDGET_BYTES, sorted(sizes.items(), key=lambda item: -item[1])


async def test_as_sent_with_the_branch_copies_they_fit_24_kib_too(tmp_path: Path) -> None:
    sizes = await _sizes(tmp_path, branch_copies=True)
    assert sum(sizes.values()) <= BUDGET_BYTES, sorted(sizes.items(), key=lambda item: -item[1])


async def test_every_field_has_a_description_and_none_repeats_its_tool_description(tmp_path: Path) -> None:
    async with connect(config_for(tmp_path)) as client:
        tools = [tool for tool in (await client.list_tools()).tools if tool.name in TOOLS_OF_ISSUE_14]
    for tool in tools:
        for name, field in tool.input_schema.get("properties", {}).items():
            text = field.get("description", "")
            assert text, f"{tool.name}.{name} has no description"
            assert text not in (tool.description or ""), f"{tool.name}.{name} repeats the tool's description"


CODE_TOOLS = {"symbols": 592, "findsymbol": 865, "repomap": 626, "semanticsearch": 743}
"""The code tools (issue 28), each as sent on 2026-11-27, bytes of name, description and input schema."""

PER_TOOL_BYTES = 1100
"""The budget of each tool added after issue 14 (1.1 KB as ``json.dumps`` writes it)."""


async def test_each_code_tool_fits_its_own_budget(tmp_path: Path) -> None:
    async with connect(config_for(tmp_path)) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    for name in CODE_TOOLS:
        tool = tools[name]
        size = len(
            json.dumps(
                {"name": name, "description": tool.description, "inputSchema": tool.input_schema}
            ).encode()
        )
        assert size <= PER_TOOL_BYTES, (name, size)
        for field_name, field in tool.input_schema.get("properties", {}).items():
            assert field.get("description"), f"{name}.{field_name} has no description"


LIST_BUDGET_BYTES = 45_000
"""The whole ``tools/list`` result as compact JSON, every tool of the default configuration
(issue 35: it was 86-92 KB for 34 tools, output schemas half of it, and took 35 ms to serve against
the SDK floor's 5.6 ms)."""

_ANNOTATIONS_ONLY = ("description", "default", "title", "examples")


def _annotation_keys(node: object, where: str = "") -> list[str]:
    """Where a schema node carries a key that only annotates (a property *named* ``description``
    is a name, not an annotation)."""
    found: list[str] = []
    if isinstance(node, list):
        for index, item in enumerate(node):
            found += _annotation_keys(item, f"{where}[{index}]")
    elif isinstance(node, dict):
        for key, value in node.items():
            if key in _ANNOTATIONS_ONLY:
                found.append(f"{where}.{key}")
            elif key == "properties" and isinstance(value, dict):
                for name, sub in value.items():
                    found += _annotation_keys(sub, f"{where}.properties.{name}")
            else:
                found += _annotation_keys(value, f"{where}.{key}")
    return found


async def test_the_whole_tools_list_fits_45_kb_and_output_schemas_carry_only_what_is_validated(
    tmp_path: Path,
) -> None:
    async with connect(config_for(tmp_path)) as client:
        listed = await client.list_tools()
    size = len(listed.model_dump_json(by_alias=True, exclude_none=True).encode())
    assert size <= LIST_BUDGET_BYTES, size
    for tool in listed.tools:
        assert not _annotation_keys(tool.output_schema), (tool.name, _annotation_keys(tool.output_schema)[:5])
