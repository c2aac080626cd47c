"""searchfiles through the SDK client, with both engines: the walk, display paths,
path and content matches, the output modes, filters and hostile trees."""

from __future__ import annotations

import os
import threading
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from mcp_localtools.policy.paths import PathPolicy
from mcp_localtools.search.line import LINE_WIDTH, Line
from mcp_localtools.tools.fs._excerpt import Containment, FileReader
from tests.helpers import error_code, text_of, wire_chars
from tests.tools.fs.conftest import Connect
from tests.tools.fs.unprivileged import run_unprivileged_searches

pytestmark = pytest.mark.anyio


@pytest.fixture
async def client(connect_search: Connect) -> AsyncIterator[Client]:
    """A search client rooted in ``tmp_path``, once per engine."""
    async with connect_search() as connected:
        yield connected


async def search(client: Client, pattern: str, **args: Any) -> Any:
    result = await client.call_tool("searchfiles", {"pattern": pattern, **args})
    assert not result.is_error, text_of(result)
    return result.structured_content


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "sub" / "deep").mkdir(parents=True)
    (tmp_path / "a.txt").write_text("alpha\nclass FooError(Exception):\nomega\n", encoding="utf-8")
    (tmp_path / "sub" / "b.py").write_text(
        "import os\n\nclass BarError(ValueError):\n    pass\n", encoding="utf-8"
    )
    (tmp_path / "sub" / "deep" / "c.md").write_text("nothing to see\n", encoding="utf-8")
    (tmp_path / "sub" / "error_notes.txt").write_text("plain\n", encoding="utf-8")
    return tmp_path


async def test_an_empty_pattern_is_required_and_an_invalid_regex_is_an_error(
    client: Client, tree: Path
) -> None:
    empty = await client.call_tool("searchfiles", {"pattern": ""})
    assert error_code(empty) == "invalid_arguments" and "pattern is required" in text_of(empty)
    invalid = await client.call_tool("searchfiles", {"pattern": "(unclosed"})
    assert error_code(invalid) == "invalid_arguments"
    assert "invalid regex" in text_of(invalid) and "missing )" in text_of(invalid)
    backref = await client.call_tool("searchfiles", {"pattern": "(a)\\1"})
    assert error_code(backref) == "invalid_arguments" and "invalid regex" in text_of(backref)


@pytest.mark.parametrize("mode", ["files", "matches", "count"])
async def test_a_pattern_longer_than_a_command_line_may_be_is_searched(
    client: Client, tmp_path: Path, mode: str
) -> None:
    # 400 KB: ripgrep could not start with it as an argument (E2BIG), an internal_error.
    (tmp_path / "hit.txt").write_text("the w59999x line\n", encoding="utf-8")
    (tmp_path / "miss.txt").write_text("w60000x\n", encoding="utf-8")
    pattern = "|".join(f"w{number}x" for number in range(60000))
    with anyio.fail_after(60):
        found = await search(client, pattern, outputMode=mode)
    assert found["totalFiles"] == 1
    assert (found.get("files") or [None])[0] == "hit.txt" or found.get("matches") or found.get("counts")


async def test_a_glob_the_engine_refuses_is_invalid_arguments_in_every_mode(
    client: Client, tree: Path
) -> None:
    # files mode runs two engine walks in a task group: the refusal reached the registry wrapped
    # in an ExceptionGroup and became an internal_error.
    for mode in ("files", "matches"):
        result = await client.call_tool(
            "searchfiles", {"pattern": "alpha", "include": ["a[b"], "outputMode": mode}
        )
        if not result.is_error:
            continue  # an engine that takes the glob as it is
        assert error_code(result) == "invalid_arguments", (mode, text_of(result))
        assert "glob" in text_of(result)


