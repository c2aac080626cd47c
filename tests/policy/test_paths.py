"""PathPolicy: roots, the base directory, path checks and symlink rules, and the path-escape security
cases."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mcp_localtools import compat
from mcp_localtools.errors import ConfigError, InvalidPath, OutsideAllowedRoots, SymlinkRefused
from mcp_localtools.policy.paths import PathPolicy


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "a.txt").write_text("a", encoding="utf-8")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("secret", encoding="utf-8")
    return root


def test_roots_are_canonicalised_and_deduplicated(root: Path) -> None:
    policy = PathPolicy.create([str(root / "sub" / ".."), str(root), f"  {root}/ ".strip()])
    assert policy.roots == (root.resolve(),)


def test_a_root_reached_through_a_symlink_is_stored_resolved(root: Path, tmp_path: Path) -> None:
    (tmp_path / "alias").symlink_to(root)
    assert PathPolicy.create([tmp_path / "alias"]).roots == (root.resolve(),)


@pytest.mark.parametrize("bad", ["missing", "sub/a.txt"])
def test_a_missing_root_or_a_file_root_fails_at_start_up(root: Path, bad: str) -> None:
    with pytest.raises(ConfigError, match="invalid allowed root"):
        PathPolicy.create([root / bad])


def test_base_defaults_to_the_first_root_as_written_not_sorted(root: Path, tmp_path: Path) -> None:
    later = tmp_path / "aaa"
    later.mkdir()
    policy = PathPolicy.create([root, later])
    assert policy.base_dir == root.resolve()
    assert policy.resolve("x.txt").path == root.resolve() / "x.txt"


def test_a_base_outside_the_roots_fails_at_start_up(root: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="outside the allowed roots"):
        PathPolicy.create([root], base_dir=tmp_path / "outside")


def test_block_symlinks_refuses_a_root_with_a_symlink_component(root: Path, tmp_path: Path) -> None:
    (tmp_path / "alias").symlink_to(root)
    with pytest.raises(ConfigError, match="symlink"):
        PathPolicy.create([tmp_path / "alias"], block_symlinks=True)


@pytest.mark.parametrize("given", ["", "   ", "\t"])
def test_empty_paths_are_invalid(root: Path, given: str) -> None:
    with pytest.raises(InvalidPath, match="invalid path"):
        PathPolicy.create([root]).resolve(given)


def test_a_nul_byte_is_invalid(root: Path) -> None:
    with pytest.raises(InvalidPath, match="NUL"):
        PathPolicy.create([root]).resolve("sub/a.txt\x00.png")


def test_surrounding_whitespace_is_trimmed(root: Path) -> None:
    assert PathPolicy.create([root]).resolve("  sub/a.txt \n").path == root / "sub" / "a.txt"


def test_relative_paths_join_the_base_and_dotdot_collapses_before_the_check(root: Path) -> None:
    policy = PathPolicy.create([root])
    assert policy.resolve("sub/../sub/./a.txt").path == root / "sub" / "a.txt"
    with pytest.raises(OutsideAllowedRoots):
        policy.resolve("sub/../../outside/secret.txt")


def test_a_symlink_inside_a_root_that_points_outside_is_refused(root: Path, tmp_path: Path) -> None:
    (root / "link").symlink_to(tmp_path / "outside" / "secret.txt")
    with pytest.raises(OutsideAllowedRoots):
        PathPolicy.create([root]).resolve("link")


def test_a_new_path_is_checked_through_its_nearest_existing_ancestor(root: Path, tmp_path: Path) -> None:
    (root / "out").symlink_to(tmp_path / "outside")
    policy = PathPolicy.create([root])
    with pytest.raises(OutsideAllowedRoots):
        policy.resolve("out/new/deeper/file.txt")
    assert policy.resolve("sub/new/deeper/file.txt").real == root / "sub" / "new" / "deeper" / "file.txt"


def test_the_outside_error_names_the_path_and_the_link_that_leaves_never_its_target(
    root: Path, tmp_path: Path
) -> None:
    (root / "sub" / "door").symlink_to(tmp_path / "outside")
    with pytest.raises(OutsideAllowedRoots) as caught:
        PathPolicy.create([root]).resolve("sub/door/secret.txt")
    message = caught.value.message
    assert message.startswith("path is outside allowed roots: sub/door/secret.txt")
    assert f"{root / 'sub' / 'door'} is a symlink that leads outside them" in message
    assert "outside/secret" not in message and str(tmp_path / "outside") not in message


def test_a_path_over_path_max_is_refused_before_any_work_and_not_echoed_whole(root: Path) -> None:
    import tracemalloc

    long = "a/" * 40_000_000  # 80 MB
    policy = PathPolicy.create([root])
    tracemalloc.start()
    try:
        with pytest.raises(InvalidPath) as caught:
            policy.resolve(long)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1024 * 1024  # no copy, split or encoding of the 80 MB: refused by its length
    assert "longer than 4096 bytes (PATH_MAX)" in caught.value.message
    assert len(caught.value.message) < 600
    PathPolicy.create([root]).resolve("x" * 200 + "/" + "y" * 200)  # long but legal: accepted


def test_control_characters_in_an_echoed_path_are_escaped(root: Path) -> None:
    with pytest.raises(OutsideAllowedRoots) as caught:
        PathPolicy.create([root]).resolve("/n\nFAKE-RESULT\x1b]0;title\x07")
    message = caught.value.message
    assert "\n" not in message and "\x1b" not in message and "\x07" not in message
    assert "/n\\nFAKE-RESULT\\x1b]0;title\\x07" in message


def test_resolved_paths_keep_the_lexical_form_of_an_inside_symlink(root: Path) -> None:
    (root / "alias.txt").symlink_to(root / "sub" / "a.txt")
    resolved = PathPolicy.create([root]).resolve("alias.txt")
    assert resolved.path == root / "alias.txt"
    assert resolved.real == root / "sub" / "a.txt"


def test_block_symlinks_refuses_a_symlink_component(root: Path) -> None:
    (root / "dirlink").symlink_to(root / "sub")
    with pytest.raises(SymlinkRefused, match="symlinks are disallowed by policy"):
        PathPolicy.create([root], block_symlinks=True).resolve("dirlink/a.txt")


def test_block_symlinks_refuses_a_symlink_file(root: Path) -> None:
    (root / "alias.txt").symlink_to(root / "sub" / "a.txt")
    with pytest.raises(SymlinkRefused):
        PathPolicy.create([root], block_symlinks=True).resolve("alias.txt")


def test_symlinks_inside_the_roots_are_fine_when_not_blocked(root: Path) -> None:
    (root / "dirlink").symlink_to(root / "sub")
    assert PathPolicy.create([root]).resolve("dirlink/a.txt").real == root / "sub" / "a.txt"


def test_a_sibling_whose_name_extends_the_root_is_outside(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    evil = tmp_path / "proj_evil"
    root.mkdir()
    evil.mkdir()
    (evil / "x.txt").write_text("x", encoding="utf-8")
    policy = PathPolicy.create([root])
    for given in (str(evil / "x.txt"), "../proj_evil/x.txt", str(tmp_path / "proj-backup")):
        with pytest.raises(OutsideAllowedRoots):
            policy.resolve(given)


@pytest.mark.parametrize(
    "given", ["/etc/passwd", "../outside/secret.txt", "sub/../../outside/secret.txt", "//etc"]
)
def test_absolute_and_traversal_paths_outside_the_root_are_refused(root: Path, given: str) -> None:
    with pytest.raises(OutsideAllowedRoots):
        PathPolicy.create([root]).resolve(given)


def test_a_dangling_symlink_that_points_outside_is_refused(root: Path, tmp_path: Path) -> None:
    (root / "dangling").symlink_to(tmp_path / "outside" / "not-yet.txt")
    with pytest.raises(OutsideAllowedRoots):
        PathPolicy.create([root]).resolve("dangling")


def test_a_symlink_loop_does_not_hang_resolution(root: Path) -> None:
    (root / "loop1").symlink_to(root / "loop2")
    (root / "loop2").symlink_to(root / "loop1")
    policy = PathPolicy.create([root])
    resolved = policy.resolve("loop1")  # the loop stays inside; using it fails later with ELOOP
    assert resolved.root == root


def test_verify_fd_refuses_an_object_opened_outside_the_roots(root: Path, tmp_path: Path) -> None:
    policy = PathPolicy.create([root])
    resolved = policy.resolve("sub/a.txt")
    fd = os.open(tmp_path / "outside" / "secret.txt", os.O_RDONLY)
    try:
        with pytest.raises(OutsideAllowedRoots, match="changed while it was opened"):
            policy.verify_fd(fd, resolved)
    finally:
        os.close(fd)


def test_open_refuses_when_a_component_is_swapped_for_an_outside_symlink_after_the_check(
    root: Path, tmp_path: Path
) -> None:
    policy = PathPolicy.create([root])
    (root / "sub" / "secret.txt").write_text("inside", encoding="utf-8")
    resolved = policy.resolve("sub/secret.txt")
    (root / "sub").rename(root / "sub.bak")
    (root / "sub").symlink_to(tmp_path / "outside")  # the race: after resolve(), before open()
    with pytest.raises(OutsideAllowedRoots):
        policy.open(resolved, os.O_RDONLY)


def test_is_root_marks_an_allowed_root_itself(root: Path) -> None:
    policy = PathPolicy.create([root])
    assert policy.resolve(".").is_root
    assert not policy.resolve("sub").is_root


@pytest.mark.skipif(not compat.O_PATH, reason="O_PATH is Linux's")
def test_an_existing_path_is_resolved_by_the_kernel_in_one_walk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "dir").mkdir()
    (tmp_path / "dir" / "f.txt").write_text("x", encoding="utf-8")
    (tmp_path / "link").symlink_to(tmp_path / "dir")
    policy = PathPolicy.create([tmp_path])
    resolved: list[str] = []
    realpath = os.path.realpath

    def counting(path: str, **options: bool) -> str:
        resolved.append(os.fspath(path))
        return realpath(path, **options)

    monkeypatch.setattr(os.path, "realpath", counting)
    found = policy.resolve("link/f.txt")
    assert (found.path, found.real) == (tmp_path / "link" / "f.txt", tmp_path / "dir" / "f.txt")
    kept = policy.resolve("link", follow_final=False)
    assert (kept.path, kept.real) == (tmp_path / "link", tmp_path / "link")
    assert resolved == [], "an existing path costs one O_PATH open, not a realpath"
    missing = policy.resolve("link/new.txt")
    assert missing.real == tmp_path / "dir" / "new.txt" and resolved, "a missing path is resolved by name"
