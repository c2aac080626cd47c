"""An index that is right or says so: a corrupt or unfinished database is rebuilt, an answer
during a build says so, and the cache never lives inside a root (issue 37, item 4)."""

from __future__ import annotations

import logging
import os
import sqlite3
from contextlib import closing
from pathlib import Path

import anyio
import pytest
from mcp import Client

from mcp_localtools.codeintel import indexes as indexes_module
from mcp_localtools.codeintel.index import IndexSettings
from mcp_localtools.codeintel.indexes import CodeIndexes
from mcp_localtools.errors import ConfigError
from mcp_localtools.policy.paths import PathPolicy
from mcp_localtools.search import default_engine
from mcp_localtools.server import build_server
from mcp_localtools.server.adapter import RegistryServer
from mcp_localtools.tools.code._group import code_indexes
from tests.helpers import config_for, text_of

pytestmark = pytest.mark.anyio


def _project(root: Path, files: int) -> None:
    root.mkdir(exist_ok=True)
    for number in range(files):
        body = "".join(f"def helper_{number}_{k}(value):\n    return value + {k}\n\n" for k in range(20))
        (root / f"m{number:03}.py").write_text(f"def function_{number}(value):\n    return value\n\n" + body)


async def _found(client: Client, name: str) -> tuple[list[str], str]:
    result = await client.call_tool("findsymbol", {"name": name, "includeReferences": False})
    assert not result.is_error, text_of(result)
    assert result.structured_content is not None
    return [d["path"] for d in result.structured_content["definitions"]], text_of(result)


def _server(root: Path, cache: Path) -> Client:
    return Client(
        build_server(config_for(root), environ={"XDG_CACHE_HOME": str(cache)}), raise_exceptions=True
    )


def _database(cache: Path) -> Path:
    [database] = list(cache.glob("mcp-localtools/index/*/index.sqlite3"))
    return database


