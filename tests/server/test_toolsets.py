"""Session tool sets (issue 30, item 2; llm_toolkit's SessionTools and tool metadata): with
``[server] select_tools`` a client narrows its own session's tools with ``selecttools`` and is
sent ``notifications/tools/list_changed``; a selection never widens what its connection may call;
every tool's ``_meta`` carries the version and its tags. Through the SDK's client, in memory and
over a real stdio subprocess; files only under ``tmp_path``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.types import INVALID_PARAMS, ToolListChangedNotification

from mcp_localtools._version import __version__
from mcp_localtools.server import build_server
from tests.helpers import client_env, config_for, connect, error_code, text_of
from tests.test_transports import start, stop

pytestmark = pytest.mark.anyio

PROFILES = {
    "reader": {"enabled": ["fs"], "read_only": True},
    "editor": {"enabled": ["readfile", "editfile"]},
}


class Notifications:
    """A client's message handler that keeps the tools/list_changed notifications it gets."""

    def __init__(self) -> None:
        self.changed = 0

    async def __call__(self, message: Any) -> None:
        if isinstance(message, ToolListChangedNotification):
            self.changed += 1


async def _names(client: Client) -> set[str]:
    return {tool.name for tool in (await client.list_tools()).tools}


async def test_every_tool_carries_the_version_and_its_tags(tmp_path: Path) -> None:
    async with connect(config_for(tmp_path)) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    for tool in tools.values():
        meta = tool.meta or {}
        assert meta["mcp-localtools/version"] == __version__, tool.name
    assert tools["readfile"].meta is not None and tools["readfile"].meta["mcp-localtools/tags"] == [
        "fs",
        "read-only",
    ]
    assert tools["deletefile"].meta is not None
    assert tools["deletefile"].meta["mcp-localtools/tags"] == ["fs", "destructive"]
    assert "open-world" in (tools["httpget"].meta or {})["mcp-localtools/tags"]


