"""The layers of the package point down only (``docs/ARCHITECTURE.md``, "The layers").

The import graph is read from the source with ``ast`` (every import, at any depth, including
``TYPE_CHECKING`` blocks), so a rule is broken as soon as the import is written, not only when
it runs.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import mcp_localtools

PACKAGE = "mcp_localtools"
SOURCE = Path(mcp_localtools.__file__).resolve().parent
GROUPS = ("fs", "text", "exec", "image", "web", "code")
ABOVE_TOOLS = {"mcp_localtools", "mcp_localtools.__main__", "mcp_localtools.cli", "mcp_localtools.server"}
"""The modules that may import ``tools``: the package's public API and what serves it."""
MCP_IMPORTERS = {
    "mcp_localtools.server",
    "mcp_localtools.transports",
    "mcp_localtools.stdio",
    "mcp_localtools._sdk",
}
SUBSYSTEMS = ("processes", "sandbox")
"""The exec group's subsystem, below ``tools/``: running processes, and containing them."""
ABOVE_SUBSYSTEMS = (
    "tools",
    "workspace",
    "registry",
    "schemas",
    "offload",
    "approval",
    "audit",
    "audit_reader",
    "server",
    "transports",
    "stdio",
    "cli",
    "__main__",
)
"""What ``processes/`` and ``sandbox/`` may not import (``results.py``, a leaf of value types,
they may: the kept outputs are served as its resource pages)."""
BELOW_SUBSYSTEMS = (
    "files",
    "search",
    "parsers",
    "policy",
    "mime",
    "config",
    "errors",
    "jsonrpc",
    "compat",
    "_version",
)
"""What may not import ``processes/`` or ``sandbox/``."""


def _module_name(path: Path) -> str:
    parts = path.relative_to(SOURCE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def _modules() -> dict[str, Path]:
    return {_module_name(path): path for path in SOURCE.rglob("*.py")}


def _imported(name: str, path: Path) -> Iterator[str]:
    """Every module ``name`` imports, as written (absolute; relative imports resolved)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            yield base
            for alias in node.names:  # `from pkg import module` imports pkg.module
                if f"{base}.{alias.name}" in _modules():
                    yield f"{base}.{alias.name}"


def _ancestors(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:k]) for k in range(1, len(parts))]


@cache
def _graph() -> dict[str, set[str]]:
    """Each package module → the package modules importing it runs: the ones it names and their
    parent packages, except its own parents (always initialised before it)."""
    graph: dict[str, set[str]] = {}
    for name, path in _modules().items():
        own = set(_ancestors(name))
        targets: set[str] = set()
        for imported in _imported(name, path):
            for candidate in (*_ancestors(imported), imported):
                if candidate in _modules() and candidate not in own and candidate != name:
                    targets.add(candidate)
        graph[name] = targets
    return graph


def _within(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def test_no_tool_group_imports_another() -> None:
    crossings = [
        f"{name} imports {target}"
        for name, targets in _graph().items()
        for group in GROUPS
        if _within(name, f"{PACKAGE}.tools.{group}")
        for target in targets
        for other in GROUPS
        if other != group and _within(target, f"{PACKAGE}.tools.{other}")
    ]
    assert crossings == []


def test_nothing_below_tools_imports_tools() -> None:
    upward = [
        f"{name} imports {target}"
        for name, targets in _graph().items()
        if not _within(name, f"{PACKAGE}.tools") and not any(_within(name, above) for above in ABOVE_TOOLS)
        for target in targets
        if _within(target, f"{PACKAGE}.tools")
    ]
    assert upward == []


def test_only_the_server_and_the_transports_import_the_mcp_sdk() -> None:
    importers = {
        name.removesuffix("." + name.split(".")[2]) if name.startswith(f"{PACKAGE}.server.") else name
        for name, path in _modules().items()
        if any(_within(imported, "mcp") for imported in _imported(name, path))
    }
    assert importers == MCP_IMPORTERS


def test_the_import_graph_has_no_cycle() -> None:
    graph = _graph()
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    cycles: list[list[str]] = []

    def visit(name: str, path: list[str]) -> None:
        state[name] = 1
        for target in sorted(graph[name]):
            if state.get(target) == 1:
                cycles.append([*path[path.index(target) :], target])
            elif target not in state:
                visit(target, [*path, target])
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    assert cycles == []


def test_every_tool_is_built_by_the_module_of_its_name_in_its_group(tmp_path: Path) -> None:
    from mcp_localtools.tools import GROUPS as TOOL_GROUPS
    from mcp_localtools.workspace import Workspace
    from tests.helpers import config_for

    workspace = Workspace.from_config(config_for(tmp_path))
    for group in TOOL_GROUPS:
        for module in group.MODULES:
            spec = module.spec(workspace)
            assert module.__name__ == f"{group.__name__}.{spec.name}"
            assert group.__name__.endswith(f".tools.{spec.group}")
    listed = {module.__name__ for group in TOOL_GROUPS for module in group.MODULES}
    public = {
        name
        for name in _modules()
        if name.count(".") == 3
        and name.startswith(f"{PACKAGE}.tools.")
        and not name.rpartition(".")[2].startswith("_")
    }
    assert listed == public, "a public module in a group is a tool, listed in the group's MODULES"


def test_the_exec_subsystem_imports_nothing_above_it_and_nothing_below_imports_it() -> None:
    def top(name: str) -> str:
        return name.removeprefix(f"{PACKAGE}.").split(".")[0] if name != PACKAGE else ""

    crossings = [
        f"{name} imports {target}"
        for name, targets in _graph().items()
        for target in targets
        if (top(name) in SUBSYSTEMS and top(target) in ABOVE_SUBSYSTEMS)
        or (top(name) in BELOW_SUBSYSTEMS and top(target) in SUBSYSTEMS)
    ]
    assert crossings == []


def test_processes_run_what_they_are_given_and_never_import_the_sandbox() -> None:
    # The tools wrap a command in the sandbox (``ExecGroup.contain``) and hand processes/ the argv.
    crossings = [
        f"{name} imports {target}"
        for name, targets in _graph().items()
        if _within(name, f"{PACKAGE}.processes")
        for target in targets
        if _within(target, f"{PACKAGE}.sandbox")
    ]
    assert crossings == []