async def test_globs_longer_in_all_than_a_command_line_may_be_are_refused_with_what_to_do(
    client: Client, tree: Path
) -> None:
    # 5,000 globs of 500 characters (2.5 MB): ripgrep could not start (E2BIG), a codeless tool_error.
    many = [f"{'d' * 490}/*.x{number}" for number in range(5000)]
    result = await client.call_tool("searchfiles", {"pattern": "alpha", "include": many})
    assert error_code(result) == "invalid_arguments"
    assert "include: at most 256 globs" in text_of(result) and "fewer" in text_of(result)
    found = await search(client, "alpha", include=[f"*.x{number}" for number in range(255)] + ["*.txt"])
    assert found["files"] == ["a.txt"]


async def test_the_root_must_be_an_existing_directory_inside_the_roots(client: Client, tree: Path) -> None:
    missing = await client.call_tool("searchfiles", {"pattern": "x", "root": "nope"})
    assert error_code(missing) == "not_found"
    file = await client.call_tool("searchfiles", {"pattern": "x", "root": "a.txt"})
    assert error_code(file) == "not_a_directory"
    outside = await client.call_tool("searchfiles", {"pattern": "x", "root": "/"})
    assert error_code(outside) == "outside_roots"


async def test_the_walk_is_recursive_and_reports_only_files(client: Client, tree: Path) -> None:
    (tree / "sub" / "empty").mkdir()
    result = await search(client, ".")
    assert result["files"] == ["a.txt", "sub/b.py", "sub/deep/c.md", "sub/error_notes.txt"]
    assert result["totalFiles"] == 4 and result["truncated"] is False


async def test_hidden_entries_and_git_are_left_out_unless_include_hidden(client: Client, tree: Path) -> None:
    (tree / ".git").mkdir()
    (tree / ".git" / "config").write_text("class GitError(\n", encoding="utf-8")
    (tree / ".env").write_text("class EnvError(\n", encoding="utf-8")
    default = await search(client, "class")
    assert default["files"] == ["a.txt", "sub/b.py"]
    hidden = await search(client, "class", includeHidden=True)
    assert hidden["files"] == [".env", ".git/config", "a.txt", "sub/b.py"]
    included = await search(client, "class", include=[".git/**", "*.txt"])
    assert included["files"] == ["a.txt"], ".git is never searched unless includeHidden"


@pytest.mark.parametrize(
    ("root", "expected"),
    [
        (".", ["a.txt", "sub/b.py"]),
        ("./", ["a.txt", "sub/b.py"]),
        ("sub", ["sub/b.py"]),
        ("sub/deep/..", ["sub/b.py"]),
    ],
)
async def test_paths_mirror_the_root_argument(
    client: Client, tree: Path, root: str, expected: list[str]
) -> None:
    result = await search(client, "Error\\(", root=root)
    assert result["files"] == expected


async def test_an_absolute_root_gives_absolute_paths(client: Client, tree: Path) -> None:
    result = await search(client, "Error\\(", root=str(tree / "sub"))
    assert result["files"] == [f"{tree}/sub/b.py"]
    assert result["root"] == str(tree / "sub")


async def test_the_path_is_tested_first_then_the_content(client: Client, tree: Path) -> None:
    result = await search(client, "error")  # lower case: only the path sub/error_notes.txt matches
    assert result["files"] == ["sub/error_notes.txt"]
    by_prefix = await search(client, "^sub/deep/", root=".")
    assert by_prefix["files"] == ["sub/deep/c.md"]


async def test_binary_files_and_files_over_the_size_cap_are_not_searched(client: Client, tree: Path) -> None:
    (tree / "blob.bin").write_bytes(b"class BlobError(\x00\x01")
    (tree / "late.bin").write_bytes(b"class LateError(\n" + b"x" * 9000 + b"\x00")
    (tree / "big.txt").write_bytes(b"class BigError(\n" * 1000)
    result = await search(client, "Blob|Late|Big", maxFileSizeBytes=10_000)
    assert result["files"] == [] and result["oversizeFiles"] == 1
    assert "1 file over 10000 bytes left out" in text_of(
        await client.call_tool("searchfiles", {"pattern": "Blob|Late|Big", "maxFileSizeBytes": 10_000})
    )
    assert (await search(client, "Big"))["files"] == ["big.txt"]
    assert (await search(client, "blob", caseSensitive=False))["files"] == ["blob.bin"], "its path matches"
    for mode in ("matches", "count"):  # skipped files are reported in every mode, not only files
        counted = await search(client, "Blob|Late|Big", maxFileSizeBytes=10_000, outputMode=mode)
        assert counted["oversizeFiles"] == 1, mode


