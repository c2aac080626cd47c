"""replaceinfiles through the SDK client: preview by default, renames by whole word, all or nothing."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from tests.helpers import config_for, connect, error_code, text_of, wire_chars

pytestmark = pytest.mark.anyio

A = "from x import _expand_args, windows_expand_args\n\n_expand_args(1)\n"
B = "def _expand_args(a):\n    return a\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_text(A, encoding="utf-8")
    (tmp_path / "pkg" / "b.py").write_text(B, encoding="utf-8")
    (tmp_path / "pkg" / "notes.md").write_text("_expand_args\n", encoding="utf-8")
    return tmp_path


async def replace(client: Client, **args: Any) -> Any:
    return await client.call_tool(
        "replaceinfiles", {"pattern": "_expand_args", "replacement": "expand", **args}
    )


async def test_the_default_is_a_dry_run_showing_every_change(client: Client, project: Path) -> None:
    result = await replace(client, include=["**/*.py"])
    assert error_code(result) is None, text_of(result)
    data = result.structured_content
    assert data["dryRun"] is True and data["totalReplacements"] == 3
    assert [Path(f["path"]).name for f in data["files"]] == ["a.py", "b.py"]
    assert "-_expand_args(1)\n+expand(1)" in data["diff"] and "+def expand(a):" in data["diff"]
    assert (project / "pkg" / "a.py").read_text(encoding="utf-8") == A  # nothing written


async def test_a_rename_by_whole_word_leaves_longer_names_alone(client: Client, project: Path) -> None:
    result = await replace(client, include=["**/*.py"], dryRun=False)
    assert error_code(result) is None, text_of(result)
    assert (project / "pkg" / "a.py").read_text(encoding="utf-8") == (
        "from x import expand, windows_expand_args\n\nexpand(1)\n"
    )
    assert (project / "pkg" / "b.py").read_text(encoding="utf-8") == "def expand(a):\n    return a\n"
    assert (project / "pkg" / "notes.md").read_text(encoding="utf-8") == "_expand_args\n"  # not included


async def test_literal_and_regex_modes(client: Client, project: Path) -> None:
    literal = await replace(client, include=["pkg/a.py"], match="literal")
    assert literal.structured_content["totalReplacements"] == 3  # windows_expand_args too
    regex = await client.call_tool(
        "replaceinfiles",
        {"pattern": r"^_expand_args\(\d\)", "replacement": "go()", "include": ["**/*.py"], "match": "regex"},
    )
    assert regex.structured_content["totalReplacements"] == 1


async def test_one_file_that_cannot_be_edited_means_no_file_is_changed(client: Client, project: Path) -> None:
    (project / "pkg" / "c.py").write_bytes(b"_expand_args \xff\xfe\n")  # not UTF-8
    result = await replace(client, include=["**/*.py"], dryRun=False)
    assert error_code(result) == "unsupported_content"
    assert "No file was changed" in text_of(result)
    assert (project / "pkg" / "a.py").read_text(encoding="utf-8") == A
    assert (project / "pkg" / "b.py").read_text(encoding="utf-8") == B


async def test_more_files_than_max_files_is_refused(client: Client, project: Path) -> None:
    result = await replace(client, include=["**/*.py"], dryRun=False, maxFiles=1)
    assert error_code(result) == "too_large"
    assert (project / "pkg" / "a.py").read_text(encoding="utf-8") == A


async def test_nothing_to_replace_is_a_result_and_outside_the_roots_is_refused(
    client: Client, project: Path
) -> None:
    none = await client.call_tool(
        "replaceinfiles", {"pattern": "absent", "replacement": "x", "include": ["**/*.py"]}
    )
    assert error_code(none) is None and none.structured_content["files"] == []
    outside = await replace(client, include=["*"], root="/etc")
    assert error_code(outside) == "outside_roots"


async def test_a_diff_over_the_budget_keeps_its_head_and_tail_in_both_copies(tmp_path: Path) -> None:
    for n in range(40):
        (tmp_path / f"f{n:02d}.txt").write_text("".join(f"old {k} {'x' * 200}\n" for k in range(50)))
    async with connect(config_for(tmp_path, limits={"max_result_chars": 20_000})) as client:
        result = await client.call_tool(
            "replaceinfiles",
            {"root": ".", "pattern": "old", "replacement": "new", "include": ["*.txt"], "maxFiles": 100},
        )
    data = result.structured_content or {}
    assert not result.is_error and wire_chars(result) <= 20_000
    diff = data["diff"]
    assert data["diffTruncated"] and diff.rstrip("\n") in text_of(result)
    assert diff.splitlines()[0].endswith("f00.txt") and "+new 49 " in diff.splitlines()[-1]
    assert re.search(r"\[\d+ diff lines (and \d+ characters )?left out\]", diff)


async def test_a_regex_replacement_inserts_groups_by_number_or_name(client: Client, project: Path) -> None:
    result = await client.call_tool(
        "replaceinfiles",
        {
            "pattern": r"_expand_(?P<what>\w+)\((\w)\)",
            "replacement": r"expand_\g<what>(\2, \\1)",
            "include": ["pkg/*.py"],
            "match": "regex",
            "dryRun": False,
        },
    )
    assert error_code(result) is None, text_of(result)
    assert (project / "pkg" / "a.py").read_text(encoding="utf-8").endswith("\nexpand_args(1, \\1)\n")
    assert (project / "pkg" / "b.py").read_text(encoding="utf-8").startswith("def expand_args(a, \\1):")
    literal = await replace(
        client, include=["pkg/a.py"], pattern="windows", replacement=r"\1", match="literal", dryRun=False
    )
    assert error_code(literal) is None, text_of(literal)
    assert (
        (project / "pkg" / "a.py")
        .read_text(encoding="utf-8")
        .startswith("from x import _expand_args, \\1_expand")
    )
    bad = await client.call_tool(
        "replaceinfiles",
        {"pattern": r"windows(_)", "replacement": r"\3", "include": ["pkg/*.py"], "match": "regex"},
    )
    assert error_code(bad) == "invalid_arguments" and "replacement" in text_of(bad)


async def test_the_diffs_name_each_file_relative_to_its_root(client: Client, project: Path) -> None:
    result = await replace(client, include=["**/*.py"])
    diff = result.structured_content["diff"]
    assert "--- a/pkg/a.py\n+++ b/pkg/a.py\n" in diff and "--- a/pkg/b.py\n+++ b/pkg/b.py\n" in diff
    assert "//" not in diff
