"""What the sandbox exposes of the hidden directories: each PATH entry itself and the prefixes its
programs need, never the home or a whole temp folder; credentials hidden again (issue 25, item 1)."""

from __future__ import annotations

import shutil
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcp_localtools.config import SandboxConfig
from mcp_localtools.sandbox.bwrap import bwrap_arguments
from mcp_localtools.sandbox.exposure import credential_paths, exposed_paths
from mcp_localtools.sandbox.landlock import landlock_spec
from mcp_localtools.sandbox.policy import SandboxPolicy
from mcp_localtools.sandbox.seatbelt import seatbelt_profile


def tool(path: Path, target: Path | None = None) -> Path:
    """A program at ``path`` (a link to ``target`` when given)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if target is None:
        path.write_text("#!/bin/sh\n", encoding="utf-8")
    else:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("#!/bin/sh\n", encoding="utf-8")
        path.symlink_to(target)
    return path


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home" / "alice"
    for name in (".ssh/id_rsa", ".cargo/credentials.toml", ".local/state/log", "notes.txt"):
        (home / name).parent.mkdir(parents=True, exist_ok=True)
        (home / name).write_text("secret", encoding="utf-8")
    return home


@pytest.fixture
def temp_folder() -> Iterator[Path]:
    """A folder of this test's own in the real /tmp (a PATH entry may lie there)."""
    folder = Path(tempfile.gettempdir()) / f"mcp-localtools-test-{uuid.uuid4().hex}"
    (folder / "bin").mkdir(parents=True)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def exposed(home: Path, *entries: Path | str, extra: dict[str, str] | None = None) -> list[Path]:
    environ = {"HOME": str(home), "PATH": ":".join(map(str, entries)), **(extra or {})}
    hidden = [home.parent, home, Path(tempfile.gettempdir()).resolve(), Path("/tmp")]
    return [path for path in exposed_paths(environ, hidden) if path.is_relative_to(home.parent)]


def test_a_path_entry_is_exposed_itself_never_its_parent_or_the_home(home: Path) -> None:
    local, bin_dir = tool(home / ".local/bin/mytool").parent, tool(home / "bin/other").parent
    found = exposed(home, local, bin_dir, home, home.parent, "relative/bin")
    assert found == [local, bin_dir], "~ and /home themselves are on PATH here, and left out"


def test_a_whole_temp_folder_is_never_exposed_but_a_directory_below_one_is(
    home: Path, temp_folder: Path
) -> None:
    environ = {"HOME": str(home), "PATH": f"{temp_folder}:{temp_folder / 'bin'}"}
    found = exposed_paths(environ, [Path("/tmp"), Path(tempfile.gettempdir()).resolve()])
    assert temp_folder.resolve() / "bin" in found
    assert temp_folder.resolve() not in found


def test_a_linked_program_brings_its_install_prefix_and_the_python_of_its_venv(home: Path) -> None:
    base = home / ".pyenv/versions/3.12.1"
    tool(base / "bin/python3.12")
    venv = home / ".local/share/pipx/venvs/black"
    (venv / "pyvenv.cfg").parent.mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text(f"home = {base / 'bin'}\n", encoding="utf-8")
    tool(home / ".local/bin/black", venv / "bin/black")
    found = exposed(home, home / ".local/bin")
    assert found == [home / ".local/bin", venv, base]


def test_a_link_into_the_home_directorys_own_bin_exposes_only_that_program(home: Path) -> None:
    tool(home / ".local/bin/helper", home / "bin/helper")  # ~/bin's parent is ~: never that
    found = exposed(home, home / ".local/bin")
    assert found == [home / ".local/bin", home / "bin"]


def test_version_managers_get_the_version_prefix_their_shims_and_rustup(home: Path) -> None:
    node = tool(home / ".nvm/versions/node/v20.1.0/bin/node").parent
    pyenv = home / ".pyenv"
    tool(pyenv / "shims/python")
    tool(pyenv / "libexec/pyenv")
    (pyenv / "versions/3.12.1").mkdir(parents=True)
    (pyenv / "version").write_text("3.12.1\n", encoding="utf-8")
    cargo = tool(home / ".cargo/bin/rustup").parent
    (home / ".cargo/registry").mkdir()
    (home / ".rustup/toolchains").mkdir(parents=True)
    found = exposed(home, node, pyenv / "shims", cargo)
    assert set(found) == {
        node.parent,
        pyenv / "shims",
        pyenv / "libexec",
        pyenv / "versions",
        pyenv / "version",
        cargo,
        home / ".rustup",
        home / ".cargo/registry",
    }
    assert home / ".cargo" not in found and pyenv not in found


def test_a_python_user_site_comes_with_its_bin(home: Path) -> None:
    local = tool(home / ".local/bin/black").parent
    (home / ".local/lib/python3.11/site-packages").mkdir(parents=True)
    assert exposed(home, local) == [local, home / ".local/lib/python3.11"]


def test_credentials_inside_what_is_shown_stay_hidden_unless_named_on_purpose(home: Path) -> None:
    within = [home]  # say the operator lets commands read the whole home (read_paths = ["~"])
    environ = {"HOME": str(home)}
    found = credential_paths(environ, ["~/notes.txt"], within=within)
    assert {
        home / ".ssh",
        home / ".cargo/credentials.toml",
        home / ".local/state",
        home / "notes.txt",
    } == set(found)
    assert home / ".ssh" not in credential_paths(environ, [], within=within, lifted=[home / ".ssh"])
    assert credential_paths(environ, [], within=[home / ".local/bin"]) == ()


def test_every_backend_hides_a_credential_inside_an_exposed_path(home: Path, tmp_path: Path) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    config = SandboxConfig(read_paths=[str(home)])
    environ = {"HOME": str(home), "PATH": "/usr/bin"}
    policy = SandboxPolicy.create(config, roots=[root], environ=environ)
    assert home in policy.exposed and home / ".ssh" in policy.secret
    args = " ".join(bwrap_arguments(policy, cwd=root, temp_dir=None))
    assert f"--tmpfs {home / '.ssh'}" in args
    assert f"--ro-bind /dev/null {home / '.cargo/credentials.toml'}" in args
    assert args.index(f"--ro-bind {home} {home}") < args.index(f"--tmpfs {home / '.ssh'}")
    read = landlock_spec(policy, temp_dir=None)["read"]
    assert isinstance(read, list)
    assert str(home) not in read and str(home / "notes.txt") in read
    assert not any(Path(path).is_relative_to(home / ".ssh") for path in read)
    assert f'(deny file-read* file-write* (subpath "{home / ".ssh"}")' in seatbelt_profile(
        policy, temp_dir=None
    )