async def test_ripgrep_reads_files_over_the_cap_and_leaves_out_those_that_match(
    client: Client, tree: Path, engine_name: str
) -> None:
    """rg gets only the flags the result needs (issue 38): no ``--max-filesize`` (a stat of every
    file, 15 % of its CPU) nor ``--debug``; a file over the cap that matched is left out after
    the search and counted. The Python engine passes over every file over the cap unread and
    counts them all."""
    (tree / "big-match.txt").write_bytes(b"class BigError(\n" * 1000)
    (tree / "big-other.txt").write_bytes(b"nothing here\n" * 1000)
    for mode in ("matches", "count"):
        result = await search(client, "BigError", maxFileSizeBytes=10_000, outputMode=mode)
        assert result["totalFiles"] == 0, mode
        assert result["oversizeFiles"] == (1 if engine_name == "ripgrep" else 2), mode


async def test_each_file_appears_once_and_files_mode_has_no_lines(client: Client, tree: Path) -> None:
    (tree / "class.txt").write_text("class\nclass\n", encoding="utf-8")
    result = await search(client, "class")
    assert result["files"] == ["a.txt", "class.txt", "sub/b.py"]
    assert "matches" not in result and "counts" not in result


async def test_max_results_defaults_to_100_and_sets_truncated(client: Client, tmp_path: Path) -> None:
    for index in range(130):
        (tmp_path / f"f{index:03}.txt").write_text("needle\n", encoding="utf-8")
    result = await search(client, "needle")
    assert len(result["files"]) == 100 and result["truncated"] is True and result["totalFiles"] == 130
    assert result["files"][:2] == ["f000.txt", "f001.txt"]
    few = await client.call_tool("searchfiles", {"pattern": "needle", "maxResults": 5})
    assert few.structured_content["files"] == [f"f00{i}.txt" for i in range(5)]
    assert "[truncated: showing 5 of 130 files" in text_of(few)


async def test_every_count_up_to_max_results_is_not_truncated(client: Client, tmp_path: Path) -> None:
    for index in range(3):
        (tmp_path / f"f{index}.txt").write_text("needle\n", encoding="utf-8")
    result = await search(client, "needle", maxResults=3)
    assert result["truncated"] is False and len(result["files"]) == 3


async def test_symlinks_are_not_followed_and_nothing_outside_the_root_is_reported(
    connect_search: Connect, tmp_path: Path
) -> None:
    root = tmp_path / "root"
    outside = tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text("needle outside\n", encoding="utf-8")
    (root / "inside.txt").write_text("needle inside\n", encoding="utf-8")
    (root / "to-outside-dir").symlink_to(outside)
    (root / "to-outside-file").symlink_to(outside / "secret.txt")
    (root / "to-inside-file").symlink_to(root / "inside.txt")
    (root / "loop").symlink_to(root)
    (root / "dangling").symlink_to(root / "missing")
    for block in (False, True):
        async with connect_search(root, paths={"block_symlinks": block}) as client:
            with anyio.fail_after(20):
                for mode in ("files", "matches", "count"):
                    result = await client.call_tool("searchfiles", {"pattern": "needle", "outputMode": mode})
                    assert "outside" not in text_of(result)
                    assert result.structured_content["totalFiles"] == 1


