"""The model-facing part of tools/list stays small: what clients hand the model for each tool
(name, description, input schema) costs context on every request (issue 14, item 6)."""

from __future__ import annotations

import json
from pathlib import Path

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
"""For those 22 tools together, as ``json.dumps`` writes it (with its default spaces)."""


async def test_names_descriptions_and_input_schemas_fit_24_kib(tmp_path: Path) -> None:
    async with connect(config_for(tmp_path)) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert tools.keys() >= TOOLS_OF_ISSUE_14
    sizes = {
        name: len(
            json.dumps(
                {
                    "name": name,
                    "description": tools[name].description,
                    "inputSchema": tools[name].input_schema,
                }
            ).encode()
        )
        for name in TOOLS_OF_ISSUE_14
    }
    assert sum(sizes.values()) <= BUDGET_BYTES, sorted(sizes.items(), key=lambda item: -item[1])


async def test_every_field_has_a_description_and_none_repeats_its_tool_description(tmp_path: Path) -> None:
    async with connect(config_for(tmp_path)) as client:
        tools = [tool for tool in (await client.list_tools()).tools if tool.name in TOOLS_OF_ISSUE_14]
    for tool in tools:
        for name, field in tool.input_schema.get("properties", {}).items():
            text = field.get("description", "")
            assert text, f"{tool.name}.{name} has no description"
            assert text not in (tool.description or ""), f"{tool.name}.{name} repeats the tool's description"
