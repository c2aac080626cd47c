"""``sandboxNote``: what a command's result says when the sandbox undid or refused something.

Read from the command's error output (and, for a protected path or the network, the end of its
standard output), whatever its exit code: a refusal that went through a pipe (``git config ...
2>&1 | tail``) still gets its note: a write refused on a protected path
(``EROFS``, ``EBUSY``, ``EPERM``) names the path and the way that works; another refused write
says where commands may write; a network failure with the network off says which setting to
change. Git files a command created where git would have read its config are reported as removed.

``weak_containment`` is what the server says, where people look, when commands run under a weaker
backend than bubblewrap (Landlock) or uncontained: the initialize instructions and the first
command result of each connection (the start-up line on stderr, which some clients never show,
says it too).
"""

from __future__ import annotations

import functools
import re
from typing import Any

from mcp_localtools.regexes import compile_re2, searchable

__all__ = ["BWRAP_NOT_FOUND", "GET_BWRAP", "explain", "weak_containment"]

_READ_ONLY = re.compile(r"Read-only file system|EROFS")
_REFUSED = re.compile(
    r"Read-only file system|EROFS|Device or resource busy|EBUSY|Operation not permitted|EPERM"
)
_BUSY = re.compile(r"Device or resource busy|EBUSY")
_PROTECTED = (
    r"(?P<path>(?:[^\s'\"`:]*/)?\.git/"
    r"(?:config(?:\.worktree)?|commondir|hooks|worktrees|modules)\b[^\s'\":]*)"
)
"""A protected git file's path (RE2, compiled on first use: a backtracking regex was quadratic on
a long line without spaces, 24 s for 65,536 characters, and a command's output may be any)."""
_TAIL_CHARS = 65536  # of stdout searched: where `2>&1 | tail` leaves the error
_NO_NETWORK = re.compile(
    r"Network is unreachable|Temporary failure in name resolution|Could not resolve host|"
    r"Name or service not known|No address associated with hostname|ENETUNREACH|EAI_AGAIN|"
    r"Connection refused|ECONNREFUSED"
)


@functools.cache
def _protected() -> Any:
    return compile_re2(_PROTECTED)


def _protected_note(stderr: str) -> str | None:
    """A refused write that names a git file the sandbox holds read-only: that path, and what
    to do instead."""
    for line in stderr.splitlines():
        found = _protected().search(searchable(line)) if ".git/" in line else None
        if found is not None and (_REFUSED.search(line) or "could not" in line or "unable to" in line):
            path = found.group("path")
            return (
                f"the sandbox holds {path} read-only (git would run what a config or hook there says); "
                "set what you need per command instead (git -c user.email=... commit; the host's "
                "user.name and user.email are already given), change it outside the tools, or ask the "
                "operator to lift it with [paths] unprotected_paths"
            )
    return None


def explain(
    backend: str,
    stderr: str,
    exit_code: int | None,
    *,
    network: bool,
    reverted: tuple[str, ...] = (),
    stdout: str = "",
) -> str | None:
    """The note for a run under ``backend`` (``bwrap``, ``landlock``, ``seatbelt``, ``off``)
    whose error output is ``stderr``; a refused write of a protected git file and a missing
    network are also found in ``stdout`` (``2>&1 | tail``). None when the sandbox did not stand
    in the way."""
    if reverted:
        return (
            f"removed {', '.join(reverted)}, which the command created: git would have read its "
            "config from there (protected); change git's config outside the tools"
        )
    if backend == "off":
        return None
    both = stderr + "\n" + stdout[-_TAIL_CHARS:]
    protected = _protected_note(both)
    if protected is not None:
        return protected
    if _BUSY.search(stderr) and exit_code != 0:
        return (
            "the sandbox pins the directories that hold protected paths (a repository's .git and "
            "the folders above it, the folder of the server's config or audit log): they cannot be "
            "moved or removed from a command; move what is inside them instead"
        )
    if backend == "landlock" and "Permission denied" in stderr and exit_code != 0:
        return (
            "the sandbox (Landlock) may have refused this: commands may write only inside the "
            "allowed roots and TMPDIR, cannot read the home directory"
            + ("" if network else ", and have no network (set [exec.sandbox] network = true)")
        )
    if _READ_ONLY.search(stderr) and exit_code != 0:
        return (
            "the sandbox refused a write: commands may write only inside the allowed roots and "
            "TMPDIR, and protected paths (.git/config, .git/hooks, ...) stay read-only; use the "
            "file tools for files inside the roots, or add the directory to [exec.sandbox] write_paths"
        )
    if not network and _NO_NETWORK.search(both):
        return (
            "the sandbox has no network: commands get an empty network of their own, where "
            "nothing else is reachable (loopback servers of the host included); set "
            "[exec.sandbox] network = true to let commands reach the network (pip install, git fetch)"
        )
    return None


BWRAP_NOT_FOUND = "bwrap: not found"
"""How the probe's reason (``probe.choose_backend``) begins when no bwrap was found."""

GET_BWRAP = (
    "install the system's bubblewrap package (apt install bubblewrap, dnf install bubblewrap, "
    "apk add bubblewrap) or reinstall mcp-localtools with its bwrap extra (mcp-localtools[bwrap]; "
    "x86_64/aarch64 Linux, glibc 2.28+), then restart the server"
)
"""How a person gets bubblewrap (after "the user can")."""


def weak_containment(backend: str, mode: str, reason: str) -> str | None:
    """What to say about the containment of commands under ``backend`` (``bwrap``, ``landlock``,
    ``seatbelt``, ``off``), chosen for ``[exec.sandbox] mode`` ``mode``, ``reason`` saying why
    stronger backends were passed over (``CommandSandbox.reason``): so, why, and how to get
    bubblewrap. None when nothing is weaker than it could be (bubblewrap, Seatbelt)."""
    if backend == "landlock":
        if mode == "landlock":
            why = (
                'the config asks for it ([exec.sandbox] mode = "landlock"). To get bubblewrap, the '
                f'user can set mode = "auto" and, where no bwrap is installed, {GET_BWRAP}'
            )
        elif BWRAP_NOT_FOUND in reason:
            why = f"no bwrap was found. To get bubblewrap, the user can {GET_BWRAP}"
        else:
            why = f"bwrap could not run here ({reason})"
        return (
            "commands run under Landlock, which contains less than bubblewrap (no process or "
            "network namespace of their own; protected paths inside the roots are not read-only "
            f"for commands): {why}"
        )
    if backend == "off":
        return (
            "commands run uncontained, with the server's full authority ([exec.sandbox] mode = "
            '"off"). To contain them, the user can set mode = "auto" (bubblewrap on Linux, Seatbelt '
            f"on macOS) and, on Linux where no bwrap is installed, {GET_BWRAP}"
        )
    return None
