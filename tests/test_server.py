"""The MCP adapter: tool metadata, result mapping, unknown tools, [tools] selection, both eras."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import MCPError
from mcp.types import INVALID_PARAMS

from mcp_localtools.server import ERROR_META_KEY
from mcp_localtools.tools import build_registry
from tests.helpers import (
    INITIALIZE,
    INITIALIZED,
    call_message,
    config_for,
    connect,
    error_code,
    raw_stdio_exchange,
    text_of,
)

pytestmark = pytest.mark.anyio

FS_TOOLS = ["listdirectory", "mimeforextension", "mimeforpath", "readfile", "statpath"]


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_every_tool_has_title_description_schemas_and_all_four_annotations(
    tmp_path: Path, mode: str
) -> None:
    async with connect(config_for(tmp_path), mode=mode) as client:
        tools = (await client.list_tools()).tools
    assert [tool.name for tool in tools] == sorted(tool.name for tool in tools)
    assert set(FS_TOOLS) <= {tool.name for tool in tools}
    for tool in tools:
        assert tool.title and tool.description
        schema = tool.input_schema
        # No additionalProperties: Gemini's converter crashes on a boolean there (registry._portable);
        # unknown arguments are refused by the server all the same.
        assert schema["type"] == "object" and "additionalProperties" not in json.dumps(schema)
        assert "title" not in schema and "$ref" not in json.dumps(schema) and "$defs" not in schema
        for name, prop in schema["properties"].items():
            assert prop.get("description"), f"{tool.name}.{name} has no description"
        assert tool.output_schema is not None and tool.output_schema["type"] == "object"
        hints = tool.annotations
        assert hints is not None
        assert None not in (hints.read_only_hint, hints.destructive_hint, hints.idempotent_hint)
        # Commands can reach anything the machine can (interpreters, git, pip), httpget the web.
        open_world = ("shellcommand", "runscript", "httpget", "startprocess", "writeprocess")
        assert hints.open_world_hint is (tool.name in open_world)


async def test_tools_list_serves_exactly_the_registry_manifests(tmp_path: Path) -> None:
    config = config_for(tmp_path)
    registry = build_registry(config)
    async with connect(config) as client:
        tools = (await client.list_tools()).tools
    served = [tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in tools]
    assert served == [registry.manifest(name) for name in registry.names()]


async def test_argument_names_are_camel_case_with_defaults_and_bounds(tmp_path: Path) -> None:
    async with connect(config_for(tmp_path)) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    props = tools["listdirectory"].input_schema["properties"]
    assert set(props) == {"path", "pattern", "details", "maxEntries"}
    assert props["maxEntries"]["default"] == 1000 and props["maxEntries"]["maximum"] == 10_000
    assert tools["readfile"].input_schema["required"] == ["path"]
    assert tools["readfile"].input_schema["properties"]["encoding"]["enum"] == ["text", "binary"]


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_an_unknown_tool_is_a_protocol_error_invalid_params(tmp_path: Path, mode: str) -> None:
    async with connect(config_for(tmp_path), mode=mode) as client:
        with pytest.raises(MCPError) as caught:
            await client.call_tool("nosuchtool", {})
    assert caught.value.error.code == INVALID_PARAMS


async def test_unknown_arguments_are_refused_naming_the_valid_ones(tmp_path: Path) -> None:
    async with connect(config_for(tmp_path)) as client:
        result = await client.call_tool("statpath", {"path": ".", "follow": True})
    assert error_code(result) == "invalid_arguments"
    assert "unknown argument 'follow'" in text_of(result) and "valid: path" in text_of(result)


async def test_snake_case_argument_names_are_refused(tmp_path: Path) -> None:
    async with connect(config_for(tmp_path)) as client:
        result = await client.call_tool("listdirectory", {"max_entries": 3})
    assert error_code(result) == "invalid_arguments" and "maxEntries" in text_of(result)


async def test_results_carry_structured_content_and_a_text_rendering(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("abc", encoding="utf-8")
    async with connect(config_for(tmp_path)) as client:
        result = await client.call_tool("statpath", {"path": "a.txt"})
    assert result.structured_content is not None and result.structured_content["sizeBytes"] == 3
    assert '"sizeBytes":3' in text_of(result)


async def test_an_error_result_has_no_traceback_and_no_structured_content(tmp_path: Path) -> None:
    async with connect(config_for(tmp_path)) as client:
        result = await client.call_tool("readfile", {"path": "missing.txt"})
    assert error_code(result) == "not_found" and result.structured_content is None
    assert "Traceback" not in text_of(result)


async def test_an_error_result_carries_its_stable_code_and_message_in_meta(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("keep", encoding="utf-8")
    async with connect(config_for(tmp_path)) as client:
        missing = await client.call_tool("readfile", {"path": "missing.txt"})
        outside = await client.call_tool("readfile", {"path": "/etc/hostname"})
        clobber = await client.call_tool("writefile", {"path": "a.txt", "content": "new"})
        invalid = await client.call_tool("readfile", {"path": "a.txt", "limit": 0})
        ok = await client.call_tool("readfile", {"path": "a.txt"})
    assert [error_code(r) for r in (missing, outside, clobber, invalid)] == [
        "not_found",
        "outside_roots",
        "already_exists",
        "invalid_arguments",
    ]
    assert (missing.meta or {})[ERROR_META_KEY] == {"code": "not_found", "message": text_of(missing)}
    assert error_code(ok) is None and not (ok.meta or {}).get(ERROR_META_KEY)


async def test_the_error_code_is_in_the_raw_json_rpc_answer_on_stdio(tmp_path: Path) -> None:
    messages = [INITIALIZE, INITIALIZED, call_message(2, "statpath", {"path": "../outside"})]
    by_id, _ = raw_stdio_exchange(tmp_path, messages)
    reply = by_id[2]
    assert reply["result"]["isError"] is True
    assert reply["result"]["_meta"][ERROR_META_KEY]["code"] == "outside_roots"
    assert "structuredContent" not in reply["result"]


async def test_tools_enabled_and_disabled_select_by_name_group_and_glob(tmp_path: Path) -> None:
    config = config_for(tmp_path, tools={"enabled": ["fs"], "disabled": ["mime*", "*path", "*file"]})
    async with connect(config) as client:
        names = [tool.name for tool in (await client.list_tools()).tools]
    assert names == ["directorytree", "globfiles", "listdirectory", "makedirectory", "searchfiles"]
    async with connect(config_for(tmp_path, tools={"enabled": ["fs.readfile"]})) as client:
        assert [tool.name for tool in (await client.list_tools()).tools] == ["readfile"]


async def test_read_only_registers_only_read_only_tools(tmp_path: Path) -> None:
    async with connect(config_for(tmp_path, tools={"read_only": True})) as client:
        tools = (await client.list_tools()).tools
    assert tools and all(tool.annotations and tool.annotations.read_only_hint for tool in tools)


async def test_a_disabled_tool_is_unknown(tmp_path: Path) -> None:
    async with connect(config_for(tmp_path, tools={"disabled": ["readfile"]})) as client:
        with pytest.raises(MCPError):
            await client.call_tool("readfile", {"path": "x"})


async def test_the_server_instructions_name_the_roots(tmp_path: Path) -> None:
    async with connect(config_for(tmp_path), mode="legacy") as client:
        assert str(tmp_path) in (client.instructions or "")
        assert "narrowed to the folders your client shares" in (client.instructions or "")


@pytest.mark.parametrize("roots", [True, False], ids=["configured-roots", "no-roots"])
async def test_the_instructions_follow_client_roots_off(tmp_path: Path, roots: bool) -> None:
    paths: dict[str, Any] = {"client_roots": False} | ({} if roots else {"allowed_roots": []})
    async with connect(config_for(tmp_path, paths=paths), mode="legacy") as client:
        instructions = client.instructions or ""
    assert "client shares" not in instructions
    assert (str(tmp_path) in instructions) if roots else ("--root DIR" in instructions)


async def test_null_optional_arguments_are_accepted_over_mcp(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x\n", encoding="utf-8")
    async with connect(config_for(tmp_path)) as client:
        listed = await client.call_tool("globfiles", {"pattern": "*.py", "exclude": None, "maxResults": None})
        read = await client.call_tool("readfile", {"path": "a.py", "offset": None, "limit": None})
    assert not listed.is_error and not read.is_error, text_of(listed) + text_of(read)
    assert text_of(read) == "x\n"


async def test_each_handshake_era_connection_is_a_session_whose_end_is_announced() -> None:
    from dataclasses import replace

    from mcp import Client

    from mcp_localtools.registry import Registry
    from mcp_localtools.results import ToolResult
    from mcp_localtools.server import create_server
    from mcp_localtools.spec import CallContext
    from tests.test_registry import EchoArgs, EchoResult, spec

    seen: list[tuple[str, str | None]] = []
    ended: list[str] = []

    async def whoami(args: EchoArgs, ctx: CallContext) -> ToolResult:
        seen.append((ctx.session_id, ctx.client_name))
        return ToolResult.of(EchoResult(text=ctx.session_id))

    async def end(session_id: str) -> None:
        ended.append(session_id)

    registry = Registry()
    registry.register(replace(spec(handler=whoami), on_session_end=end))
    registry.register(replace(spec(name="echo2", handler=whoami), on_session_end=end))
    server = create_server(registry)
    async with Client(server, mode="legacy") as first:
        await first.call_tool("echo", {})
        await first.call_tool("echo2", {})
        async with Client(server, mode="legacy") as second:
            await second.call_tool("echo", {})
        assert len(ended) == 1 and ended[0] == seen[2][0]  # the second ended, announced once
    assert seen[0][0] == seen[1][0] != seen[2][0]
    assert ended == [seen[2][0], seen[0][0]]
    assert all(name for _, name in seen)


async def test_2026_era_requests_share_one_stateless_session_per_principal_ended_with_the_server() -> None:
    from dataclasses import replace

    from mcp import Client

    from mcp_localtools.registry import Registry
    from mcp_localtools.results import ToolResult
    from mcp_localtools.server import STATELESS_SESSION, create_server
    from mcp_localtools.spec import CallContext
    from tests.test_registry import EchoArgs, EchoResult, spec

    seen: list[str] = []
    ended: list[str] = []

    async def whoami(args: EchoArgs, ctx: CallContext) -> ToolResult:
        seen.append(ctx.session_id)
        return ToolResult.of(EchoResult(text=ctx.session_id))

    async def end(session_id: str) -> None:
        ended.append(session_id)

    registry = Registry()
    registry.register(replace(spec(handler=whoami), on_session_end=end))
    async with Client(create_server(registry), mode="2026-07-28") as client:
        await client.call_tool("echo", {})
        await client.call_tool("echo", {})
        assert ended == []  # a request ends nothing
    assert seen == [f"{STATELESS_SESSION}/stdio/-", f"{STATELESS_SESSION}/stdio/-"]
    assert ended == [f"{STATELESS_SESSION}/stdio/-"]  # the server's last connection closed


@pytest.mark.parametrize(
    ("tool", "arguments", "field", "wanted"),
    [
        ("inserttextlines", {"path": "a.txt", "text": "x", "lineNumber": "3"}, "lineNumber", "integer"),
        ("writefile", {"path": "b.txt", "content": "x", "overwrite": "yes"}, "overwrite", "boolean"),
        ("readfile", {"path": "a.txt", "limit": True}, "limit", "integer"),
        ("readfile", {"path": "a.txt", "offset": 1.5}, "offset", "integer"),
        ("readfile", {"path": 7}, "path", "string"),
    ],
)
async def test_argument_types_are_strict_and_the_error_names_field_and_type(
    tmp_path: Path, tool: str, arguments: dict[str, object], field: str, wanted: str
) -> None:
    (tmp_path / "a.txt").write_text("one\ntwo\nthree\n", encoding="utf-8")
    async with connect(config_for(tmp_path)) as client:
        result = await client.call_tool(tool, arguments)
    assert error_code(result) == "invalid_arguments"
    assert f"{field}: Input should be a valid {wanted}" in text_of(result)
    assert (tmp_path / "a.txt").read_text(encoding="utf-8") == "one\ntwo\nthree\n"
    assert not (tmp_path / "b.txt").exists()


async def test_an_integral_number_is_an_integer_as_json_schema_says(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\ntwo\nthree\n", encoding="utf-8")
    async with connect(config_for(tmp_path)) as client:
        result = await client.call_tool("readfile", {"path": "a.txt", "offset": 1.0, "limit": 1.0})
    assert not result.is_error and result.structured_content["content"] == "two\n"


PROFILES = {
    "reader": {"enabled": ["fs"], "read_only": True},
    "editor": {"enabled": ["readfile", "editfile"]},
}


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_profile_chosen_at_start_decides_what_is_listed_and_what_can_be_called(
    tmp_path: Path, mode: str
) -> None:
    from mcp import Client

    from mcp_localtools.server import build_server

    (tmp_path / "a.txt").write_text("alpha\n", encoding="utf-8")
    server = build_server(config_for(tmp_path, profiles=PROFILES), profile="editor")
    async with Client(server, mode=mode, raise_exceptions=True) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert names == {"readfile", "editfile"}
        assert not (await client.call_tool("readfile", {"path": "a.txt"})).is_error
        with pytest.raises(MCPError) as refused:
            await client.call_tool("writefile", {"path": "b.txt", "content": "x"})
    assert refused.value.error.code == INVALID_PARAMS
    assert not (tmp_path / "b.txt").exists()


def test_a_read_only_profile_keeps_only_read_only_tools_of_its_groups(tmp_path: Path) -> None:
    from mcp_localtools.tools import profile_tools

    config = config_for(tmp_path, profiles=PROFILES)
    sets = profile_tools(build_registry(config), config)
    assert "readfile" in sets["reader"] and "searchfiles" in sets["reader"]
    assert not {"writefile", "deletefile", "shellcommand", "editfile"} & sets["reader"]


@pytest.mark.anyio
async def test_a_profile_with_its_own_roots_and_limits_works_only_inside_them(tmp_path: Path) -> None:
    from mcp import Client

    from mcp_localtools.server import build_server

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "guide.md").write_text("one\ntwo\nthree\n", encoding="utf-8")
    (tmp_path / "secret.txt").write_text("not for docs clients\n", encoding="utf-8")
    profiles = {"docs": {"paths": {"allowed_roots": [str(docs)]}, "limits": {"read_max_lines": 2}}}
    server = build_server(config_for(tmp_path, profiles=profiles), profile="docs")
    async with Client(server, raise_exceptions=True) as client:
        assert str(docs) in (client.instructions or "")
        inside = await client.call_tool("readfile", {"path": "guide.md"})  # relative: to the docs root
        outside = await client.call_tool("readfile", {"path": str(tmp_path / "secret.txt")})
    assert inside.structured_content["content"] == "one\ntwo\n"  # the profile's read_max_lines
    assert error_code(outside) == "outside_roots" and str(docs) in text_of(outside)
    assert "not for docs" not in text_of(outside)


@pytest.mark.anyio
async def test_the_audit_line_names_the_profile_a_call_was_served_under(tmp_path: Path) -> None:
    from mcp import Client

    from mcp_localtools.server import build_server

    (tmp_path / "a.txt").write_text("a\n", encoding="utf-8")
    log = tmp_path / "logs" / "audit.jsonl"
    config = config_for(
        tmp_path,
        audit={"enabled": True, "path": str(log)},
        profiles={"reader": {"enabled": ["readfile"], "limits": {"read_max_lines": 10}}},
    )
    async with Client(build_server(config, profile="reader"), raise_exceptions=True) as client:
        assert not (await client.call_tool("readfile", {"path": "a.txt"})).is_error
    async with Client(
        build_server(config_for(tmp_path, audit={"enabled": True, "path": str(log)}))
    ) as client:
        assert not (await client.call_tool("readfile", {"path": "a.txt"})).is_error
    first, second = (json.loads(line) for line in log.read_text(encoding="utf-8").splitlines())
    assert first["profile"] == "reader" and "profile" not in second


def test_profile_workspaces_share_the_servers_file_locks_and_parser_runner(tmp_path: Path) -> None:
    from mcp_localtools.workspace import Workspace

    config = config_for(tmp_path, profiles={"p": {"limits": {"read_max_lines": 5}}})
    server = Workspace.from_config(config)
    profile = server.sibling(config.for_profile("p"))
    assert profile.locks is server.locks and profile.parsers is server.parsers
    assert profile.search is server.search and profile.limits.read_max_lines == 5


@pytest.mark.anyio
async def test_a_profile_that_turns_exec_off_has_no_command_tools_while_the_server_keeps_them(
    tmp_path: Path,
) -> None:
    from mcp import Client

    from mcp_localtools.server import build_server

    config = config_for(tmp_path, profiles={"files": {"exec": {"enabled": False}}})
    async with Client(build_server(config, profile="files"), raise_exceptions=True) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        with pytest.raises(MCPError) as refused:
            await client.call_tool("shellcommand", {"commands": ["echo hi"]})
    assert "readfile" in names and not names & {"shellcommand", "runscript", "startprocess"}
    assert refused.value.error.code == INVALID_PARAMS
    async with Client(build_server(config), raise_exceptions=True) as client:
        assert "shellcommand" in {tool.name for tool in (await client.list_tools()).tools}


@pytest.mark.parametrize(
    ("profiles", "profile", "message"),
    [
        ({"x": {"enabled": ["nosuchtool"]}}, None, "profiles.x"),
        ({"x": {"enabled": ["nosuchtool"], "limits": {"read_max_lines": 5}}}, None, "profiles.x"),
        ({"x": {"paths": {"allowed_roots": ["/nonexistent/root"]}}}, None, "profiles.x: .*nonexistent"),
        (PROFILES, "nosuch", "no profile 'nosuch'"),
        ({"Bad Name": {}}, None, "profile name"),
    ],
)
def test_a_bad_profile_fails_at_start_up(
    tmp_path: Path, profiles: dict[str, Any], profile: str | None, message: str
) -> None:
    from mcp_localtools.errors import ConfigError
    from mcp_localtools.server import build_server

    with pytest.raises(ConfigError, match=message):
        build_server(config_for(tmp_path, profiles=profiles), profile=profile)
