"""What a writing tool changed, as its spec declares it (``ToolSpec.changes``): the code tools'
index is told exactly those paths after a successful call, nothing after a preview or a failure,
and "anything" after a command. Every tool that is not read-only must declare it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mcp_localtools.config import Config
from mcp_localtools.spec import DESTRUCTIVE, LOCAL_SESSION, ToolArgs, ToolOutput, ToolSpec, changes_at
from mcp_localtools.tools import catalog, registry_of
from mcp_localtools.workspace import Workspace
from tests.helpers import config_for


def _served(root: Path, **sections: dict[str, Any]) -> tuple[Any, list[list[Path] | None]]:
    config: Config = config_for(root, **sections)
    workspace = Workspace.from_config(config)
    told: list[list[Path] | None] = []
    workspace.changes.subscribe(lambda paths: told.append(None if paths is None else list(paths)))
    return registry_of(config, workspace, catalog(workspace)), told


@pytest.mark.anyio
async def test_writing_tools_tell_the_paths_their_arguments_name(tmp_path: Path) -> None:
    registry, told = _served(tmp_path)
    (tmp_path / "a.txt").write_text("one\n")

    await registry.call("writefile", {"path": "new.txt", "content": "x"})
    await registry.call("movepath", {"source": "new.txt", "destination": "sub/../moved.txt"})
    await registry.call("copypath", {"source": "a.txt", "destination": "b.txt"})

    (tmp_path / "bin").mkdir()
    await registry.call("deletefile", {"path": "b.txt", "trashDir": "bin"})

    assert told == [
        [tmp_path / "new.txt"],
        [tmp_path / "new.txt", tmp_path / "moved.txt"],
        [tmp_path / "b.txt"],
        [tmp_path / "b.txt", tmp_path / "bin"],  # a trashDir it names is written too
    ]


@pytest.mark.anyio
async def test_a_preview_or_a_failure_tells_nothing(tmp_path: Path) -> None:
    registry, told = _served(tmp_path)
    (tmp_path / "a.txt").write_text("one\n")

    preview = await registry.call(
        "editfile", {"path": "a.txt", "edits": [{"oldText": "one", "newText": "two"}], "dryRun": True}
    )
    failed = await registry.call("writefile", {"path": "a.txt", "content": "x"})  # exists, no overwrite

    assert not preview.is_error and failed.is_error
    assert told == []
    assert (tmp_path / "a.txt").read_text() == "one\n"


@pytest.mark.anyio
@pytest.mark.sandbox
async def test_a_command_may_have_changed_anything(tmp_path: Path) -> None:
    registry, told = _served(tmp_path, exec={"enabled": True})

    try:
        result = await registry.call("shellcommand", {"commands": ["true"]})
    finally:
        await registry.end_session(LOCAL_SESSION)

    assert not result.is_error, result
    assert told == [None]


class _Args(ToolArgs):
    path: str


async def _never(args: _Args, ctx: Any) -> Any:
    raise AssertionError


def _scribble(**extra: Any) -> ToolSpec[Any]:
    """A writing tool's spec (``extra`` added to it)."""
    return ToolSpec(
        name="scribble",
        group="fs",
        title="Scribble",
        description="Writes.",
        args_model=_Args,
        result_model=ToolOutput,
        handler=_never,
        annotations=DESTRUCTIVE,
        **extra,
    )


def test_a_tool_that_is_not_read_only_must_say_what_it_changes() -> None:
    with pytest.raises(TypeError, match="changes="):
        _scribble()
    assert _scribble(changes=changes_at("path")).changes is not None


def test_changes_at_names_fields_of_the_arguments() -> None:
    with pytest.raises(TypeError, match="'paht'"):
        _scribble(changes=changes_at("paht"))
