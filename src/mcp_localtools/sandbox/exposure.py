"""What commands may read inside the hidden directories: the smallest units that run their tools.

The home directory and ``/tmp`` are hidden from commands, but developers keep their tools there:
``~/.local/bin`` and ``~/bin`` (on ``PATH`` by Debian's and Ubuntu's stock ``~/.profile``),
``~/.cargo/bin``, ``~/.pyenv/shims``, ``~/.nvm/versions/node/X/bin``. ``exposed_paths`` gives
back, read-only, only what those need:

* each ``PATH`` entry itself, never its parent (``~/.local/bin``, not ``~/.local``);
* the resolved prefix of each program in such an entry that is a link into a hidden place
  (``~/.local/bin/black`` → ``~/.local/share/pipx/venvs/black``), and the base interpreter of
  such a virtual environment (its ``pyvenv.cfg``);
* the install prefix of a ``bin`` entry below a directory of versions (``~/.pyenv/versions/X``,
  ``~/.nvm/versions/node/X``, ``~/.asdf/installs/python/X``, ``~/.rustup/toolchains/X``);
* for a shims directory (pyenv, rbenv, nodenv), the manager's own ``libexec``, ``plugins``,
  ``versions``, ``version`` and ``bin``; for ``~/.cargo/bin`` with rustup, ``RUSTUP_HOME`` and
  cargo's crate caches (``registry``, ``git``); for a ``bin`` entry with a Python user site
  (``~/.local/lib/python3.X``), that site.

None of them is ever a directory that contains the home directory, a hidden directory itself, or
a top directory of ``/tmp`` (another program's whole temporary folder): such an entry is left out,
and the start-up log says so. Known credential files (``DEFAULT_CREDENTIALS`` and
``[exec.sandbox] credential_paths``) stay hidden even where they lie inside something exposed or
writable (``credential_paths``), unless a ``read_paths`` entry names one exactly, on purpose.
"""

from __future__ import annotations

import functools
import logging
import os
import stat
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path

__all__ = [
    "DEFAULT_CREDENTIALS",
    "SYSTEM_CREDENTIALS",
    "TEMP_DIRS",
    "credential_paths",
    "exposed_paths",
    "is_root",
    "root_only_paths",
    "usable_by",
]

logger = logging.getLogger(__name__)

DEFAULT_CREDENTIALS = (
    "~/.ssh",
    "~/.gnupg",
    "~/.netrc",
    "~/.pgpass",
    "~/.my.cnf",
    "~/.git-credentials",
    "~/.config/git/credentials",
    "~/.config/gh",
    "~/.config/hub",
    "~/.config/glab-cli",
    "~/.cargo/credentials",
    "~/.cargo/credentials.toml",
    "~/.npmrc",
    "~/.yarnrc.yml",
    "~/.pypirc",
    "~/.config/pip",
    "~/.gem/credentials",
    "~/.docker/config.json",
    "~/.kube",
    "~/.aws",
    "~/.azure",
    "~/.config/gcloud",
    "~/.terraform.d/credentials.tfrc.json",
    "~/.vault-token",
    "~/.password-store",
    "~/.local/share/keyrings",
    "~/.local/state",
    "~/.bash_history",
    "~/.zsh_history",
    "~/.python_history",
)
"""Paths (``~`` is the commands' home) that commands never read, even inside an exposed prefix
or a root: keys, tokens and logins of ssh, gpg, git, GitHub, GitLab, cargo, npm, yarn, PyPI,
pip, RubyGems, Docker, Kubernetes, AWS, Azure, Google Cloud, Terraform, Vault and pass, the
desktop keyring, shell histories, and ``~/.local/state`` (this server's audit log among others)."""

TEMP_DIRS = ("/tmp", "/var/tmp")  # noqa: S108 - the shared temporary directories
"""Directories whose direct children (one program's temporary folder) are never exposed whole."""

VERSION_DIRS = frozenset({"versions", "installs", "toolchains"})
"""Names of the directories version managers keep one install prefix per version in."""

SHIMS_MANAGER = ("libexec", "plugins", "versions", "version", "bin")
"""What a shims directory's manager (pyenv, rbenv, nodenv) needs to run a shim."""

_MAX_PROGRAMS = 4096  # entries read per PATH directory when looking for links


def _real(path: str | Path) -> Path:
    return Path(os.path.realpath(path))


def _inside(path: Path, directories: Iterable[Path]) -> bool:
    return any(path == d or path.is_relative_to(d) for d in directories)


