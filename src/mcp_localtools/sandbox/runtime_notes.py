"""What a command's result says when its connection's sandbox stood in its way at run time: the
filtering proxy refused a host, or the command ran into one of the sandbox's limits, or into the
refusal of UNIX sockets. Each note names the setting to change (``[exec.sandbox] ...``).

The limits are the kernel's (``launch.py``), so a command over one is not killed by the server: its
allocation, fork or write fails, and the program usually exits with that error. The note is
built from the error it printed (its last 4 KiB of each stream) and the exit status.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from mcp_localtools.config import SandboxConfig
from mcp_localtools.sandbox.proxy import Refusal

__all__ = ["runtime_note"]

_TAIL = 4096
_NO_SPACE = re.compile(r"No space left on device|ENOSPC|Disk quota exceeded")
_NO_FORK = re.compile(
    r"fork: (retry: )?Resource temporarily unavailable|Cannot fork|can't fork|"
    r"\[Errno 11\] Resource temporarily unavailable|EAGAIN.*(fork|spawn|clone)|"
    r"pthread_create.*Resource temporarily unavailable|unable to create (new )?(native )?thread"
)
_NO_MEMORY = re.compile(
    r"MemoryError|Cannot allocate memory|[Oo]ut of memory|std::bad_alloc|ENOMEM|"
    r"memory allocation of \d+ bytes failed|JavaScript heap out of memory|"
    r"fatal error: runtime: out of memory"
)
_UNIX_SOCKET = re.compile(r"Permission denied|EACCES")
_SIGXFSZ_EXIT = 128 + 25


def runtime_note(
    config: SandboxConfig,
    *,
    stdout: str,
    stderr: str,
    exit_code: int | None,
    refusals: Sequence[Refusal] = (),
    unix_sockets_refused: bool = False,
    memory_killed: bool = False,
) -> str | None:
    """The note for a run (None when nothing of the sandbox's runtime stood in its way).

    Args:
        config: ``[exec.sandbox]``: the limits named in the note.
        stdout, stderr: what the command printed (only the tails are looked at).
        exit_code: its exit code (None: it did not run).
        refusals: what the proxy refused while it ran.
        unix_sockets_refused: whether commands of this sandbox cannot create UNIX sockets.
        memory_killed: whether the kernel stopped a process of the sandbox at its memory cgroup's
            limit while it ran.
    """
    if refusals:
        seen = list(dict.fromkeys(f"{refusal.target} ({refusal.reason})" for refusal in refusals))
        return (
            "the sandbox's proxy refused " + "; ".join(seen[:3]) + ". Hosts are reached through it only "
            "when listed in [exec.sandbox] allowed_domains (ask the user to add the host), or with "
            "[exec.sandbox] network = true"
        )
    if exit_code in (0, None):
        return None
    text = stdout[-_TAIL:] + "\n" + stderr[-_TAIL:]
    if exit_code == _SIGXFSZ_EXIT:
        return (
            f"the command wrote a file larger than [exec.sandbox] tmp_mb = {config.tmp_mb} MiB, the "
            "largest file a command may write under this sandbox; ask the user to raise tmp_mb"
        )
    if _NO_FORK.search(text):
        return (
            f"the sandbox's process limit was reached: [exec.sandbox] max_processes = {config.max_processes} "
            "processes at once for the session (its commands and background processes together); stop "
            "background processes you no longer need, run less in parallel, or ask the user to raise it"
        )
    if memory_killed:
        return (
            "a process was stopped at the sandbox's memory limit: [exec.sandbox] memory_mb = "
            f"{config.memory_mb} MiB for the sandbox's processes together (shared memory and /tmp "
            "included); use less memory (smaller inputs, fewer workers, fewer files in /tmp) or ask "
            "the user to raise it"
        )
    if _NO_MEMORY.search(text):
        return (
            "an allocation failed at the sandbox's memory limit: [exec.sandbox] memory_mb = "
            f"{config.memory_mb} MiB per process; use less memory (smaller inputs, fewer workers) or ask "
            "the user to raise it"
        )
    if _NO_SPACE.search(text):
        return (
            f"no space left: the session's temp space (/tmp, TMPDIR, and the sandbox's home) holds "
            f"[exec.sandbox] tmp_mb = {config.tmp_mb} MiB; delete what you no longer need there, write "
            "large files inside the roots, or ask the user to raise tmp_mb (if the roots' own disk is "
            "full, free space there)"
        )
    if unix_sockets_refused and _UNIX_SOCKET.search(text) and re.search(r"socket|AF_UNIX|\.sock", text):
        return (
            "the sandbox refuses UNIX sockets to commands while the network is off (a socket in a root "
            "could reach a service outside); ask the user to list the socket in "
            "[exec.sandbox] allow_unix_sockets, or to set network = true"
        )
    return None
