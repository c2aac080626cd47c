"""The Landlock backend (Linux, where bubblewrap cannot create its namespaces).

The command runs under ``landlock_exec.py`` (a standalone script: it restricts itself, then
``exec``s the command; see its docstring for what Landlock does not cover), given the policy as
a JSON spec of readable and writable hierarchies and the network switch.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from mcp_localtools.sandbox.backend import Backend, SandboxName, run_probe
from mcp_localtools.sandbox.exposure import SYSTEM_CREDENTIALS, is_root, root_only_paths
from mcp_localtools.sandbox.policy import SandboxPolicy

__all__ = ["LANDLOCK_EXEC", "LandlockBackend", "landlock_spec"]

LANDLOCK_EXEC = Path(__file__).with_name("landlock_exec.py")
"""The script that applies a Landlock ruleset to itself and runs the command (see its docstring)."""


@dataclass(frozen=True, slots=True)
class LandlockBackend(Backend):
    """Landlock: ``executable`` is the Python that runs ``landlock_exec.py``."""

    name: ClassVar[SandboxName] = "landlock"
    supervised: ClassVar[bool] = True
    drops_capabilities: ClassVar[bool] = True

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
        """The launcher (``wrap`` of no command: it ends with ``--``); ``tmp_bytes`` bounds each
        file written instead (``rlimits``)."""
        return self.wrap([], cwd=cwd, temp_dir=temp_dir, git=git)

    def rlimits(self, tmp_bytes: int) -> dict[str, int]:
        """``FSIZE``: the largest file a command may write (Landlock has no sized ``/tmp``)."""
        return {"FSIZE": tmp_bytes}

    def wrap(
        self, argv: Sequence[str], *, cwd: Path, temp_dir: Path | None, git: Sequence[Path] | None = None
    ) -> list[str]:
        """``python -I -S landlock_exec.py SPEC -- argv``."""
        spec = json.dumps(landlock_spec(self.policy, temp_dir=temp_dir))
        return [self.executable, "-I", "-S", str(LANDLOCK_EXEC), spec, "--", *argv]

    def check(self) -> str | None:
        """``landlock_exec.py --probe``: whether the kernel applies a ruleset."""
        return run_probe([self.executable, "-I", "-S", str(LANDLOCK_EXEC), "--probe"])

    @classmethod
    def here(cls, policy: SandboxPolicy) -> LandlockBackend:
        """The backend run by this server's own Python."""
        return cls(sys.executable, policy)


def landlock_spec(policy: SandboxPolicy, *, temp_dir: Path | None) -> dict[str, object]:
    """The ``landlock_exec.py`` spec of ``policy``: Landlock only allows, so the readable set is
    every top-level hierarchy that is not hidden (descending into the directories that contain a
    hidden one, ``/var`` for ``/var/tmp``) or a system credential (``SYSTEM_CREDENTIALS``, and for a
    root server what only root may read, ``root_only_paths``), plus the exposed paths (descending the same way
    around the credentials inside one) and the writable ones. A credential inside a writable
    root stays readable here: splitting a root would stop commands creating files at its top."""
    writable = [*policy.writable, *([temp_dir] if temp_dir is not None else [])]
    system = [
        Path(path)
        for path in (*SYSTEM_CREDENTIALS, *(path for path, _ in root_only_paths() if is_root()))
        if not any(Path(path) == place or place.is_relative_to(path) for place in writable)
    ]
    read = _cover(Path("/"), [*policy.hidden, *system])
    for path in policy.exposed:
        inside = [secret for secret in policy.secret if secret.is_relative_to(path)]
        read += _cover(path, inside) if inside else [str(path)]
    return {"read": read, "write": [*map(str, writable)], "network": policy.network}


def _cover(directory: Path, excluded: Sequence[Path]) -> list[str]:
    """The entries below ``directory`` whose hierarchies together hold everything in it except
    ``excluded`` (and what lies inside them): the whole directory when nothing is excluded."""
    if not any(path.is_relative_to(directory) for path in excluded):
        return [str(directory)]
    if directory in excluded:
        return []
    try:
        children = sorted(directory.iterdir())
    except OSError:
        return []
    found: list[str] = []
    for child in children:
        found += _cover(child, excluded)
    return found
