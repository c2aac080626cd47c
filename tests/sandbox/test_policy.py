"""The sandbox policy: what is hidden, exposed, writable and protected, and the backends' text."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from mcp_localtools.config import PathsConfig, SandboxConfig
from mcp_localtools.errors import SandboxUnavailable
from mcp_localtools.policy.protected import protected_paths
from mcp_localtools.sandbox import landlock
from mcp_localtools.sandbox.bwrap import BwrapBackend, bwrap_arguments
from mcp_localtools.sandbox.landlock import landlock_spec
from mcp_localtools.sandbox.policy import SandboxPolicy
from mcp_localtools.sandbox.probe import choose_backend
from mcp_localtools.sandbox.seatbelt import SeatbeltBackend, seatbelt_profile


def policy_for(tmp_path: Path, **settings: object) -> tuple[SandboxPolicy, Path, Path]:
    home, root = tmp_path / "home", tmp_path / "proj"
    (home / ".pyenv" / "shims").mkdir(parents=True)
    (home / ".ssh").mkdir()
    root.mkdir()
    config = SandboxConfig.model_validate(settings)
    environ = {"HOME": str(home), "PATH": f"{home / '.pyenv' / 'shims'}:/usr/bin"}
    protected = protected_paths(PathsConfig(), [root])
    return SandboxPolicy.create(config, roots=[root], environ=environ, protected=protected), home, root


def test_the_home_directory_and_temp_are_hidden_and_path_toolchains_exposed(tmp_path: Path) -> None:
    policy, home, root = policy_for(tmp_path)
    assert home in policy.hidden and Path("/tmp") in policy.hidden
    assert home / ".pyenv" / "shims" in policy.exposed, "a PATH entry under home, itself"
    assert home / ".pyenv" not in policy.exposed and home not in policy.exposed
    assert home / ".ssh" not in policy.exposed
    assert policy.writable == (root,) and not policy.network


def test_protected_paths_are_each_roots_git_config_and_hooks_plus_own_files_less_lifted(
    tmp_path: Path,
) -> None:
    root, other = tmp_path / "a", tmp_path / "b"
    root.mkdir()
    other.mkdir()
    config = PathsConfig(protected_paths=[".envrc"], unprotected_paths=[".git/hooks"])
    found = protected_paths(config, [root, other], own_files=[root / "token", tmp_path / "outside.toml"])
    assert set(found) == {
        root / ".git/config",
        root / ".envrc",
        other / ".git/config",
        other / ".envrc",
        root / "token",
    }


def test_bwrap_mounts_the_system_read_only_then_hides_then_binds_the_roots_then_protects(
    tmp_path: Path,
) -> None:
    policy, home, root = policy_for(tmp_path)
    (root / ".git" / "hooks").mkdir(parents=True)
    (root / ".git" / "config").write_text("", encoding="utf-8")
    args = bwrap_arguments(policy, cwd=root, temp_dir=tmp_path / "t")
    joined = " ".join(args)
    assert args[:3] == ["--ro-bind", "/", "/"]
    assert joined.index(f"--tmpfs {home}") < joined.index(f"--ro-bind {home / '.pyenv/shims'}")
    assert joined.index(f"--bind {root} {root}") < joined.index(f"--ro-bind {root / '.git/config'}")
    assert f"--bind {root / '.git'} {root / '.git'}" in joined, ".git is pinned: it cannot be moved aside"
    assert f"--bind {tmp_path / 't'} {tmp_path / 't'}" in joined
    assert "--unshare-net" in args and "--unshare-pid" in args and "--die-with-parent" in args
    assert args[-2:] == ["--chdir", str(root)]
    networked, _, _ = policy_for(tmp_path / "n", network=True)
    assert "--unshare-net" not in bwrap_arguments(networked, cwd=root, temp_dir=None)


def test_a_missing_hooks_directory_is_made_so_it_can_be_held_read_only(tmp_path: Path) -> None:
    policy, _, root = policy_for(tmp_path)
    (root / ".git").mkdir()
    args = bwrap_arguments(policy, cwd=root, temp_dir=None)
    assert (root / ".git" / "hooks").is_dir()
    assert str(root / ".git" / "hooks") in args


def test_the_seatbelt_profile_denies_writes_outside_the_roots_hidden_reads_and_the_network(
    tmp_path: Path,
) -> None:
    policy, home, root = policy_for(tmp_path)
    profile = seatbelt_profile(policy, temp_dir=tmp_path / "t")
    lines = profile.splitlines()
    assert lines[:3] == ["(version 1)", "(allow default)", "(deny file-write*)"]
    assert f'(subpath "{root}")' in lines[3] and f'(subpath "{tmp_path / "t"}")' in lines[3]
    assert lines[3].startswith("(allow file-write*")
    assert f'(subpath "{home}")' in lines[4] and lines[4].startswith("(deny file-read*")
    assert f'(subpath "{home / ".pyenv/shims"}")' in lines[5] and lines[5].startswith("(allow file-read*")
    assert f'(subpath "{root / ".git/config"}")' in lines[6] and lines[6].startswith("(deny file-write*")
    assert "(deny network*)" in lines and "(deny signal (target others))" in lines


def test_a_seatbelt_profile_quotes_paths(tmp_path: Path) -> None:
    root = tmp_path / 'we"ird\\dir'
    root.mkdir()
    policy = SandboxPolicy(writable=(root,), hidden=(), exposed=(), protected=(), network=True)
    profile = seatbelt_profile(policy, temp_dir=None)
    assert '(subpath "' + str(root).replace("\\", "\\\\").replace('"', '\\"') + '")' in profile
    assert "network" not in profile


def test_off_contains_nothing_and_a_missing_bwrap_fails_closed_with_the_way_out(tmp_path: Path) -> None:
    policy, _, _ = policy_for(tmp_path)
    off = choose_backend("off", policy)
    assert off.name == "off" and off.wrap(["ls"], cwd=tmp_path, temp_dir=None) == ["ls"]
    if not sys.platform.startswith("linux"):
        pytest.skip("bwrap is the Linux backend")
    with pytest.raises(SandboxUnavailable) as caught:
        choose_backend("bwrap", policy, bwrap=str(tmp_path / "missing-bwrap"))
    assert "missing-bwrap" in caught.value.message and 'mode = "off"' in caught.value.message


def test_auto_with_neither_bwrap_nor_landlock_fails_closed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not sys.platform.startswith("linux"):
        pytest.skip("the Linux backends")
    policy, _, _ = policy_for(tmp_path)
    monkeypatch.setattr(landlock, "LANDLOCK_EXEC", tmp_path / "missing-landlock-exec.py")  # no backend at all
    with pytest.raises(SandboxUnavailable) as caught:
        choose_backend("auto", policy, bwrap=str(tmp_path / "missing-bwrap"))
    assert "bwrap" in caught.value.message and "landlock" in caught.value.message


def test_the_landlock_spec_reads_everything_but_the_hidden_directories_and_the_system_credentials(
    tmp_path: Path,
) -> None:
    policy, home, root = policy_for(tmp_path)
    spec = landlock_spec(policy, temp_dir=tmp_path / "t")
    read = [Path(path) for path in spec["read"]]  # type: ignore[attr-defined]
    assert Path("/usr") in read and Path("/etc/passwd") in read
    for secret in ("/etc/shadow", "/etc/gshadow", "/root"):
        assert not any(Path(secret) == path or Path(secret).is_relative_to(path) for path in read), secret
    assert not any(
        path == hidden or path.is_relative_to(hidden)
        for path in read
        for hidden in policy.hidden
        if path not in policy.exposed
    )
    assert home / ".pyenv" / "shims" in read
    assert spec["write"] == [str(root), str(tmp_path / "t")] and spec["network"] is False


def test_a_backend_wraps_the_command_after_its_options(tmp_path: Path) -> None:
    policy, _, root = policy_for(tmp_path)
    argv = BwrapBackend("/x/bwrap", policy).wrap(["sh", "-c", "ls"], cwd=root, temp_dir=None)
    assert argv[0] == "/x/bwrap" and argv[-4:] == ["--", "sh", "-c", "ls"]
    seatbelt = SeatbeltBackend("/usr/bin/sandbox-exec", policy).wrap(["ls"], cwd=root, temp_dir=None)
    assert seatbelt[:2] == ["/usr/bin/sandbox-exec", "-p"] and seatbelt[-1] == "ls"


def test_run_is_hidden_and_only_the_resolver_comes_back_with_the_network(tmp_path: Path) -> None:
    closed, _, _ = policy_for(tmp_path / "closed")
    opened, _, _ = policy_for(tmp_path / "open", network=True)
    assert Path("/run") in closed.hidden and Path("/run") in opened.hidden
    resolver = Path("/run/systemd/resolve")
    assert resolver not in closed.exposed
    assert (resolver in opened.exposed) == resolver.exists()


def test_a_root_swapped_for_a_symlink_after_its_check_is_not_made_writable(tmp_path: Path) -> None:
    """Roots come checked and canonical; the policy must not resolve them again (a root swapped
    for a link to / meanwhile would make / writable), but drop one that is no longer itself."""
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    kept = SandboxPolicy.create(SandboxConfig(), roots=[root], environ={"HOME": str(tmp_path)})
    assert root in kept.writable
    root.rename(tmp_path / "moved")
    root.symlink_to(outside)
    swapped = SandboxPolicy.create(SandboxConfig(), roots=[root], environ={"HOME": str(tmp_path)})
    assert outside not in swapped.writable and root not in swapped.writable
