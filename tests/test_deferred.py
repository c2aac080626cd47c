"""``DeferredRegistry`` (a cached start's registry): a held tool is built once at its first use,
is in the registry all the while it is built, and a build that fails is told and tried again."""

from __future__ import annotations

import dataclasses
import logging
from typing import Any

import pytest

from mcp_localtools.deferred import DeferredRegistry
from mcp_localtools.spec import ToolSpec
from tests.test_registry import spec

LISTED = {"name": "echo", "description": "Echo text.", "inputSchema": {"type": "object"}}


def test_a_tool_being_built_is_in_the_registry_all_the_while() -> None:
    # The event loop asks `in` and `names()` without the registry's lock while a worker thread
    # builds the tool: a call arriving then was refused "Unknown tool" (a cold review found it).
    # The description's own strip(), which registering calls, looks at the registry meanwhile.
    seen: list[tuple[bool, list[str], int]] = []
    registry = DeferredRegistry()

    class Watching(str):
        def strip(self, chars: str | None = None) -> str:
            seen.append(("echo" in registry, registry.names(), len(registry)))
            return str.strip(self, chars)

    registry.defer(LISTED, lambda: dataclasses.replace(spec(), description=Watching("Echo text.")))
    registry.get("echo")
    assert seen and all(moment == (True, ["echo"], 1) for moment in seen), seen
    assert registry.names() == ["echo"] and len(registry) == 1


def test_a_build_that_fails_is_told_and_tried_again_at_the_next_use() -> None:
    told: list[tuple[str, dict[str, Any] | None]] = []
    attempts: list[int] = []
    registry = DeferredRegistry(built=lambda name, manifest: told.append((name, manifest)))

    def build() -> ToolSpec[Any]:
        attempts.append(1)
        if len(attempts) == 1:
            raise ImportError("No module named 'missing'")
        return spec()

    registry.defer(LISTED, build)
    with pytest.raises(ImportError):
        registry.get("echo")
    assert told == [("echo", None)] and "echo" in registry
    assert registry.get("echo").name == "echo"
    assert [name for name, _ in told] == ["echo", "echo"] and told[1][1] is not None


def test_a_failing_built_callback_is_logged_and_the_tool_served(caplog: pytest.LogCaptureFixture) -> None:
    def built(name: str, manifest: dict[str, Any] | None) -> None:
        raise PermissionError("read-only file system")

    registry = DeferredRegistry(built=built)
    registry.defer(LISTED, spec)
    with caplog.at_level(logging.ERROR, logger="mcp_localtools.deferred"):
        assert registry.get("echo").name == "echo"
    assert "telling that the tool echo was built failed" in caplog.text


def test_a_register_that_fails_half_way_is_tried_again_whole() -> None:
    # Registering stores the spec, then runs its on_register: one that raised left the tool both
    # registered and held, and every later use failed with "registered twice" (a cold review).
    starts: list[int] = []

    def on_register() -> None:
        starts.append(1)
        if len(starts) == 1:
            raise RuntimeError("cannot start a thread")

    registry = DeferredRegistry()
    registry.defer(LISTED, lambda: dataclasses.replace(spec(), on_register=on_register))
    with pytest.raises(RuntimeError):
        registry.get("echo")
    assert registry.get("echo").name == "echo" and len(starts) == 2