async def test_a_session_narrows_its_tools_to_a_profile_and_back_and_is_told(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha\n", encoding="utf-8")
    told = Notifications()
    config = config_for(tmp_path, profiles=PROFILES, server={"select_tools": True})
    async with Client(
        build_server(config), mode="legacy", message_handler=told, raise_exceptions=True
    ) as client:
        tools = client.server_capabilities.tools
        assert tools is not None and tools.list_changed is True
        everything = await _names(client)
        assert "selecttools" in everything and "shellcommand" in everything
        narrowed = await client.call_tool("selecttools", {"profile": "editor"})
        assert not narrowed.is_error, text_of(narrowed)
        assert (narrowed.structured_content or {})["tools"] == ["editfile", "readfile"]
        assert told.changed == 1
        assert await _names(client) == {"editfile", "readfile", "selecttools"}
        assert not (await client.call_tool("readfile", {"path": "a.txt"})).is_error
        with pytest.raises(MCPError) as hidden:
            await client.call_tool("writefile", {"path": "b.txt", "content": "x"})
        assert hidden.value.error.code == INVALID_PARAMS
        again = await client.call_tool("selecttools", {"profile": "editor"})
        assert (again.structured_content or {})["changed"] is False and told.changed == 1
        both = await client.call_tool("selecttools", {"profile": "reader", "tools": ["read*", "statpath"]})
        assert (both.structured_content or {})["tools"] == ["readfile", "statpath"], text_of(both)
        assert told.changed == 2
        back = await client.call_tool("selecttools", {})
        assert not back.is_error and told.changed == 3
        assert await _names(client) == everything
    assert not (tmp_path / "b.txt").exists()


async def test_a_selection_never_widens_what_the_connection_may_call(tmp_path: Path) -> None:
    config = config_for(tmp_path, profiles=PROFILES, server={"select_tools": True})
    async with Client(build_server(config, profile="editor"), mode="legacy", raise_exceptions=True) as client:
        assert await _names(client) == {"editfile", "readfile", "selecttools"}
        wider = await client.call_tool("selecttools", {"tools": ["shellcommand"]})
        assert error_code(wider) == "invalid_arguments" and "matches no tool" in text_of(wider)
        other = await client.call_tool("selecttools", {"profile": "reader"})  # fs read-only ∩ editor
        assert (other.structured_content or {})["tools"] == ["readfile"]
        unknown = await client.call_tool("selecttools", {"profile": "admin"})
        assert error_code(unknown) == "invalid_arguments" and "profiles: editor" in text_of(unknown)
        assert "reader" not in text_of(
            unknown
        )  # a profile's name is told only where it could be chosen whole
        typed = await client.call_tool("selecttools", {"tools": "readfile"})
        assert error_code(typed) == "invalid_arguments" and "tools" in text_of(typed)
        with pytest.raises(MCPError):
            await client.call_tool("shellcommand", {"commands": ["true"]})


async def test_null_arguments_of_selecttools_mean_their_defaults_as_for_every_tool(tmp_path: Path) -> None:
    """mcp-use (and the all-nulls case of ``tests/compat``) sends ``null`` for each optional
    argument: ``tools: null`` was refused ("Input should be a valid list")."""
    config = config_for(tmp_path, profiles=PROFILES, server={"select_tools": True})
    async with Client(build_server(config), mode="legacy", raise_exceptions=True) as client:
        every = await _names(client)
        narrowed = await client.call_tool("selecttools", {"profile": "reader", "tools": None})
        assert not narrowed.is_error, text_of(narrowed)
        again = await client.call_tool("selecttools", {"profile": None, "tools": None})
        assert not again.is_error, text_of(again)
        assert await _names(client) == every


async def test_sessions_keep_their_own_selection(tmp_path: Path) -> None:
    server = build_server(config_for(tmp_path, profiles=PROFILES, server={"select_tools": True}))
    async with Client(server, mode="legacy") as first, Client(server, mode="legacy") as second:
        await first.call_tool("selecttools", {"tools": ["readfile"]})
        assert await _names(first) == {"readfile", "selecttools"}
        assert "shellcommand" in await _names(second)


async def test_without_the_setting_or_without_sessions_there_is_no_selecttools(tmp_path: Path) -> None:
    async with connect(config_for(tmp_path, profiles=PROFILES)) as client:
        assert "selecttools" not in await _names(client)
        with pytest.raises(MCPError) as unknown:
            await client.call_tool("selecttools", {"profile": "editor"})
        assert unknown.value.error.code == INVALID_PARAMS
        assert (
            client.server_capabilities.tools is not None and not client.server_capabilities.tools.list_changed
        )
    modern = build_server(config_for(tmp_path, server={"select_tools": True}))
    async with Client(modern, mode="2026-07-28", raise_exceptions=True) as client:
        assert "selecttools" not in await _names(client)  # that revision has no sessions
        with pytest.raises(MCPError):
            await client.call_tool("selecttools", {"profile": "editor"})


async def test_over_stdio_the_notification_arrives_and_the_list_follows(tmp_path: Path) -> None:
    (tmp_path / "c.toml").write_text(
        '[server]\nselect_tools = true\n[profiles.editor]\nenabled = ["readfile", "editfile"]\n',
        encoding="utf-8",
    )
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "mcp_localtools", "--config", str(tmp_path / "c.toml"), "--root", str(tmp_path)],
        cwd=str(tmp_path),
        env=client_env(),
    )
    told = Notifications()
    async with Client(params, mode="legacy", message_handler=told, raise_exceptions=True) as client:
        assert "shellcommand" in await _names(client)
        await client.call_tool("selecttools", {"profile": "editor"})
        assert told.changed == 1
        assert await _names(client) == {"editfile", "readfile", "selecttools"}


