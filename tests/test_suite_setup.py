"""The suite's own machinery: the markers by cause name real tests and are registered, and the
README's fast subset leaves out each of them."""

from __future__ import annotations

import glob
import tomllib
from pathlib import Path

from tests.support.markers import MEANINGS, PATTERNS

REPO = Path(__file__).resolve().parent.parent


def test_every_marker_by_cause_is_registered_with_its_meaning() -> None:
    pytest_options = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["pytest"]
    registered = dict(line.split(": ", 1) for line in pytest_options["ini_options"]["markers"])
    assert {name: registered.get(name) for name in MEANINGS} == MEANINGS
    assert set(PATTERNS) == set(MEANINGS)


def test_every_pattern_names_an_existing_test_module() -> None:
    for name, patterns in PATTERNS.items():
        for pattern in patterns:
            module = pattern.split("::", 1)[0]
            assert glob.glob(str(REPO / module)), f"{name}: {pattern} matches no file"


def test_the_readmes_fast_subset_leaves_out_every_cause_of_slowness() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    (command,) = [line for line in readme.splitlines() if line.startswith(".venv/bin/python -m pytest -m ")]
    for name in ("server_process", "sandbox", "memory", "fuzz", "slow"):
        assert f"not {name}" in command
