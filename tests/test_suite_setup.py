"""The suite's own machinery: the markers by cause name real tests and are registered, and the
README's fast subset leaves out each of them."""

from __future__ import annotations

import glob
import tomllib
from pathlib import Path

import pytest

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


@pytest.mark.xdist_group("suite_setup")
def test_an_xdist_group_reaches_the_scheduler(request: pytest.FixtureRequest) -> None:
    """Under ``--dist loadgroup`` a worker gives a grouped test's id its group (``...@group``),
    which is all the scheduler goes by: without it the memory and timing tests run beside each
    other and a shared server starts once per worker (pytest 9.2 with pytest-xdist 3.8 lost it
    silently: pytest-dev/pytest-xdist#1386)."""
    if not getattr(request.config.option, "loadgroup", False):
        pytest.skip("runs under pytest-xdist's --dist loadgroup (-n 0 has no groups)")
    assert request.node.nodeid.endswith("@suite_setup"), request.node.nodeid