async def test_over_streamable_http_a_profile_token_narrows_its_session_and_is_told(tmp_path: Path) -> None:
    """The notification travels on the call's own stream, so a client without the GET stream gets
    it; a profile token's selection stays within its profile."""
    reader_token = "reader-" + "r" * 40
    token_file = tmp_path / "reader.token"
    token_file.write_text(reader_token + "\n", encoding="utf-8")
    token_file.chmod(0o600)
    work = tmp_path / "work"
    work.mkdir()
    (tmp_path / "c.toml").write_text(
        '[server]\nselect_tools = true\n[profiles.reader]\nenabled = ["fs"]\nread_only = true\n'
        f'token_file = "{token_file}"\n[profiles.editor]\nenabled = ["readfile", "editfile"]\n',
        encoding="utf-8",
    )
    served = start("streamable-http", work, "--config", str(tmp_path / "c.toml"))
    told = Notifications()
    try:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {reader_token}"}, timeout=30)
        target = streamable_http_client(served.url, http_client=http)
        async with http, Client(target, mode="legacy", message_handler=told, raise_exceptions=True) as client:
            assert "writefile" not in await _names(client) and "selecttools" in await _names(client)
            narrowed = await client.call_tool("selecttools", {"profile": "editor"})  # editor ∩ reader
            assert (narrowed.structured_content or {})["tools"] == ["readfile"], text_of(narrowed)
            assert told.changed == 1
            assert await _names(client) == {"readfile", "selecttools"}
            with pytest.raises(MCPError):
                await client.call_tool("editfile", {"path": "a.txt", "edits": []})
    finally:
        stop(served)


async def test_an_unknown_profile_names_only_the_profiles_this_connection_could_choose(
    tmp_path: Path,
) -> None:
    config = config_for(tmp_path, profiles=PROFILES, server={"select_tools": True})
    async with Client(build_server(config), mode="legacy", raise_exceptions=True) as client:
        unknown = await client.call_tool("selecttools", {"profile": "nope"})
        assert error_code(unknown) == "invalid_arguments"
        assert "unknown profile 'nope'; profiles: editor, reader" in text_of(unknown)
    single = {"solo": {"enabled": ["readfile"]}, "admin": {"enabled": ["shellcommand"]}}
    config = config_for(tmp_path, profiles=single, server={"select_tools": True})
    async with Client(build_server(config, profile="solo"), mode="legacy", raise_exceptions=True) as client:
        unknown = await client.call_tool("selecttools", {"profile": "nope"})
        assert error_code(unknown) == "invalid_arguments" and "admin" not in text_of(unknown)
        assert "profiles: solo" in text_of(unknown)


async def test_a_long_tool_list_is_refused_at_once_and_a_repeated_one_is_matched_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 60,001 globs (~1 MB) were matched against every tool on the event loop: 7.6 s of a blocked server.
    from fnmatch import fnmatchcase

    from mcp_localtools.server import toolsets

    matched: list[str] = []

    def counted(name: str, pattern: str) -> bool:
        matched.append(pattern)
        return fnmatchcase(name, pattern)

    monkeypatch.setattr(toolsets, "fnmatchcase", counted)
    config = config_for(tmp_path, server={"select_tools": True})
    async with Client(build_server(config), mode="legacy", raise_exceptions=True) as client:
        many = ["*"] + [f"[!{chr(0x4E00 + number)}]*" for number in range(60000)]
        refused = await client.call_tool("selecttools", {"tools": many})
        assert matched == []  # refused before a single glob was matched
        assert error_code(refused) == "invalid_arguments"
        assert "at most 256" in text_of(refused) and "tools" in text_of(refused)
        long_one = await client.call_tool("selecttools", {"tools": ["*" * 10000]})
        assert error_code(long_one) == "invalid_arguments" and "at most 200 characters" in text_of(long_one)
        kept = await client.call_tool("selecttools", {"tools": ["readfile"] * 256})
        assert (kept.structured_content or {})["tools"] == ["readfile"], text_of(kept)
