"""Excerpts of long lines and the containment check of reported files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mcp_localtools.policy.paths import PathPolicy
from mcp_localtools.search.line import Line
from mcp_localtools.search.regex import ContentRegex
from mcp_localtools.tools.fs._excerpt import EXCERPT_BYTES, Containment, FileReader, decode_line


def test_a_reported_file_reached_through_a_swapped_in_symlink_is_not_contained(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "dir").mkdir(parents=True)
    outside.mkdir()
    (root / "dir" / "a.txt").write_text("x", encoding="utf-8")
    (outside / "a.txt").write_text("x", encoding="utf-8")
    (root / "swapped").symlink_to(outside)
    (root / "link.txt").symlink_to(outside / "a.txt")
    (root / "inner.txt").symlink_to(root / "dir" / "a.txt")
    for base in (None, root):
        check = Containment(PathPolicy.create([root]), base).check
        assert check(f"{root}/dir/a.txt")
        assert not check(f"{root}/swapped/a.txt")
        assert not check(f"{root}/link.txt")
        assert check(f"{root}/inner.txt")
        assert check(f"{root}/dir/gone.txt")


def test_files_below_the_walk_root_are_checked_without_resolving_each(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "root"
    for index in range(20):
        (root / f"d{index}" / "sub").mkdir(parents=True)
        (root / f"d{index}" / "sub" / "a.txt").write_text("x", encoding="utf-8")
    check = Containment(PathPolicy.create([root]), root).check
    resolved: list[str] = []
    realpath = os.path.realpath

    def counting(path: str, **options: bool) -> str:
        resolved.append(path)
        return realpath(path, **options)

    monkeypatch.setattr(os.path, "realpath", counting)
    assert all(check(f"{root}/d{index}/sub/a.txt") for index in range(20))
    assert resolved == [str(root)], "only the walk root is resolved, once a call"
    (root / "d0" / "sub" / "a.txt").unlink()
    (root / "d0" / "sub" / "a.txt").symlink_to(tmp_path)
    assert not check(f"{root}/d0/sub/a.txt"), "a file swapped for a symlink out is still caught"


def test_a_long_line_is_read_back_and_cut_around_its_first_match(tmp_path: Path) -> None:
    text = "€" * 300 + "needle" + "€" * 300
    (tmp_path / "f.txt").write_text("short\n" + text + "\nafter\n", encoding="utf-8")
    regex = ContentRegex("needle", case_sensitive=True, fixed_strings=False)
    reader = FileReader(PathPolicy.create([tmp_path]), str(tmp_path / "f.txt"), regex, 1 << 20)
    try:
        excerpt = reader.text(Line(number=2, offset=6, is_match=True, text=None))
        context = reader.text(Line(number=2, offset=6, is_match=False, text=None))
    finally:
        reader.close()
    assert excerpt.startswith("…€") and excerpt.endswith("€…") and "needle" in excerpt
    assert len(excerpt.encode("utf-8")) <= EXCERPT_BYTES + 6
    assert context.startswith("€") and context.endswith("€…"), "a context line is cut from its start"


def test_a_long_context_line_is_read_only_as_far_as_its_excerpt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "f.txt").write_bytes(b"a" * 4_000_000 + b" needle\n")
    regex = ContentRegex("needle", case_sensitive=True, fixed_strings=False)
    reader = FileReader(PathPolicy.create([tmp_path]), str(tmp_path / "f.txt"), regex, 16 << 20)
    asked: list[int] = []
    pread = os.pread

    def counting(fd: int, size: int, offset: int) -> bytes:
        asked.append(size)
        return pread(fd, size, offset)

    monkeypatch.setattr(os, "pread", counting)
    try:
        context = reader.text(Line(number=1, offset=0, is_match=False, text=None))
        assert sum(asked) <= EXCERPT_BYTES + 1
        match = reader.text(Line(number=1, offset=0, is_match=True, text=None))
    finally:
        reader.close()
    assert context == "a" * EXCERPT_BYTES + "…"
    assert match.startswith("…a") and "needle" in match, "a matching line is still read to its match"


def test_decoding_keeps_invalid_bytes_visible_and_drops_a_final_cr() -> None:
    assert decode_line(b"caf\xc3\xa9\r") == "café"
    assert decode_line(b"a\xffb") == "a\ufffdb"