async def test_an_unreadable_directory_is_skipped_and_listed(engine_name: str, tmp_path: Path) -> None:
    (tmp_path / "ok").mkdir()
    (tmp_path / "ok" / "a.txt").write_text("needle\n", encoding="utf-8")
    (tmp_path / "secret").mkdir()
    (tmp_path / "secret" / "b.txt").write_text("needle\n", encoding="utf-8")
    (tmp_path / "locked.txt").write_text("needle\n", encoding="utf-8")
    (tmp_path / "secret").chmod(0)
    (tmp_path / "locked.txt").chmod(0)
    try:
        calls = [{"pattern": "needle", "outputMode": mode} for mode in ("files", "matches", "count")]
        results = run_unprivileged_searches(engine_name, tmp_path, calls)
        for mode, result in zip(("files", "matches", "count"), results, strict=True):
            assert result["success"] is True
            found = result["structuredContent"]
            assert found["totalFiles"] == 1
            skipped = {item["path"]: item["reason"] for item in found["skipped"]}
            assert skipped["secret"] == "Permission denied", mode
            assert skipped["locked.txt"] == "Permission denied", mode
    finally:
        (tmp_path / "secret").chmod(0o755)
        (tmp_path / "locked.txt").chmod(0o644)


async def test_a_symlinked_root_is_walked_through_its_target_keeping_the_prefix(
    client: Client, tree: Path
) -> None:
    (tree / "alias").symlink_to(tree / "sub")
    result = await search(client, "Error\\(", root="alias")
    assert result["files"] == ["alias/b.py"]
    assert result["root"] == str(tree / "sub")


async def test_matches_mode_gives_line_numbers_and_context_like_rg(client: Client, tree: Path) -> None:
    result = await client.call_tool(
        "searchfiles", {"pattern": "class \\w+Error\\(", "outputMode": "matches", "contextLines": 1}
    )
    matches = result.structured_content["matches"]
    assert matches == [
        {
            "path": "a.txt",
            "lineNumber": 2,
            "line": "class FooError(Exception):",
            "contextBefore": ["alpha"],
            "contextAfter": ["omega"],
        },
        {
            "path": "sub/b.py",
            "lineNumber": 3,
            "line": "class BarError(ValueError):",
            "contextBefore": [""],
            "contextAfter": ["    pass"],
        },
    ]
    assert text_of(result).splitlines()[1:] == [
        "a.txt",
        "1-alpha",
        "2:class FooError(Exception):",
        "3-omega",
        "",
        "sub/b.py",
        "2-",
        "3:class BarError(ValueError):",
        "4-    pass",
    ]


async def test_matches_mode_merges_overlapping_context_and_separates_groups(
    client: Client, tmp_path: Path
) -> None:
    lines = [f"line {n}" + (" hit" if n in (3, 4, 12) else "") for n in range(1, 16)]
    (tmp_path / "f.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = await client.call_tool(
        "searchfiles", {"pattern": "hit", "outputMode": "matches", "contextLines": 2}
    )
    assert text_of(result).splitlines()[1:] == [
        "f.txt",
        "1-line 1",
        "2-line 2",
        "3:line 3 hit",
        "4:line 4 hit",
        "5-line 5",
        "6-line 6",
        "--",
        "10-line 10",
        "11-line 11",
        "12:line 12 hit",
        "13-line 13",
        "14-line 14",
    ]
    assert [m["lineNumber"] for m in result.structured_content["matches"]] == [3, 4, 12]
    assert result.structured_content["matches"][1]["contextBefore"] == ["line 2", "line 3 hit"]


