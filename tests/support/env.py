"""The environment of the child processes a test starts with an environment of its own."""

from __future__ import annotations

import os
from collections.abc import Mapping

# What coverage.py's subprocess support ([tool.coverage.run] patch = ["subprocess"]) reads in a
# child Python: set by the measuring pytest, absent otherwise.
_COVERAGE = ("COVERAGE_PROCESS_CONFIG", "COVERAGE_PROCESS_START", "COVERAGE_FILE")


def child_env(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` plus the variables by which coverage measures a child Python, where the test run
    has them, so that a server started with a minimal environment is measured too. Returns a
    new dict; a variable ``env`` sets itself is kept."""
    passed = {name: os.environ[name] for name in _COVERAGE if name in os.environ}
    return {**passed, **env}
