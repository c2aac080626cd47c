"""The sandbox backends' common shape: a ``Backend`` wraps a command's argv in the operating
system's containment of a ``SandboxPolicy``. ``OffBackend`` contains nothing; the others live in
``bwrap.py``, ``landlock.py`` and ``seatbelt.py``, and ``probe.py`` picks one."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Literal

from mcp_localtools.sandbox.policy import SandboxPolicy

__all__ = ["Backend", "OffBackend", "SandboxName", "run_probe"]

SandboxName = Literal["bwrap", "landlock", "seatbelt", "off"]
"""The name of every backend: what a command result's ``sandbox`` field can say."""


@dataclass(frozen=True, slots=True)
class Backend:
    """A way to run a command inside a policy (subclasses override ``wrap``).

    Attributes:
        name: ``bwrap``, ``landlock``, ``seatbelt`` or ``off``.
        executable: the sandbox program (``bwrap``, the Python that runs ``landlock_exec.py``,
            ``/usr/bin/sandbox-exec``); empty for ``off``.
        policy: what it enforces.
    """

    name: ClassVar[SandboxName] = "off"
    contains: ClassVar[bool] = True
    """Whether it contains anything (``off`` does not: no temp dir, no git checks)."""
    supervised: ClassVar[bool] = False
    """Whether commands run in one long-lived sandbox per client connection, forked by a
    supervisor inside it (``sandbox_argv``), rather than each wrapped on its own (``wrap``)."""
    private_tmp: ClassVar[bool] = False
    """Whether the sandbox has its own sized ``/tmp`` (then the commands' ``TMPDIR``)."""
    drops_capabilities: ClassVar[bool] = False
    """Whether a root server's supervisor must drop every capability itself (no user namespace)."""
    runs_as_owner: ClassVar[bool] = False
    """Whether a root server's commands run as the owner of the root that holds their working
    directory (``sandbox_argv``'s ``user``), when that owner is not root."""
    executable: str
    policy: SandboxPolicy

    def wrap(
        self, argv: Sequence[str], *, cwd: Path, temp_dir: Path | None, git: Sequence[Path] | None = None
    ) -> list[str]:
        """The argv that runs ``argv`` in ``cwd`` inside the sandbox, with ``temp_dir`` (the
        session's private temporary directory, which must exist) writable; ``git`` is
        ``git.nested_git_paths`` of the writable roots when the caller has it already."""
        raise NotImplementedError

    def check(self) -> str | None:
        """None when the backend runs a command here; else what went wrong, in a line."""
        raise NotImplementedError

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
        """For a ``supervised`` backend: the argv before the supervisor's that starts one
        long-lived sandbox in ``cwd``, whose empty writable directories hold ``tmp_bytes`` each
        and where the UNIX socket paths ``sockets`` are reachable; ``user`` (uid, gid): the
        identity the sandbox is started with by a root server (``runs_as_owner``).

        Raises:
            NotImplementedError: the backend wraps each command (``wrap``) instead.
        """
        raise NotImplementedError(f"{self.name} wraps each command; it starts no sandbox of its own")

    def rlimits(self, tmp_bytes: int) -> dict[str, int]:
        """Resource limits the supervisor adds for this backend (``RLIMIT_`` name to value)."""
        return {}


@dataclass(frozen=True, slots=True)
class OffBackend(Backend):
    """No containment: commands run with the server's full authority."""

    name: ClassVar[SandboxName] = "off"
    contains: ClassVar[bool] = False

    def wrap(
        self, argv: Sequence[str], *, cwd: Path, temp_dir: Path | None, git: Sequence[Path] | None = None
    ) -> list[str]:
        """``argv`` unchanged."""
        return list(argv)

    def check(self) -> str | None:
        """Always works."""
        return None


def run_probe(argv: list[str]) -> str | None:
    """None when ``argv`` ran and exited 0; else what went wrong, in a line."""
    try:
        done = subprocess.run(argv, capture_output=True, timeout=10, check=False, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    if done.returncode != 0:
        return (done.stderr.decode("utf-8", "replace").strip() or f"exit {done.returncode}")[:300]
    return None