async def test_matches_mode_max_results_counts_matching_lines(client: Client, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hit\n" * 3, encoding="utf-8")
    (tmp_path / "b.txt").write_text("hit\n" * 3, encoding="utf-8")
    result = await search(client, "hit", outputMode="matches", maxResults=4)
    assert [(m["path"], m["lineNumber"]) for m in result["matches"]] == [
        ("a.txt", 1),
        ("a.txt", 2),
        ("a.txt", 3),
        ("b.txt", 1),
    ]
    assert result["truncated"] is True and result["totalMatches"] == 6 and result["totalFiles"] == 2


async def test_count_mode_gives_matching_lines_per_file(client: Client, tree: Path) -> None:
    result = await search(client, "s", outputMode="count")
    assert result["counts"] == [
        {"path": "a.txt", "count": 1},
        {"path": "sub/b.py", "count": 3},
        {"path": "sub/deep/c.md", "count": 1},
    ]
    assert result["totalMatches"] == 5


async def test_include_and_exclude_globs_filter_files_and_directories(client: Client, tree: Path) -> None:
    words = "alpha|pass|nothing|plain"  # in every file's content, in no path
    assert (await search(client, words, include=["*.py"]))["files"] == ["sub/b.py"]
    assert (await search(client, words, include=["sub/**"], exclude=["deep"]))["files"] == [
        "sub/b.py",
        "sub/error_notes.txt",
    ]
    assert (await search(client, words, exclude=["sub/"]))["files"] == ["a.txt"]
    assert (await search(client, words, exclude=["*.md", "*.py", "*notes*"]))["files"] == ["a.txt"]


async def test_ignore_files_are_respected_unless_turned_off(client: Client, tree: Path) -> None:
    (tree / ".gitignore").write_text("*.py\n", encoding="utf-8")
    (tree / "sub" / ".ignore").write_text("deep/\n!b.py\n", encoding="utf-8")
    (tree / "node_modules").mkdir()
    (tree / "node_modules" / "x.js").write_text("class JsError(\n", encoding="utf-8")
    (tree / ".ignore").write_text("node_modules\n", encoding="utf-8")
    words = "class|nothing"
    respected = await search(client, words)
    assert respected["files"] == ["a.txt", "sub/b.py"], ".ignore's !b.py wins over .gitignore's *.py"
    everything = await search(client, words, respectIgnoreFiles=False)
    assert everything["files"] == ["a.txt", "node_modules/x.js", "sub/b.py", "sub/deep/c.md"]


async def test_a_backslash_before_n_is_searchable_unless_it_is_a_newline_escape(
    client: Client, tmp_path: Path
) -> None:
    (tmp_path / "f.txt").write_text("C:\\new\nx\\y\nxny\nxay\n", encoding="utf-8")

    async def lines(pattern: str, **args: Any) -> list[int]:
        found = await search(client, pattern, outputMode="matches", **args)
        return [match["lineNumber"] for match in found["matches"]]

    assert await lines("\\n", fixedStrings=True) == [1], "the literal text backslash, n"
    assert await lines("\\\\n") == [1], "an escaped backslash, then n"
    assert await lines("x[^\\\\n]y") == [4], "a class without backslash and n"
    for pattern, fixed in (("\\n", False), ("a\nb", True)):
        refused = await client.call_tool("searchfiles", {"pattern": pattern, "fixedStrings": fixed})
        assert error_code(refused) == "invalid_arguments" and "newline" in text_of(refused)


async def test_case_insensitive_and_fixed_strings(client: Client, tree: Path) -> None:
    assert (await search(client, "CLASS FOOERROR", caseSensitive=False))["files"] == ["a.txt"]
    assert (await search(client, "FooError(Exception)", fixedStrings=True))["files"] == ["a.txt"]
    assert (await search(client, "a.b", fixedStrings=True))["files"] == []


async def test_a_fifo_in_the_tree_does_not_hang_the_search(client: Client, tree: Path) -> None:
    os.mkfifo(tree / "pipe")
    os.mkfifo(tree / "sub" / "pipe.py")
    with anyio.fail_after(20):
        result = await search(client, "class")
    assert result["files"] == ["a.txt", "sub/b.py"]


async def test_a_20_mb_single_line_file_stays_within_the_result_budget(
    connect_search: Connect, tmp_path: Path
) -> None:
    (tmp_path / "min.js").write_bytes(b"var a=1;" * 1_500_000 + b"class HugeError(x)" + b";b=2" * 2_000_000)
    async with connect_search(limits={"max_result_chars": 2000}) as client:
        with anyio.fail_after(30):
            result = await client.call_tool(
                "searchfiles",
                {
                    "pattern": "class \\w+Error\\(",
                    "outputMode": "matches",
                    "maxFileSizeBytes": 32 * 1024 * 1024,
                },
            )
    assert not result.is_error, text_of(result)
    assert len(text_of(result)) <= 2000
    (match,) = result.structured_content["matches"]
    assert match["lineNumber"] == 1
    assert match["line"].startswith("…") and match["line"].endswith("…")
    assert "class HugeError(x)" in match["line"] and len(match["line"]) <= 210


async def test_long_lines_are_cut_around_the_match_and_short_ones_kept_whole(
    client: Client, tmp_path: Path
) -> None:
    short = "s" * (LINE_WIDTH - 10) + " needle"
    long = "ä" * 400 + " needle " + "ö" * 400
    (tmp_path / "f.txt").write_text(f"{short}\n{long}\n", encoding="utf-8")
    result = await search(client, "needle", outputMode="matches")
    first, second = result["matches"]
    assert first["line"] == short
    assert second["line"].startswith("…ä") and second["line"].endswith("ö…") and " needle " in second["line"]
    assert "\ufffd" not in second["line"], "cuts fall on character boundaries"


async def test_a_pathological_regex_finishes_quickly(client: Client, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a" * 200_000 + "b\n", encoding="utf-8")
    (tmp_path / "aaaa-b").write_text("x\n", encoding="utf-8")
    with anyio.fail_after(10):
        for mode in ("files", "matches"):
            result = await search(client, "(a+)+$", outputMode=mode)
            assert result["totalFiles"] == 0


async def test_the_result_budget_is_respected_in_every_mode(connect_search: Connect, tmp_path: Path) -> None:
    for index in range(200):
        (tmp_path / f"file-with-a-long-name-{index:03}.txt").write_text(
            "needle " * 50 + "\n", encoding="utf-8"
        )
    async with connect_search(limits={"max_result_chars": 3000}) as client:
        for mode in ("files", "matches", "count"):
            result = await client.call_tool(
                "searchfiles",
                {"pattern": "needle", "outputMode": mode, "maxResults": 1000, "contextLines": 3},
            )
            assert len(text_of(result)) <= 3000, mode
            assert result.structured_content["truncated"] is True
            assert "[truncated" in text_of(result)


async def test_no_match_says_what_was_not_searched(client: Client, tree: Path) -> None:
    result = await client.call_tool("searchfiles", {"pattern": "zzz"})
    assert result.structured_content["totalFiles"] == 0
    assert "includeHidden" in text_of(result)


async def test_progress_notifications_reach_the_client(client: Client, tree: Path) -> None:
    seen: list[tuple[float, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, message))

    await client.call_tool(
        "searchfiles", {"pattern": "class", "outputMode": "matches"}, progress_callback=on_progress
    )
    assert seen and seen[0][0] == 0 and "searching" in (seen[0][1] or "")


async def test_only_the_long_lines_shown_are_read_back(
    connect_search: Connect, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "f.txt").write_text(
        "".join(f"{'y' * 100_000} needle {n}\n" for n in range(40)), encoding="utf-8"
    )
    read: list[int] = []
    original = FileReader.text

    def counting(self: FileReader, line: Line) -> str:
        read.append(line.number)
        return original(self, line)

    monkeypatch.setattr(FileReader, "text", counting)
    async with connect_search(limits={"max_result_chars": 2000}) as client:
        result = await search(client, "needle", outputMode="matches")
    shown = len(result["matches"])
    assert result["truncated"] is True and 0 < shown < 40
    assert len(read) < 40 and len(set(read)) == len(read), "no line is read twice, nor all of them"


async def test_file_work_runs_in_worker_threads_not_on_the_event_loop(
    client: Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "f.txt").write_text("y" * 1000 + " needle\nshort needle\n", encoding="utf-8")
    loop = threading.get_ident()
    calls: list[tuple[str, bool]] = []

    def watch(cls: type, name: str) -> None:
        original: Callable[..., Any] = getattr(cls, name)

        def watched(*args: Any, **kwargs: Any) -> Any:
            calls.append((name, threading.get_ident() == loop))
            return original(*args, **kwargs)

        monkeypatch.setattr(cls, name, watched)

    watch(PathPolicy, "resolve")  # opening the root; reading long lines back
    watch(Containment, "check")
    watch(FileReader, "text")
    for tool, args in (
        ("searchfiles", {"pattern": "needle", "outputMode": "matches"}),
        ("searchfiles", {"pattern": "needle"}),
        ("globfiles", {"pattern": "*.txt"}),
        ("globfiles", {"pattern": "*.txt", "sortBy": "mtime"}),
    ):
        result = await client.call_tool(tool, args)
        assert not result.is_error, text_of(result)
    assert {name for name, _ in calls} == {"resolve", "check", "text"}
    assert [name for name, on_loop in calls if on_loop] == []


@pytest.mark.parametrize("mode", ["files", "matches", "count"])
async def test_results_over_the_budget_stay_in_it_with_text_and_structure_cut_alike(
    connect_search: Connect, tmp_path: Path, mode: str
) -> None:
    for n in range(1200):
        (tmp_path / f"module_with_a_long_name_{n:04}.py").write_text(
            "".join(f'needle = "{n}-{k}" \\ {"pad" * (k % 20)}\n' for k in range(3)), encoding="utf-8"
        )
    async with connect_search(limits={"max_result_chars": 20_000}) as client:
        result = await client.call_tool(
            "searchfiles", {"pattern": "needle", "outputMode": mode, "maxResults": 5000}
        )
    data = result.structured_content
    assert wire_chars(result) <= 20_000 and data["truncated"] is True
    items = data[{"files": "files", "matches": "matches", "count": "counts"}[mode]]
    assert len(items) > 20
    last = items[-1] if mode == "files" else items[-1]["path"]
    assert last in text_of(result)


@pytest.mark.parametrize("mode", ["matches", "count", "files"])
async def test_a_search_past_its_time_budget_stops_and_answers_with_what_it_found(
    connect_search: Connect, tmp_path: Path, mode: str
) -> None:
    """A search where every line of every file matches used to run for the whole call timeout
    (600 s for 5,000 x 1 MiB files); it stops at [limits] search_seconds instead."""
    line = b"needle\n"
    for index in range(40):
        (tmp_path / f"f{index:02d}.log").write_bytes(line * (1024 * 1024 // len(line)))
    if mode == "files":  # a file is done at its first match: 40 of them took under 0.01 s at times
        for index in range(4000):
            (tmp_path / f"g{index:04d}.log").write_bytes(line)
    async with connect_search(limits={"search_seconds": 0.01}) as client:
        with anyio.fail_after(120):  # only against a hang: the answer below decides
            result = await client.call_tool(
                "searchfiles", {"pattern": "needle", "outputMode": mode, "maxResults": 500}
            )
    assert not result.is_error, text_of(result)
    text = text_of(result)
    assert result.structured_content["truncated"] is True
    assert "stopped after 0.01 s" in text and "found so far" in text


async def test_count_occurrences_counts_every_match_not_only_matching_lines(
    client: Client, tmp_path: Path
) -> None:
    (tmp_path / "a.txt").write_text("foo foo\nfoo\nbar foo foofoo\nnone\n", encoding="utf-8")
    (tmp_path / "b.txt").write_text("Foo\n", encoding="utf-8")
    lines = await search(client, "foo", outputMode="count")
    assert lines["counts"] == [{"path": "a.txt", "count": 3}] and lines["totalMatches"] == 3
    every = await search(client, "foo", outputMode="count", countOccurrences=True)
    assert every["counts"] == [{"path": "a.txt", "count": 6}] and every["totalMatches"] == 6
    folded = await search(client, "FOO", outputMode="count", countOccurrences=True, caseSensitive=False)
    assert folded["counts"] == [{"path": "a.txt", "count": 6}, {"path": "b.txt", "count": 1}]
    literal = await search(client, "o f", outputMode="count", countOccurrences=True, fixedStrings=True)
    assert literal["counts"] == [{"path": "a.txt", "count": 2}]
    anchored = await search(client, "^foo", outputMode="count", countOccurrences=True)
    assert anchored["counts"] == [{"path": "a.txt", "count": 2}]