@pytest.mark.parametrize("damage", ["garbage", "truncated"])
async def test_a_corrupt_database_is_rebuilt_instead_of_failing(tmp_path: Path, damage: str) -> None:
    root, cache = tmp_path / "project", tmp_path / "cache"
    _project(root, 40)
    async with _server(root, cache) as client:
        assert (await _found(client, "function_39"))[0] == ["m039.py"]
    database = _database(cache)
    with closing(sqlite3.connect(database)) as db:  # every page in the file, none in the WAL
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    for extra in ("-wal", "-shm"):
        Path(f"{database}{extra}").unlink(missing_ok=True)
    data = database.read_bytes()
    assert len(data) > 64 * 1024
    database.write_bytes(b"this is not a database\n" * 100 if damage == "garbage" else data[: len(data) // 2])
    async with _server(root, cache) as client:
        assert (await _found(client, "function_39"))[0] == ["m039.py"]
        search = await client.call_tool("semanticsearch", {"query": "helper 39 7 value"})
        assert not search.is_error, text_of(search)


async def test_an_unfinished_build_is_finished_before_an_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, cache = tmp_path / "project", tmp_path / "cache"
    _project(root, 40)
    # A build that stopped half way (a full disk, a killed server): half the files committed.
    settings = IndexSettings(cache_dir=cache / "mcp-localtools" / "index")
    indexes = CodeIndexes(PathPolicy.create([root]), settings, default_engine(), None)
    index = indexes.index_for(root)
    files = sorted(path.name for path in root.iterdir())
    await anyio.to_thread.run_sync(index.update, files[:20], [], lambda done: None)
    index.store.close()
    # An index on disk answers at once while a large project is rescanned in the background...
    monkeypatch.setattr(indexes_module, "WAIT_SECONDS", 0.0)
    async with _server(root, cache) as client:
        # ... but not an unfinished one: that one is built to its end first.
        assert (await _found(client, "function_39"))[0] == ["m039.py"]


async def test_an_answer_during_indexing_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root, cache = tmp_path / "project", tmp_path / "cache"
    _project(root, 2)
    async with _server(root, cache) as client:
        assert (await _found(client, "function_1"))[0] == ["m001.py"]
        for number in range(2, 400):  # a checkout brings many files: the rescan takes a while
            (root / f"n{number:03}.py").write_text(
                f"def late_{number}(value):\n    return value\n" * 5, encoding="utf-8"
            )
        monkeypatch.setattr(indexes_module, "RESCAN_SECONDS", 0.0)
        monkeypatch.setattr(indexes_module, "WAIT_SECONDS", 0.0)  # a large project: not waited for
        found, text = await _found(client, "late_399")
        assert found == [] and "indexing, " in text and " files" in text, text


@pytest.mark.parametrize(("tool", "arguments"), [("repomap", {}), ("symbols", {"path": "."})])
async def test_a_map_or_outline_during_indexing_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tool: str, arguments: dict[str, str]
) -> None:
    # The directory's map and outline come from the index too: without the note, the files not
    # indexed yet were silently missing ("no symbols" for a directory a checkout just filled).
    root, cache = tmp_path / "project", tmp_path / "cache"
    root.mkdir()
    (root / "README.md").write_text("A project.\n", encoding="utf-8")
    async with _server(root, cache) as client:
        assert (await _found(client, "late_2"))[0] == []
        for number in range(2, 400):
            (root / f"n{number:03}.py").write_text(
                f"def late_{number}(value):\n    return value\n" * 5, encoding="utf-8"
            )
        monkeypatch.setattr(indexes_module, "RESCAN_SECONDS", 0.0)
        monkeypatch.setattr(indexes_module, "WAIT_SECONDS", 0.0)
        result = await client.call_tool(tool, arguments)
    assert not result.is_error, text_of(result)
    assert "indexing, " in text_of(result) and "no file" not in text_of(result), text_of(result)


def test_a_configured_cache_inside_a_root_stops_the_server_at_start_up(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"index\.cache_dir: .* inside the allowed root"):
        build_server(config_for(tmp_path, index={"cache_dir": str(tmp_path / "cache")}))


async def test_a_default_cache_inside_a_root_is_moved_out(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    home, elsewhere = tmp_path / "home", tmp_path / "tmp"
    _project(home, 1)
    elsewhere.mkdir()
    environ = {"XDG_CACHE_HOME": str(home / ".cache"), "TMPDIR": str(elsewhere)}
    caplog.set_level(logging.WARNING)
    for _ in range(2):  # a root that is the home: the index goes elsewhere, and is found there again
        async with Client(build_server(config_for(home), environ=environ), raise_exceptions=True) as client:
            assert (await _found(client, "function_0"))[0] == ["m000.py"]
    assert not (home / ".cache").exists()
    assert list(elsewhere.glob(f"mcp-localtools-{os.getuid()}/index/*/index.sqlite3"))
    assert "inside the allowed root" in caplog.text and str(elsewhere) in caplog.text


def test_a_default_cache_inside_a_root_is_told_at_start_up(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # The server says so when it starts, not only at the first code tool's call.
    home = tmp_path / "home"
    home.mkdir()
    caplog.set_level(logging.WARNING)
    build_server(config_for(home), environ={"XDG_CACHE_HOME": str(home / ".cache")})
    assert "inside the allowed root" in caplog.text and str(home / ".cache") in caplog.text, caplog.text
    assert not (home / ".cache").exists()


@pytest.mark.parametrize("damage", ["garbage", "replaced"])
async def test_a_database_damaged_while_the_server_runs_is_rebuilt(tmp_path: Path, damage: str) -> None:
    # The file overwritten in place, or replaced by another file, under a running server: the
    # next answers come from a rebuilt index, not "file is not a database" until a restart.
    root, cache = tmp_path / "project", tmp_path / "cache"
    _project(root, 40)
    async with _server(root, cache) as client:
        assert (await _found(client, "function_39"))[0] == ["m039.py"]
        database = _database(cache)
        garbage = b"this is not a database\n" * (database.stat().st_size // 23 + 1)
        if damage == "garbage":
            with database.open("r+b") as handle:
                handle.write(garbage)
        else:
            (database.parent / "other").write_bytes(garbage)
            os.replace(database.parent / "other", database)
            for extra in ("-wal", "-shm"):
                Path(f"{database}{extra}").unlink(missing_ok=True)
        for _ in range(2):
            found = await client.call_tool("findsymbol", {"name": "function_38", "includeReferences": False})
            search = await client.call_tool("semanticsearch", {"query": "helper 38 7 value"})
            assert not found.is_error and not search.is_error, text_of(found) + text_of(search)
        assert (await _found(client, "function_39"))[0] == ["m039.py"]


_TABLE_INDEXES = {"symbols_folded", "symbols_file", "refs_name", "refs_file", "imports_file", "chunks_file"}


def _table_indexes(database: Path) -> set[str]:
    with closing(sqlite3.connect(database)) as db:
        return {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}


async def test_a_first_build_makes_the_tables_indexes_after_its_rows(tmp_path: Path) -> None:
    root, cache = tmp_path / "project", tmp_path / "cache"
    _project(root, 150)
    settings = IndexSettings(cache_dir=cache / "mcp-localtools" / "index")
    indexes = CodeIndexes(PathPolicy.create([root]), settings, default_engine(), None)
    index = indexes.index_for(root)
    database = _database(cache)
    during: list[set[str]] = []
    files = sorted(path.name for path in root.iterdir())
    await anyio.to_thread.run_sync(
        index.update, files, [], lambda done: during.append(_table_indexes(database))
    )
    assert len(during) == 3 and all(not (found & _TABLE_INDEXES) for found in during)  # rows first
    assert _table_indexes(database) >= _TABLE_INDEXES  # then the indexes
    # A later update of a built index keeps them (only a first build drops them).
    (root / "m000.py").write_text("def renamed(value):\n    return value\n", encoding="utf-8")
    during.clear()
    await anyio.to_thread.run_sync(
        index.update, ["m000.py"], [], lambda done: during.append(_table_indexes(database))
    )
    assert during and all(found >= _TABLE_INDEXES for found in during)
    index.store.close()
    # A build killed before it made them (nothing ran its cleanup): opening the database makes them.
    with closing(sqlite3.connect(database)) as db:
        for name in _TABLE_INDEXES:
            db.execute(f"DROP INDEX {name}")
    async with _server(root, cache) as client:
        assert (await _found(client, "function_149"))[0] == ["m149.py"]
    assert _table_indexes(database) >= _TABLE_INDEXES


async def _released(server: RegistryServer, root: Path) -> None:
    """Return once the idle release has dropped what the index of ``root`` held in memory (its
    vectors and graph); fail after 10 s."""
    workspace = server.routes.default.workspace
    assert workspace is not None
    index = code_indexes(workspace).index_for(root.resolve())
    with anyio.fail_after(10):
        while index.holds_memory():
            await anyio.sleep(0.05)


@pytest.mark.parametrize("damage", ["deleted", "replaced"])
async def test_the_graph_is_read_again_after_the_database_went_away_under_the_server(
    tmp_path: Path, damage: str
) -> None:
    # The reference graph is read on a connection of its own; the store's connection keeps the
    # old file open. With the cache deleted (a user clearing ~/.cache) or the file replaced, the
    # graph built after an idle release must still come from the index, not fail every answer.
    root, cache = tmp_path / "project", tmp_path / "cache"
    _project(root, 3)
    server = build_server(config_for(root, index={"idle_seconds": 1}), environ={"XDG_CACHE_HOME": str(cache)})
    async with Client(server, raise_exceptions=True) as client:
        assert (await _found(client, "function_2"))[0] == ["m002.py"]
        database = _database(cache)
        if damage == "deleted":
            for path in database.parent.iterdir():
                path.unlink()
        else:
            (database.parent / "other").write_bytes(b"this is not a database\n" * 1000)
            os.replace(database.parent / "other", database)
        await _released(server, root)  # the idle release drops the graph
        for tool, arguments in (("findsymbol", {"name": "function_2"}), ("repomap", {})):
            result = await client.call_tool(tool, arguments)
            assert not result.is_error and "m002.py" in text_of(result), text_of(result)
