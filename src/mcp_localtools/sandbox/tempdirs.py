"""Each connection's private temp dirs under one base dir per server process
(``mcp-localtools-<pid>-*`` in the system temp dir): removed when a connection ends, and the base
dirs of servers that are gone (killed with SIGKILL) swept at the next start."""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path

__all__ = ["TEMP_PREFIX", "remove_dirs_of", "sweep_stale"]

TEMP_PREFIX = "mcp-localtools-"
"""The name of a server's temp base dir starts with it, then the server's pid and ``-``."""


def remove_dirs_of(base: Path, owner: str) -> None:
    """Remove the temporary directories of connection ``owner`` in ``base`` (one per identity)."""
    prefix = re.sub(r"[^A-Za-z0-9_-]", "_", owner)
    try:
        entries = list(base.iterdir())
    except OSError:
        return
    for path in entries:
        if path.name == prefix or path.name.startswith(prefix + "_uid"):
            shutil.rmtree(path, ignore_errors=True)


def sweep_stale() -> None:
    """Remove the temp base dirs of servers that are gone (``mcp-localtools-<pid>-*`` of this
    user whose pid is not running): a server killed with SIGKILL cannot clean up after itself."""
    base = Path(tempfile.gettempdir())
    try:
        candidates = list(base.glob(TEMP_PREFIX + "*"))
    except OSError:
        return
    for path in candidates:
        pid = path.name[len(TEMP_PREFIX) :].partition("-")[0]
        if not pid.isdigit() or _alive(int(pid)):
            continue
        try:
            if hasattr(os, "geteuid") and path.stat().st_uid != os.geteuid():
                continue
        except OSError:
            continue
        shutil.rmtree(path, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's: alive
        return True
    return True
