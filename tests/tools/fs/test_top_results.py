"""TopResults keeps the first results in path order whatever order they arrive in."""

from __future__ import annotations

import random

from mcp_localtools.search.engine import FileHits
from mcp_localtools.tools.fs._top import TopResults, path_key


def test_paths_sort_component_by_component() -> None:
    # as a walk in name order visits them: directory "a" sorts before "a-c" and "a.txt"
    assert sorted(["a.txt", "a/b", "a-c", "a/a/z"], key=path_key) == ["a/a/z", "a/b", "a-c", "a.txt"]


def test_the_kept_files_are_the_first_in_path_order_whatever_the_arrival_order() -> None:
    rng = random.Random(7)
    files = [FileHits(f"d{i % 7}/f{i:03}", count=rng.randint(1, 5)) for i in range(300)]
    truth = sorted(files, key=lambda hits: path_key(hits.path))
    for _ in range(20):
        rng.shuffle(files)
        top = TopResults(25)
        for hits in files:
            top.add(hits, hits.count)
        kept = top.results()
        assert [hits.path for hits in kept] == [hits.path for hits in truth[: len(kept)]]
        assert sum(hits.count for hits in kept[:-1]) < 25 <= sum(hits.count for hits in kept)
        assert top.total_files == 300 and top.total_lines == sum(hits.count for hits in files)
        assert top.truncated


def test_dedupe_counts_a_path_once() -> None:
    top = TopResults(10, dedupe=True)
    for path in ["b", "a", "b", "a", "c"]:
        top.add(FileHits(path, 0), 1)
    assert [hits.path for hits in top.results()] == ["a", "b", "c"]
    assert top.total_files == 3 and not top.truncated
