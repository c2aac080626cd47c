"""The code index through the code tools: fresh after edits, persisted, and never outside the roots."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from mcp import Client

from mcp_localtools.codeintel import indexes as indexes_module
from mcp_localtools.errors import ConfigError
from mcp_localtools.server import build_server
from tests.helpers import config_for, connect, error_code, installed_command, text_of

pytestmark = pytest.mark.anyio


async def _defined(client: Client, name: str) -> list[str]:
    result = await client.call_tool("findsymbol", {"name": name, "includeReferences": False})
    assert not result.is_error, text_of(result)
    assert result.structured_content is not None
    return [d["path"] for d in result.structured_content["definitions"]]


async def test_a_rename_by_a_file_tool_is_seen_by_the_next_query(tmp_path: Path) -> None:
    (tmp_path / "tax.py").write_text("def compute_tax(amount):\n    return amount * 0.2\n", encoding="utf-8")
    async with connect(config_for(tmp_path)) as client:
        assert await _defined(client, "compute_tax") == ["tax.py"]
        edit = await client.call_tool(
            "editfile", {"path": "tax.py", "edits": [{"oldText": "compute_tax", "newText": "vat_for"}]}
        )
        assert not edit.is_error, text_of(edit)
        assert await _defined(client, "vat_for") == ["tax.py"]
        assert await _defined(client, "compute_tax") == []


async def test_a_file_changed_behind_the_servers_back_is_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "tax.py"
    target.write_text("def compute_tax(amount):\n    return amount * 0.2\n", encoding="utf-8")
    async with connect(config_for(tmp_path)) as client:
        assert await _defined(client, "compute_tax") == ["tax.py"]
        target.write_text("def renamed_tax(amount):\n    return amount * 0.2\n", encoding="utf-8")
        os.utime(target, ns=(1, 1))  # a new mtime, whatever the clock's resolution
        monkeypatch.setattr(indexes_module, "RESCAN_SECONDS", 0.0)
        monkeypatch.setattr(indexes_module, "RESCAN_FACTOR", 0.0)
        monkeypatch.setattr(indexes_module, "WAIT_SECONDS", 60.0)  # the rescan ends before the answer
        monkeypatch.setattr(indexes_module, "QUICK_RESCAN_SECONDS", 60.0)  # however long it took
        assert await _defined(client, "renamed_tax") == ["tax.py"]
        (tmp_path / "new.py").write_text("def brand_new():\n    pass\n", encoding="utf-8")
        target.unlink()
        assert await _defined(client, "brand_new") == ["new.py"]
        assert await _defined(client, "renamed_tax") == []


def test_only_a_first_build_a_command_or_a_small_projects_rescan_delays_an_answer() -> None:
    patience = indexes_module.CodeIndexes._patience
    assert patience(indexes_module.Freshness(building=True)) is None  # the first build: to its end
    small = indexes_module.Freshness(rescan_seconds=0.02)
    assert patience(small) == indexes_module.WAIT_SECONDS
    large = indexes_module.Freshness(rescan_seconds=0.4)  # Django's 6,800 files
    assert patience(large) == 0.0  # answered from the index as it stands
    after_a_command = indexes_module.Freshness(rescan_seconds=0.4, urgent=True)
    assert patience(after_a_command) == indexes_module.WAIT_SECONDS


async def test_the_index_never_reads_outside_the_roots(tmp_path: Path) -> None:
    root = tmp_path / "root"
    outside = tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "leak.py").write_text("def leaked_outside():\n    pass\n", encoding="utf-8")
    (root / "linked").symlink_to(outside, target_is_directory=True)
    (root / "linked_file.py").symlink_to(outside / "leak.py")
    (root / ".hidden").mkdir()
    (root / ".hidden" / "secret.py").write_text("def hidden_secret():\n    pass\n", encoding="utf-8")
    (root / "private").mkdir()
    (root / "private" / "keys.py").write_text("def protected_key():\n    pass\n", encoding="utf-8")
    (root / "veiled").mkdir()
    (root / "veiled" / "v.py").write_text("def veiled_function():\n    pass\n", encoding="utf-8")
    (root / "ignored").mkdir()
    (root / "ignored" / "i.py").write_text("def ignored_function():\n    pass\n", encoding="utf-8")
    (root / ".gitignore").write_text("ignored/\n", encoding="utf-8")
    (root / "ok.py").write_text("def visible_function():\n    pass\n", encoding="utf-8")
    config = config_for(
        root, exec={"sandbox": {"protected_paths": ["private"], "hide_paths": [str(root / "veiled")]}}
    )
    async with connect(config) as client:
        assert await _defined(client, "visible_function") == ["ok.py"]
        for name in (
            "leaked_outside",
            "hidden_secret",
            "protected_key",
            "veiled_function",
            "ignored_function",
        ):
            assert await _defined(client, name) == [], name
        search = await client.call_tool("semanticsearch", {"query": "leaked outside secret key", "limit": 20})
    assert search.structured_content is not None
    assert {hit["path"] for hit in search.structured_content["results"]} <= {"ok.py", ".gitignore"}


async def test_the_index_persists_in_the_cache_directory(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    (root / "a.py").write_text("def persisted_function():\n    pass\n", encoding="utf-8")
    cache = tmp_path / "cache"
    environ = {"XDG_CACHE_HOME": str(cache)}
    async with Client(build_server(config_for(root), environ=environ), raise_exceptions=True) as client:
        assert await _defined(client, "persisted_function") == ["a.py"]
    [database] = list(cache.glob("mcp-localtools/index/*/index.sqlite3"))
    assert database.stat().st_size > 0
    async with Client(build_server(config_for(root), environ=environ), raise_exceptions=True) as client:
        assert await _defined(client, "persisted_function") == ["a.py"]


async def test_the_code_tools_are_served_read_only(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("def f():\n    pass\n", encoding="utf-8")
    async with connect(config_for(tmp_path, tools={"read_only": True})) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert {"symbols", "findsymbol", "repomap", "semanticsearch"} <= names
        assert await _defined(client, "f") == ["a.py"]


async def test_index_config_sets_the_cache_directory_and_languages(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    (root / "a.py").write_text("def python_function():\n    pass\n", encoding="utf-8")
    (root / "b.go").write_text("package b\n\nfunc GoFunction() {}\n", encoding="utf-8")
    cache = tmp_path / "elsewhere"
    config = config_for(root, index={"cache_dir": str(cache), "languages": ["go"]})
    async with connect(config) as client:
        assert await _defined(client, "GoFunction") == ["b.go"]
        assert await _defined(client, "python_function") == []  # .py read as text only
    assert list(cache.glob("*/index.sqlite3"))


async def test_index_disabled_leaves_out_the_index_tools(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("def f():\n    pass\n", encoding="utf-8")
    async with connect(config_for(tmp_path, index={"enabled": False})) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert "symbols" in names
        assert not names & {"findsymbol", "repomap", "semanticsearch"}
        outline = await client.call_tool("symbols", {"path": "a.py"})
        directory = await client.call_tool("symbols", {"path": "."})
    assert not outline.is_error
    assert error_code(directory) == "policy_violation"


def test_an_unknown_language_stops_the_server_at_start_up(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"index\.languages: no grammar for cobol"):
        build_server(config_for(tmp_path, index={"languages": ["cobol"]}))


def test_the_index_command_builds_the_index_ahead_of_time(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / ".git").mkdir()
    (project / "a.py").write_text("def ahead_of_time():\n    pass\n", encoding="utf-8")
    environ = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    done = subprocess.run(
        [installed_command(), "index", str(project)],
        capture_output=True, text=True, env=environ, cwd=project, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"indexed {project}: 1 files, 1 symbols")
    assert list((tmp_path / "cache" / "mcp-localtools" / "index").glob("*/index.sqlite3"))
