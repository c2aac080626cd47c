"""Run a search in a child process that permission bits bind, even when the tests run as root.

Root reads a ``chmod 000`` directory anyway (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH). The child
drops those two capabilities from its bounding set before it starts (``prctl``), so for it, as
for any unprivileged user, such a directory is unreadable. It builds the same registry as the
tests (with the engine asked for) and prints the call's result as JSON.
"""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

_PR_CAPBSET_DROP = 24
_CAP_DAC_OVERRIDE = 1
_CAP_DAC_READ_SEARCH = 2

_CHILD = """
import anyio, json, sys
from mcp_localtools.config import parse_config
from tests.search.engines import make_engine, search_registry

engine, root, calls = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
registry = search_registry(parse_config({"paths": {"allowed_roots": [root]}}), make_engine(engine))
results = []
for arguments in calls:
    result = anyio.run(registry.call, "searchfiles", arguments)
    results.append({"success": not result.is_error, "structuredContent": result.structured})
print(json.dumps(results))
"""


def _drop_dac_capabilities() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    for capability in (_CAP_DAC_OVERRIDE, _CAP_DAC_READ_SEARCH):
        if libc.prctl(_PR_CAPBSET_DROP, capability, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def run_unprivileged_searches(engine: str, root: Path, calls: list[dict[str, Any]]) -> list[Any]:
    """The results of ``searchfiles`` calls run by a child that permission bits bind."""
    if not sys.platform.startswith("linux"):
        pytest.skip("dropping capabilities is Linux-only")
    preexec = _drop_dac_capabilities if os.geteuid() == 0 else None
    try:
        done = subprocess.run(
            [sys.executable, "-c", _CHILD, engine, str(root), json.dumps(calls)],
            capture_output=True,
            text=True,
            timeout=60,
            preexec_fn=preexec,
            cwd=Path(__file__).resolve().parents[3],
            check=False,
        )
    except subprocess.SubprocessError as exc:
        if "prctl" in str(exc):
            pytest.skip(f"cannot drop capabilities here: {exc}")
        raise
    assert done.returncode == 0, done.stderr
    results: list[Any] = json.loads(done.stdout)
    return results
