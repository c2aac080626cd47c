"""Both engines give identical results on the same generated trees."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, Literal

import pytest

from mcp_localtools.search import Engine
from mcp_localtools.search.engine import ContentQuery, FileHits, WalkFilters
from mcp_localtools.search.line import cap_lines
from tests.search.engines import make_engine
from tests.search.trees import make_tree

pytestmark = pytest.mark.anyio

FILTERS = [
    WalkFilters(),
    WalkFilters(respect_ignore_files=False),
    WalkFilters(include_hidden=True),
    WalkFilters(include_hidden=True, respect_ignore_files=False),
    WalkFilters(include=("*.py", "*.txt")),
    WalkFilters(exclude=("src", "*.md")),
    WalkFilters(include=("deep/**",), exclude=("**/gen/**",)),
    WalkFilters(include=(".hid/**",)),
    WalkFilters(exclude=("!*.log",)),
]
PATTERNS = [
    ("class \\w+Error\\(", True, False),
    ("^$", True, False),
    ("alpha|beta", False, False),
    ("foo bar", True, True),
    ("(", True, True),
    ("\\Aclass", True, False),
    ("x$", True, False),
    ("é", True, False),
    ("[a-z]+\\s+\\(", True, False),
    ("ERROR(", False, True),
]
MODES: list[tuple[Literal["files", "count", "occurrences", "lines"], int]] = [
    ("files", 0),
    ("count", 0),
    ("lines", 0),
    ("lines", 2),
]  # (output, context_lines)


def ripgrep() -> Engine:
    return make_engine("ripgrep")


async def _no_progress(count: int, message: str) -> None:
    return None


async def search(engine: Any, query: ContentQuery) -> tuple[dict[str, FileHits], list[Any], int]:
    """What ``engine`` found: hits by path, the skipped entries, and the files over the size cap."""
    found: dict[str, FileHits] = {}

    def sink(hits: FileHits) -> None:
        assert hits.path not in found
        found[hits.path] = hits

    report = await engine.search(query, sink, _no_progress)
    return found, sorted(report.skipped, key=lambda s: (s.path, s.reason)), report.oversize


async def listing(
    engine: Any, root: Path, filters: WalkFilters, max_size: int | None
) -> tuple[list[str], Any]:
    found: list[str] = []
    report = await engine.list_files(root, filters, found.append, _no_progress, max_file_size=max_size)
    return sorted(found), report


@pytest.mark.parametrize("seed", range(3))
async def test_both_engines_list_the_same_files(tmp_path: Path, seed: int) -> None:
    root = make_tree(tmp_path / "tree", seed)
    for filters in FILTERS:
        for max_size in (None, 50_000):
            rg_files, rg_report = await listing(ripgrep(), root, filters, max_size)
            py_files, py_report = await listing(make_engine("python"), root, filters, max_size)
            assert rg_files == py_files, (filters, max_size)
            assert rg_report.oversize == py_report.oversize, (filters, max_size)
            assert rg_files or filters != FILTERS[0], "the tree should not be empty"


@pytest.mark.parametrize("seed", [1, 2])
async def test_both_engines_find_the_same_lines_and_counts(tmp_path: Path, seed: int) -> None:
    root = make_tree(tmp_path / "tree", seed)
    for turn, filters in enumerate(FILTERS[:5]):
        for index, (pattern, case_sensitive, fixed) in enumerate(PATTERNS):
            for output, context in (MODES[(turn + index) % 4], MODES[(turn + index + seed) % 4]):
                query = ContentQuery(
                    directory=root,
                    pattern=pattern,
                    case_sensitive=case_sensitive,
                    fixed_strings=fixed,
                    filters=filters,
                    max_file_size=50_000,
                    output=output,
                    context_lines=context,
                )
                rg_result = await search(ripgrep(), query)
                py_result = await search(make_engine("python"), query)
                assert rg_result[:2] == py_result[:2], query
                # Over the cap: rg counts the files that matched, the Python engine all of them.
                assert rg_result[2] <= py_result[2], query


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize(("max_lines", "context"), [(1, 0), (2, 2), (3, 1), (5, 0)])
async def test_both_engines_keep_the_same_first_lines_of_a_file_and_count_the_rest(
    tmp_path: Path, seed: int, max_lines: int, context: int
) -> None:
    """With ``max_lines`` both engines keep the lines of each file's first matching lines (and
    their context), exactly what ``cap_lines`` cuts from the uncapped result, and count all."""
    root = make_tree(tmp_path / "tree", seed)
    for pattern, case_sensitive, fixed in PATTERNS:
        base = ContentQuery(
            directory=root,
            pattern=pattern,
            case_sensitive=case_sensitive,
            fixed_strings=fixed,
            filters=FILTERS[1],
            max_file_size=50_000,
            output="lines",
            context_lines=context,
        )
        whole, _, _ = await search(ripgrep(), base)
        capped = dataclasses.replace(base, max_lines=max_lines)
        rg_result = await search(ripgrep(), capped)
        py_result = await search(make_engine("python"), capped)
        assert rg_result[:2] == py_result[:2], capped
        expected = {
            path: FileHits(path, hits.count, tuple(cap_lines(hits.lines, max_lines, context)))
            for path, hits in whole.items()
        }
        assert rg_result[0] == expected, capped
