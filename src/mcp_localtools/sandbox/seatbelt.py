"""The Seatbelt backend (macOS): a profile run through ``/usr/bin/sandbox-exec``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from mcp_localtools.sandbox.backend import Backend, SandboxName, run_probe
from mcp_localtools.sandbox.policy import SandboxPolicy

__all__ = ["SEATBELT_EXEC", "SeatbeltBackend", "seatbelt_profile"]

SEATBELT_EXEC = "/usr/bin/sandbox-exec"


@dataclass(frozen=True, slots=True)
class SeatbeltBackend(Backend):
    """Seatbelt: ``executable`` is ``sandbox-exec``."""

    name: ClassVar[SandboxName] = "seatbelt"

    def wrap(
        self, argv: Sequence[str], *, cwd: Path, temp_dir: Path | None, git: Sequence[Path] | None = None
    ) -> list[str]:
        """``sandbox-exec -p PROFILE argv``."""
        profile = seatbelt_profile(self.policy, temp_dir=temp_dir)
        return [self.executable, "-p", profile, *argv]

    def check(self) -> str | None:
        """Run ``/usr/bin/true`` under the profile."""
        return run_probe(self.wrap(["/usr/bin/true"], cwd=Path("/"), temp_dir=None))


def _quote(path: Path) -> str:
    return '"' + str(path).replace("\\", "\\\\").replace('"', '\\"') + '"'


def seatbelt_profile(policy: SandboxPolicy, *, temp_dir: Path | None) -> str:
    """A macOS Seatbelt (SBPL) profile for ``policy``: everything allowed but file writes outside
    the writable paths, reads of the hidden paths (less the exposed ones), writes to protected
    paths, any access to the credentials (``policy.secret``), network (unless allowed) and
    signals to processes outside the sandbox."""
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
    if policy.secret:
        secret = " ".join(f"(subpath {_quote(p)})" for p in policy.secret)
        lines.append(f"(deny file-read* file-write* {secret})")
    if not policy.network:
        lines.append("(deny network*)")
    lines.append("(deny signal (target others))")
    return "\n".join(lines) + "\n"
