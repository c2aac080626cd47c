"""The ripgrep engine's process handling: found where the wheel puts it, killed on cancel."""

from __future__ import annotations

import os
import sysconfig
from pathlib import Path
from typing import Literal

import anyio
import pytest

from mcp_localtools.results import ToolResult
from mcp_localtools.search import RipgrepEngine
from mcp_localtools.search.engine import ContentQuery, WalkFilters
from mcp_localtools.search.rg import find_ripgrep, version_ok
from tests.helpers import child_processes, config_for
from tests.search.engines import make_engine, search_registry
from tests.search.test_parity import listing, search
from tests.tools.fs.conftest import search_client

pytestmark = pytest.mark.anyio


@pytest.fixture
def stuck_tree(tmp_path: Path) -> Path:
    """A tree on which rg blocks: its .gitignore is a FIFO that rg opens for reading."""
    (tmp_path / "a.txt").write_text("needle\n", encoding="utf-8")
    os.mkfifo(tmp_path / ".gitignore")
    return tmp_path


def test_the_wheel_s_rg_next_to_the_interpreter_is_preferred() -> None:
    assert find_ripgrep() == str(Path(sysconfig.get_path("scripts")) / "rg")


def test_an_rg_older_than_14_is_not_used(tmp_path: Path) -> None:
    for version, usable in (("13.0.0", False), ("14.1.0", True), ("15.1.0", True)):
        fake = tmp_path / f"rg-{version}"
        fake.write_text(f"#!/bin/sh\necho 'ripgrep {version}'\n", encoding="utf-8")
        fake.chmod(0o755)
        assert version_ok(str(fake)) is usable
    assert version_ok(str(tmp_path / "missing")) is False


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
async def test_a_timed_out_search_kills_rg(stuck_tree: Path) -> None:
    registry = search_registry(config_for(stuck_tree), make_engine("ripgrep"))
    running: list[list[int]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        running.append(child_processes("rg"))  # the first report comes once rg is started

    with anyio.fail_after(20):
        result = await registry.call("searchfiles", {"pattern": "needle"}, progress=on_progress, timeout=1.0)
    assert result.error is not None and result.error.code == "timeout"
    assert running and running[0], "rg was running (blocked on the FIFO) before the timeout"
    assert child_processes("rg") == []


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
async def test_a_progress_report_that_never_returns_does_not_stop_the_search(stuck_tree: Path) -> None:
    """Progress is reported from the event loop, not from the thread reading rg (issue 38): a
    report that never returns held the reader, and with it rg, until the call timed out."""
    registry = search_registry(config_for(stuck_tree), make_engine("ripgrep"))
    results: list[ToolResult] = []
    stuck = anyio.Event()

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        if "so far" in (message or ""):
            stuck.set()
            await anyio.sleep_forever()

    async def call() -> None:
        results.append(await registry.call("searchfiles", {"pattern": "needle"}, progress=on_progress))

    def unblock() -> None:  # rg waits on its .gitignore (a FIFO): let it go on
        with open(stuck_tree / ".gitignore", "w", encoding="utf-8"):
            pass

    with anyio.fail_after(15):
        async with anyio.create_task_group() as group:
            group.start_soon(call)
            await stuck.wait()  # rg started and blocks; a report fell due and never returns
            await anyio.to_thread.run_sync(unblock)
    assert results[0].error is None and results[0].structured is not None
    assert results[0].structured["files"] == ["a.txt"]


async def test_a_cancelled_call_kills_rg(stuck_tree: Path) -> None:
    engine = make_engine("ripgrep")
    assert isinstance(engine, RipgrepEngine)
    started = anyio.Event()

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        started.set()

    async with search_client(config_for(stuck_tree), engine) as client:
        scope = anyio.CancelScope()

        async def call() -> None:
            with scope:
                await client.call_tool(
                    "searchfiles",
                    {"pattern": "needle", "outputMode": "matches"},
                    progress_callback=on_progress,
                )

        async with anyio.create_task_group() as group:
            group.start_soon(call)
            with anyio.fail_after(20):
                await started.wait()
            assert child_processes("rg"), "rg is running (blocked on the FIFO)"
            scope.cancel()
        with anyio.fail_after(20):
            while child_processes("rg"):
                await anyio.sleep(0.01)
        tree = await client.call_tool("directorytree", {})  # the session is still usable
        assert not tree.is_error and "a.txt" in str(tree.content)


async def test_rg_follows_no_symlink_out_of_the_root_in_any_mode(tmp_path: Path) -> None:
    """The tools check no reported path with realpath: rg must never walk through a symlink."""
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "secret.py").write_text("class SecretError(Exception):\n", encoding="utf-8")
    (root / "in.py").write_text("class InError(Exception):\n", encoding="utf-8")
    (root / "to-dir").symlink_to(outside)
    (root / "to-file.py").symlink_to(outside / "secret.py")
    (root / "loop").symlink_to(root)
    engine = make_engine("ripgrep")
    outputs: list[Literal["files", "count", "occurrences", "lines"]] = ["files", "count", "occurrences"]
    outputs.append("lines")
    for output in outputs:
        for filters in (WalkFilters(), WalkFilters(include_hidden=True, respect_ignore_files=False)):
            query = ContentQuery(
                directory=root,
                pattern="Error",
                case_sensitive=True,
                fixed_strings=False,
                filters=filters,
                max_file_size=1 << 20,
                output=output,
            )
            found, _, _ = await search(engine, query)
            assert set(found) == {"in.py"}, output
    files, _ = await listing(engine, root, WalkFilters(), None)
    assert files == ["in.py"]


async def test_records_split_across_chunks_parse_as_one_stream(tmp_path: Path) -> None:
    """Plain chunks go through the one-pass parser, chunks holding a path with a newline or a
    binary warning through the record parser: both engines still agree on every file."""
    for index in range(400):
        body = "".join(f"x{n} class E{n}Error(\n" if n % 7 == 0 else f"line {n}\n" for n in range(60))
        (tmp_path / f"f{index:03d}.py").write_text(body, encoding="utf-8")
    (tmp_path / "n\nFAKE.py").write_text("class NewlineError(\n", encoding="utf-8")
    (tmp_path / "--\nDASH.py").write_text("class DashError(\n", encoding="utf-8")
    (tmp_path / "late-binary.py").write_bytes(b"class BinaryError(\n" + b"x\n" * 20000 + b"\x00tail\n")
    for output, context in (("lines", 0), ("lines", 2), ("count", 0), ("occurrences", 0), ("files", 0)):
        query = ContentQuery(
            directory=tmp_path,
            pattern=r"class \w+Error\(",
            case_sensitive=True,
            fixed_strings=False,
            filters=WalkFilters(),
            max_file_size=1 << 20,
            output=output,  # type: ignore[arg-type]
            context_lines=context,
            max_lines=50,
        )
        ours = await search(make_engine("ripgrep"), query)
        assert ours == await search(make_engine("python"), query), (output, context)
        assert "n\nFAKE.py" in ours[0] and "FAKE.py" not in ours[0]
