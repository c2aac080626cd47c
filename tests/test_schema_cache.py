"""The schema cache (``schemas.py``) stays in step with the models: every tool's input and
output schema is cached, under the fingerprint the model has now, exactly as the code generates
it. Rewrite the cache after changing a model or the schema code with:

    MCP_LOCALTOOLS_WRITE_SCHEMA_CACHE=1 .venv/bin/python -m pytest tests/test_schema_cache.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, Field

from mcp_localtools import schemas
from mcp_localtools.config import Config
from mcp_localtools.schemas import (
    CACHE_FILE,
    Kind,
    cached_schema,
    entry_key,
    fingerprint,
    input_schema,
    output_schema,
)
from mcp_localtools.spec import ToolArgs
from mcp_localtools.tools import all_specs
from mcp_localtools.workspace import Workspace


def _generated(root: Path) -> dict[str, Any]:
    entries: dict[str, Any] = {}
    for spec in all_specs(Workspace.from_config(Config(paths={"allowed_roots": [str(root)]}))):
        pairs: tuple[tuple[type[BaseModel], Kind, Callable[[type[BaseModel]], dict[str, Any]]], ...] = (
            (spec.args_model, "input", input_schema),
            (spec.result_model, "output", output_schema),
        )
        for model, kind, make in pairs:
            entries[entry_key(model, kind)] = {"fingerprint": fingerprint(model), "schema": make(model)}
    return dict(sorted(entries.items()))


def test_every_tool_schema_is_cached_as_the_code_generates_it(tmp_path: Path) -> None:
    generated = _generated(tmp_path)
    uncacheable = sorted(key for key, entry in generated.items() if entry["fingerprint"] is None)
    assert not uncacheable, f"models with unresolved forward references, never cached: {uncacheable}"
    if os.environ.get("MCP_LOCALTOOLS_WRITE_SCHEMA_CACHE") == "1":
        CACHE_FILE.write_text(json.dumps(generated, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    cached = json.loads(CACHE_FILE.read_text(encoding="utf-8"))
    stale = sorted(key for key in generated.keys() | cached.keys() if generated.get(key) != cached.get(key))
    assert not stale, (
        f"{CACHE_FILE.name} is out of step with the models for {stale}; rewrite it with "
        "MCP_LOCALTOOLS_WRITE_SCHEMA_CACHE=1 .venv/bin/python -m pytest tests/test_schema_cache.py"
    )


def test_fingerprints_are_the_same_in_another_process(tmp_path: Path) -> None:
    """A fingerprint that changed between processes (a memory address in a repr) would make
    every lookup miss: the cache would be kept but never used."""
    code = (
        "import json, sys\n"
        "from tests.test_schema_cache import _generated\n"
        "from pathlib import Path\n"
        "print(json.dumps({k: v['fingerprint'] for k, v in _generated(Path(sys.argv[1])).items()}))\n"
    )
    other = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parent.parent,
    )
    here = {key: value["fingerprint"] for key, value in _generated(tmp_path).items()}
    assert json.loads(other.stdout) == here


def test_a_model_that_changed_since_the_cache_was_written_gets_a_generated_schema(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class Args(ToolArgs):
        path: str = Field(description="Path.")

    written = {entry_key(Args, "input"): {"fingerprint": fingerprint(Args), "schema": input_schema(Args)}}
    monkeypatch.setattr(schemas, "_entries", lambda: written)  # the cache as written for this model
    assert cached_schema(Args, "input") == input_schema(Args)

    class Args(ToolArgs):  # type: ignore[no-redef]  # the same model (same key), since edited
        path: str = Field(description="Path to read.")

    assert entry_key(Args, "input") in written
    assert cached_schema(Args, "input") is None  # stale: the registry generates it


def test_a_cached_schema_is_a_copy_the_caller_may_change() -> None:
    from mcp_localtools.tools.fs.statpath import StatPathArgs

    schema = cached_schema(StatPathArgs, "input")
    assert schema is not None and schema == input_schema(StatPathArgs)
    schema["properties"].clear()
    assert cached_schema(StatPathArgs, "input") == input_schema(StatPathArgs)


def _nested(unit: str) -> type[BaseModel]:
    """An arguments model whose only field is a list of a nested model described with ``unit``."""

    class Inner(BaseModel):
        value: int = Field(description=f"A value in {unit}.")

    class Outer(ToolArgs):
        items: list[Inner] = Field(description="Items.")

    Outer.model_rebuild(_types_namespace={"Inner": Inner})
    return Outer


def test_fingerprints_follow_nested_models() -> None:
    assert fingerprint(_nested("bytes")) != fingerprint(_nested("lines"))
    assert fingerprint(_nested("bytes")) == fingerprint(_nested("bytes"))


def test_a_model_with_an_unresolved_forward_reference_is_not_cached() -> None:
    class Args(ToolArgs):
        item: Later = Field(description="Defined later.")  # type: ignore[name-defined]  # noqa: F821

    assert fingerprint(Args) is None and cached_schema(Args, "input") is None


def test_the_fingerprint_covers_how_a_field_is_serialised() -> None:
    def result(exclude: bool) -> type[BaseModel]:
        class Result(BaseModel):
            size: int = Field(description="Bytes.", exclude=exclude)

        return Result

    assert fingerprint(result(True)) != fingerprint(result(False))


def test_a_fresh_server_process_takes_every_tool_schema_from_the_cache(tmp_path: Path) -> None:
    """As at start-up: no model built yet when its fingerprint is taken."""
    code = (
        "import sys\n"
        "from mcp_localtools.config import Config\n"
        "from mcp_localtools.schemas import cached_schema\n"
        "from mcp_localtools.tools import all_specs\n"
        "from mcp_localtools.workspace import Workspace\n"
        "specs = all_specs(Workspace.from_config(Config(paths={'allowed_roots': [sys.argv[1]]})))\n"
        "print(sorted(f'{s.name}:{kind}' for s in specs for model, kind in "
        "((s.args_model, 'input'), (s.result_model, 'output')) if cached_schema(model, kind) is None))\n"
    )
    fresh = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, check=True, cwd=tmp_path
    )
    assert fresh.stdout.strip() == "[]", fresh.stdout