class _Exposure:
    """Collects what to expose, refusing what is too wide (see the module docstring)."""

    def __init__(self, home: Path | None, hidden: Sequence[Path]) -> None:
        self.home = home
        self.hidden = hidden
        self.temp = {_real(path) for path in TEMP_DIRS}
        self.found: list[Path] = []
        self.refused: list[str] = []

    def hidden_here(self, path: Path) -> bool:
        """Inside a hidden directory (not one itself): what needs exposing to be seen."""
        return any(path != d and path.is_relative_to(d) for d in self.hidden)

    def too_wide(self, path: Path) -> str | None:
        if self.home is not None and self.home.is_relative_to(path):
            return "it contains the home directory"
        if path in self.hidden:
            return "it is a hidden directory"
        if path.parent in self.temp:
            return "it is a whole folder of the temporary directory"
        return None

    def add(self, path: Path, *, why: str) -> bool:
        """Expose ``path`` when it exists inside a hidden directory and is not too wide."""
        if not self.hidden_here(path) or not os.path.lexists(path) or _inside(path, self.found):
            return False
        problem = self.too_wide(path)
        if problem is not None:
            self.refused.append(f"{path} ({why}): {problem}")
            return False
        self.found = [kept for kept in self.found if not kept.is_relative_to(path)] + [path]
        return True


def exposed_paths(environ: Mapping[str, str], hidden: Sequence[Path]) -> list[Path]:
    """The read-only holes in ``hidden`` that the programs on ``environ['PATH']`` and the server's
    own Python need (module docstring); canonical, none inside another. Blocking: reads the
    ``PATH`` directories (call it at start-up or from a worker thread)."""
    home_text = environ.get("HOME", "")
    home = _real(home_text) if home_text.startswith("/") else None
    exposure = _Exposure(home, hidden)
    entries = [_real(entry) for entry in environ.get("PATH", "").split(os.pathsep) if entry.startswith("/")]
    for entry in dict.fromkeys(entries):
        if exposure.add(entry, why="on PATH"):
            _toolchain_of(entry, exposure, environ, home)
    for prefix in _interpreter():
        exposure.add(prefix, why="the server's Python")
    for refused in exposure.refused:
        logger.warning("not shown to commands: %s; add what they need to [exec.sandbox] read_paths", refused)
    return exposure.found


def _toolchain_of(entry: Path, exposure: _Exposure, environ: Mapping[str, str], home: Path | None) -> None:
    """Expose what the programs of the exposed ``PATH`` directory ``entry`` need besides it."""
    if entry.name == "bin" and (
        entry.parent.parent.name in VERSION_DIRS or entry.parent.parent.parent.name in VERSION_DIRS
    ):
        exposure.add(entry.parent, why=f"the install prefix of {entry}")
    if entry.name == "shims" and (entry.parent / "libexec").is_dir():
        for name in SHIMS_MANAGER:
            exposure.add(entry.parent / name, why=f"the manager of {entry}")
    if (entry / "rustup").exists():
        rustup = environ.get("RUSTUP_HOME") or (str(home / ".rustup") if home else "")
        if rustup.startswith("/"):
            exposure.add(_real(rustup), why=f"rustup of {entry}")
        for cache in ("registry", "git"):
            exposure.add(entry.parent / cache, why=f"cargo's crate cache of {entry}")
    if entry.name == "bin":
        for site in sorted(entry.parent.glob("lib/python3*")):
            if (site / "site-packages").is_dir():
                exposure.add(site, why=f"the Python user site of {entry}")
    for target in _linked_programs(entry):
        if exposure.hidden_here(target) and not _inside(target, exposure.found):
            prefix = _prefix(target, exposure)
            if prefix is not None:
                _base_interpreter(prefix, exposure)


def _linked_programs(entry: Path) -> Iterator[Path]:
    """Where the links among the first programs of directory ``entry`` resolve to."""
    try:
        with os.scandir(entry) as listing:
            for count, item in enumerate(listing):
                if count >= _MAX_PROGRAMS:
                    break
                if item.is_symlink():
                    yield _real(item.path)
    except OSError:
        return


def _prefix(target: Path, exposure: _Exposure) -> Path | None:
    """Expose the install prefix of the program ``target`` (the directory above its ``bin``),
    else its directory, else the program itself: the first that is not too wide."""
    candidates = [target.parent.parent] if target.parent.name == "bin" else []
    for candidate in [*candidates, target.parent, target]:
        if exposure.too_wide(candidate) is None:
            return candidate if exposure.add(candidate, why=f"the prefix of {target}") else None
    return None


