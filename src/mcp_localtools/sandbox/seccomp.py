"""The seccomp program that refuses UNIX sockets to commands when they have no network."""

from __future__ import annotations

import functools
import logging
import socket
import sys
import tempfile
from typing import Any

__all__ = ["unix_socket_filter"]

logger = logging.getLogger(__name__)


if sys.platform == "linux":

    @functools.cache
    def unix_socket_filter() -> bytes | None:
        """A classic BPF program (``seccomp_export_bpf``'s form) that makes ``socket(AF_UNIX, ...)``
        fail with EACCES, for this machine's native ABI and its 32-bit compatibility ABIs (where
        ``socketcall``, whose arguments a filter cannot read, is refused as a whole); everything
        else, ``socketpair`` included, is allowed. None when libseccomp is not installed (logged
        once)."""
        try:
            import pyseccomp as seccomp
        except (ImportError, OSError) as exc:  # the package, or libseccomp.so.2 under it
            logger.warning("UNIX sockets cannot be refused to commands: libseccomp is unavailable (%s)", exc)
            return None
        program = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
        for arch in _compat_arches(seccomp):
            try:
                program.add_arch(arch)
            except Exception:  # noqa: BLE001, S112 - an ABI this libseccomp does not know
                continue
        program.add_rule(seccomp.ERRNO(13), "socket", seccomp.Arg(0, seccomp.EQ, socket.AF_UNIX))
        with tempfile.TemporaryFile() as handle:
            program.export_bpf(handle)
            handle.seek(0)
            return handle.read()

else:  # pragma: no cover - not Linux

    def unix_socket_filter() -> bytes | None:
        """None: seccomp is Linux only (the session sandboxes that load it exist only there)."""
        return None


def _compat_arches(seccomp: Any) -> list[Any]:
    import platform

    arch = seccomp.Arch
    machine = platform.machine()
    if machine == "x86_64":
        return [arch.X86, arch.X32]
    if machine == "aarch64":
        return [arch.ARM]
    return []
