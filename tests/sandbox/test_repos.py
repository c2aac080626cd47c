"""The repository tracker: found once, kept current, what commands made is made safe (issue 25,
item 2). Real directories and real git configs in ``tmp_path``."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mcp_localtools.sandbox.repos import RepositoryTracker

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def repo(path: Path, *config: str) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True, timeout=30)
    for line in config:
        key, value = line.split("=", 1)
        subprocess.run(["git", "-C", str(path), "config", key, value], check=True, timeout=30)
    return path / ".git"


def keys(git_dir: Path) -> str:
    return (git_dir / "config").read_text(encoding="utf-8")


@pytest.mark.parametrize("inotify", [True, False], ids=["inotify", "walk"])
def test_repositories_made_or_moved_after_the_start_are_cleaned_those_before_are_not(
    tmp_path: Path, inotify: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not inotify:
        monkeypatch.setitem(sys.modules, "inotify_simple", None)  # as on macOS: no inotify
    elif not sys.platform.startswith("linux"):
        pytest.skip("inotify is Linux's")
    root = tmp_path / "root"
    trusted = repo(root / "mine", "core.pager=less")
    tracker = RepositoryTracker([root])
    tracker.start()
    try:
        assert tracker.mode == ("inotify" if inotify else "scan")
        assert trusted / "config" in tracker.protected() and tracker.check() == ()
        made = repo(root / "new" / "deep", "core.fsmonitor=touch x", "alias.st=!sh", "user.name=kept")
        done = tracker.check()
        assert any("core.fsmonitor" in line and "alias.st" in line for line in done), done
        assert "fsmonitor" not in keys(made) and "kept" in keys(made)
        assert made / "config" in tracker.protected()
        (root / "mine").rename(root / "moved")
        done = tracker.check()
        assert any("core.pager" in line for line in done), "a moved repository is untrusted too"
        assert tracker.check() == (), "each change is handled once"
    finally:
        tracker.close()
    assert "pager" not in keys(root / "moved" / ".git")


def test_a_config_written_again_in_an_untrusted_repository_is_cleaned_again(tmp_path: Path) -> None:
    if not sys.platform.startswith("linux"):
        pytest.skip("inotify is Linux's")
    root = tmp_path / "root"
    root.mkdir()
    tracker = RepositoryTracker([root])
    tracker.start()
    try:
        made = repo(root / "app")
        tracker.check()
        subprocess.run(["git", "-C", str(root / "app"), "config", "core.fsmonitor", "touch x"], check=True)
        hook = made / "hooks" / "post-checkout"
        hook.write_text("#!/bin/sh\ntouch x\n", encoding="utf-8")
        hook.chmod(0o755)
        done = tracker.check()
    finally:
        tracker.close()
    assert "fsmonitor" not in keys(made), done
    assert not hook.stat().st_mode & 0o111