def _base_interpreter(prefix: Path, exposure: _Exposure) -> None:
    """For a virtual environment at ``prefix``, the prefix of the Python it was made from."""
    try:
        lines = (prefix / "pyvenv.cfg").read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return
    for line in lines:
        key, _, value = line.partition("=")
        if key.strip() == "home" and value.strip().startswith("/"):
            home_bin = _real(value.strip())
            exposure.add(home_bin.parent if home_bin.name == "bin" else home_bin, why=f"the base of {prefix}")


def _interpreter() -> list[Path]:
    """The server's own Python: its virtual environment and base installation."""
    prefixes: list[str | Path] = [sys.prefix, sys.base_prefix, Path(sys.executable).parent]
    return [_real(path) for path in dict.fromkeys(prefixes)]


def credential_paths(
    environ: Mapping[str, str],
    extra: Sequence[str],
    *,
    within: Sequence[Path],
    lifted: Sequence[Path] = (),
) -> tuple[Path, ...]:
    """The existing credential paths (``DEFAULT_CREDENTIALS`` and ``extra``; ``~`` is
    ``environ['HOME']``) that lie inside ``within`` (what commands see: exposed and writable
    paths), less those a ``lifted`` path (``read_paths``) is or lies inside. Canonical."""
    home = environ.get("HOME", "")
    found: list[Path] = []
    for entry in (*DEFAULT_CREDENTIALS, *extra):
        if entry.startswith("~"):
            if not home.startswith("/"):
                continue
            entry = home + entry[1:]
        if not entry.startswith("/") or not os.path.lexists(entry):
            continue
        path = _real(entry)
        if _inside(path, within) and path not in lifted:
            found.append(path)
    return tuple(dict.fromkeys(found))


def is_root() -> bool:
    """Whether the server runs as root (uid 0)."""
    return hasattr(os, "geteuid") and os.geteuid() == 0


_ROOT_ONLY_TOPS = ("/etc", "/var")
_ROOT_ONLY_DEPTH = {"/etc": 8, "/var": 2}
SYSTEM_CREDENTIALS = ("/etc/shadow", "/etc/gshadow", "/etc/sudoers", "/root")
"""The system's credential files: outside what commands may read under every backend (bubblewrap
covers them for a root server with ``root_only_paths``; Landlock leaves them out of its readable set)."""


@functools.cache
def root_only_paths() -> tuple[tuple[str, bool], ...]:
    """What only root may read in ``/etc`` (``/etc/shadow``, ``/etc/gshadow``, sudoers, host keys,
    private key directories) and in the top two levels of ``/var`` (logs, private state), as
    ``(path, is_directory)``: a root server's commands run as root in a user namespace of their
    own, without capabilities, and would still read what root owns; these are covered (an empty
    file or directory in their place). Found once per server."""
    found: list[tuple[str, bool]] = []
    for top in _ROOT_ONLY_TOPS:
        stack = [(top, 0)]
        while stack:
            directory, depth = stack.pop()
            try:
                entries = list(os.scandir(directory))
            except OSError:
                continue
            for entry in entries:
                try:
                    info = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                if stat.S_ISDIR(info.st_mode):
                    if not info.st_mode & stat.S_IROTH or not info.st_mode & stat.S_IXOTH:
                        found.append((entry.path, True))
                    elif depth + 1 < _ROOT_ONLY_DEPTH[top]:
                        stack.append((entry.path, depth + 1))
                elif stat.S_ISREG(info.st_mode) and not info.st_mode & stat.S_IROTH:
                    found.append((entry.path, False))
    return tuple(found)


def usable_by(path: str | Path, user: tuple[int, int], bits: int) -> bool:
    """Whether ``user`` (uid, gid) may reach ``path`` (search permission on every directory above
    it) and has the permission ``bits`` (4 read, 2 write, 1 execute or search) on it, by its mode
    bits alone (a root server deciding what a sandbox started as another user can use)."""
    uid, gid = user

    def allows(info: os.stat_result, wanted: int) -> bool:
        shift = 6 if info.st_uid == uid else 3 if info.st_gid == gid else 0
        return (info.st_mode >> shift) & wanted == wanted

    try:
        return all(allows(os.stat(parent), 1) for parent in reversed(Path(path).parents)) and allows(
            os.stat(path), bits
        )
    except OSError:
        return False
