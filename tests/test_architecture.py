"""The architecture's rules (``docs/ARCHITECTURE.md``), as tests that fail when a rule is broken.

- The layers: the table is the code block under "The layers" in ``docs/ARCHITECTURE.md`` (one row
  per line, top to bottom); a module may import only modules of the rows below its own, or of its
  own package. Every module is in a row.
- No tool group imports another (the groups are ``tools.GROUPS``); every tool is the module of its
  name in its group; only the MCP edge imports the MCP SDK; the import graph has no cycle.
- Every ``ToolError`` code is in the doc's error table.
- Every ``except Exception`` (or ``BaseException``, or bare ``except``) that does not re-raise is in
  ``BROAD_EXCEPTS``, with the reason it may swallow anything.
- No module passes ``MAX_MODULE_LINES`` unless ``LARGE_MODULES`` names it (with a reason), and no
  module named there is under the budget any more.
- No module-level mutable state: no module-level name is rebound (``global``) or changed in place
  (item assignment, ``append``, ``update``, ...) by a function, and no module creates a stateful
  object (a counter, a lock, a weak map) at import. A pure function may be memoised
  (``functools.cache``).
- ``import mcp_localtools`` and building a registry import no heavy library (``HEAVY``).

The import graph is read from the source with ``ast`` (every import, at any depth, including
``TYPE_CHECKING`` blocks), so a rule is broken as soon as the import is written.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

import mcp_localtools
from mcp_localtools import errors

PACKAGE = "mcp_localtools"
SOURCE = Path(mcp_localtools.__file__).resolve().parent
DOC = Path(__file__).resolve().parent.parent / "docs" / "ARCHITECTURE.md"

MCP_EDGE = {"server", "transports", "stdio", "_sdk"}
"""The top-level modules and packages that may import the MCP SDK (``mcp``, ``mcp_types``)."""

MAX_MODULE_LINES = 420
MAX_ROW_WORDS = 30
"""The most words a row of ARCHITECTURE's module table says about a module."""
LARGE_MODULES: dict[str, str] = {
    "mcp_localtools.parsers.worker": "the confined worker runs standalone (python worker.py): one file",
    "mcp_localtools.policy.sh_lexer": "one pass over a command's characters, its states read together",
}
"""Modules allowed over ``MAX_MODULE_LINES``, each with the reason (shrink this list, never grow it
without one)."""

BROAD_EXCEPTS: dict[str, str] = {
    "mcp_localtools.registry:Registry._invoke": "an unexpected tool exception becomes internal_error",
    "mcp_localtools.registry:_each": "a failing session start or end callback must not stop the others",
    "mcp_localtools.deferred:DeferredRegistry._tell": "the start-up cache's bookkeeping must not fail a call",
    "mcp_localtools.parsers.worker:main": "the worker's boundary: decoders raise anything",
    "mcp_localtools.stdio:_Wire.send": "a reply that cannot be encoded is logged and answered with an error",
    "mcp_localtools.sandbox.bwrap:find_bwrap": "a bubblewrap wheel without its binary means no bwrap here",
    "mcp_localtools.sandbox.command:CommandSandbox._choose": "a failed probe refuses commands",
    "mcp_localtools.changes:ChangeFeed.notify": "a failed listener must not fail the call",
    "mcp_localtools.codeintel.indexes:CodeIndexes._rescan": "a failed build is kept for the answer",
    "mcp_localtools.codeintel.index:CodeIndex._rebuild_in_background": "a graph rebuilt in its own thread: "
    "a failure is logged and the last graph kept",
    "mcp_localtools.codeintel.index:CodeIndex.warm": "warming is an optimisation: a failure is logged",
    "mcp_localtools.codeintel.idle:IdleRelease._run": "the idle thread outlives a failed release (logged)",
    "mcp_localtools.parsers.worker:_why_no_text": "damaged content: the extractor said all it could",
    "mcp_localtools.sandbox.seccomp:unix_socket_filter": "an ABI this libseccomp does not know is skipped",
}
"""``module:function`` → why it catches every exception without re-raising."""

HEAVY = (
    "re2",
    "rapidfuzz",
    "PIL",
    "httpx",
    "html2text",
    "wcmatch",
    "tree_sitter",
    "wordllama",
    "bm25s",
    "tantivy",
    "numpy",
    "pypdf",
)
"""Libraries that must be imported on first use only, not by ``import mcp_localtools`` or by
building a registry (tree-sitter's grammars are ``tree_sitter_*``)."""

MODULE_STATE: dict[str, str] = {
    "mcp_localtools.sandbox.launch": "the cap on live sandboxes holds for the whole process",
    "mcp_localtools.sandbox.cgroups": "a process has one cgroup group (total_processes); warned once",
}
"""Modules allowed module-level state for now, each with the reason (shrink this list)."""

_MUTATORS = {
    "append",
    "appendleft",
    "extend",
    "insert",
    "add",
    "update",
    "pop",
    "popitem",
    "setdefault",
    "clear",
    "remove",
    "discard",
    "move_to_end",
}
_STATEFUL = {"count", "Lock", "RLock", "local", "WeakKeyDictionary", "WeakValueDictionary", "WeakSet"}


def _module_name(path: Path) -> str:
    parts = path.relative_to(SOURCE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def _modules() -> dict[str, Path]:
    return {_module_name(path): path for path in SOURCE.rglob("*.py")}


@cache
def _tree(name: str) -> ast.Module:
    return ast.parse(_modules()[name].read_text(encoding="utf-8"))


def _imported(name: str) -> Iterator[str]:
    """Every module ``name`` imports, as written (absolute; relative imports resolved)."""
    path = _modules()[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(_tree(name)):
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
def _graph() -> dict[str, frozenset[str]]:
    """Each package module → the package modules importing it runs: the ones it names and their
    parent packages, except its own parents (always initialised before it)."""
    graph: dict[str, frozenset[str]] = {}
    for name in _modules():
        own = set(_ancestors(name))
        targets = {
            candidate
            for imported in _imported(name)
            for candidate in (*_ancestors(imported), imported)
            if candidate in _modules() and candidate not in own and candidate != name
        }
        graph[name] = frozenset(targets)
    return graph


def _within(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def _unit(name: str) -> str:
    """The top-level module or package a module belongs to (``__init__`` for the package itself)."""
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


# -- The layers ----------------------------------------------------------------------------------

_ROW_NAME = re.compile(r"^([A-Za-z_][\w]*)(\.py|/)$")


@cache
def layers() -> tuple[tuple[str, ...], ...]:
    """The rows of the layers table in ``docs/ARCHITECTURE.md`` (its code block under "## The
    layers"), top to bottom: each row's module and package names (``cli``, ``server``, ...), read
    from the start of the line up to the first word that is not a ``name.py`` or ``name/``."""
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index("## The layers") :]
    block = section[section.index("```") + 3 :]
    block = block[block.index("\n") + 1 : block.index("```")]
    rows = []
    for line in block.splitlines():
        names = []
        for word in line.split():
            match = _ROW_NAME.match(word)
            if match is None:
                break
            names.append(match.group(1))
        if names:
            rows.append(tuple(names))
    return tuple(rows)


def _row_of() -> dict[str, int]:
    return {name: number for number, row in enumerate(layers()) for name in row}


def test_every_module_is_in_a_row_of_the_layers_table() -> None:
    rows = _row_of()
    missing = sorted({_unit(name) for name in _modules()} - set(rows))
    assert missing == [], (
        f"{missing} are in no row of the layers table (docs/ARCHITECTURE.md, 'The layers'): add each to "
        "the row it belongs to (a row may import only the rows below it)"
    )
    twice = [name for name in rows if sum(name in row for row in layers()) > 1]
    assert twice == [], f"{twice} appear in more than one row of the layers table"


def _upward_imports() -> list[str]:
    rows = _row_of()
    found = []
    for name, targets in sorted(_graph().items()):
        for target in sorted(targets):
            here, there = _unit(name), _unit(target)
            if here == there or here not in rows or there not in rows:
                continue
            if rows[there] <= rows[here]:
                found.append(
                    f"{name} imports {target}: {here} (row {rows[here] + 1} of the layers table) may import "
                    f"only rows below it, and {there} is in row {rows[there] + 1}. Move what it needs down, "
                    "or, if the layering changed, move the rows in docs/ARCHITECTURE.md ('The layers') in "
                    "the same commit"
                )
    return found


def test_every_import_points_down_the_layers_table() -> None:
    assert _upward_imports() == []


def test_the_layers_table_has_the_known_shape() -> None:
    rows = _row_of()
    assert rows["cli"] < rows["server"] < rows["transports"] < rows["_sdk"] < rows["tools"]
    assert rows["tools"] < rows["registry"] < rows["spec"] < rows["results"] < rows["errors"]
    assert rows["sandbox"] < rows["processes"], "sandbox/ may use processes/, never the reverse"


def _tool_groups() -> list[str]:
    from mcp_localtools.tools import GROUPS

    return list(GROUPS)


def test_the_tool_groups_are_the_packages_under_tools() -> None:
    packages = {name.split(".")[2] for name in _modules() if name.count(".") >= 2 and _unit(name) == "tools"}
    packages = {name for name in packages if f"{PACKAGE}.tools.{name}" in _modules() and name[0] != "_"}
    assert set(_tool_groups()) == packages, "every package under tools/ is a group listed in tools.GROUPS"


def test_no_tool_group_imports_another() -> None:
    groups = _tool_groups()
    crossings = [
        f"{name} imports {target}: a tool group never imports another; move what both need below tools/"
        for name, targets in _graph().items()
        for group in groups
        if _within(name, f"{PACKAGE}.tools.{group}")
        for target in targets
        for other in groups
        if other != group and _within(target, f"{PACKAGE}.tools.{other}")
    ]
    assert crossings == []


def test_a_tool_author_imports_the_tool_contract_from_spec_only() -> None:
    """``spec.py`` is what a tool is made of; the registry re-exports none of it."""
    import mcp_localtools.registry as registry

    assert sorted(registry.__all__) == ["DEFAULT_CALL_TIMEOUT_SECONDS", "Registry"]
    pattern = re.compile(r"^\s*from mcp_localtools\.registry import ([^\n]+)", re.MULTILINE)
    found = {
        f"{path.relative_to(SOURCE)}: {names}"
        for path in SOURCE.rglob("*.py")
        for names in pattern.findall(path.read_text(encoding="utf-8"))
        if set(re.findall(r"\w+", names)) - {"Registry", "DEFAULT_CALL_TIMEOUT_SECONDS"}
    }
    assert found == set()


def test_only_the_mcp_edge_imports_the_mcp_sdk() -> None:
    importers = sorted(
        name
        for name in _modules()
        if any(_within(imported, "mcp") or _within(imported, "mcp_types") for imported in _imported(name))
        and _unit(name) not in MCP_EDGE
    )
    assert importers == [], f"{importers} import the MCP SDK; only {sorted(MCP_EDGE)} may"


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
    from mcp_localtools.tools import catalog, tool_module
    from mcp_localtools.workspace import Workspace
    from tests.helpers import config_for

    workspace = Workspace.from_config(config_for(tmp_path))
    for group, names in TOOL_GROUPS.items():
        for name in names:
            module = tool_module(group, name)
            spec = module.spec(workspace)
            assert module.__name__ == f"{PACKAGE}.tools.{group}.{spec.name}" and spec.name == name
            assert spec.group == "", f"{spec.name}: its group is its package's name; leave group= out"
    catalogued = {spec.name: spec.group for spec in catalog(workspace).specs}
    assert catalogued["readfile"] == "fs" and catalogued["shellcommand"] == "exec"
    listed = {f"{PACKAGE}.tools.{group}.{name}" for group, names in TOOL_GROUPS.items() for name in names}
    public = {
        name
        for name in _modules()
        if name.count(".") == 3
        and name.startswith(f"{PACKAGE}.tools.")
        and not name.rpartition(".")[2].startswith("_")
    }
    assert listed == public, "a public module in a group is a tool, listed in tools.GROUPS"


# -- The error contract --------------------------------------------------------------------------


def _codes() -> set[str]:
    found: set[str] = set()
    stack: list[type[errors.ToolError]] = [errors.ToolError]
    while stack:
        cls = stack.pop()
        found.add(cls.code)
        stack += cls.__subclasses__()
    return found - {errors.ToolError.code}


def test_every_tool_error_code_is_in_the_error_table_of_the_docs() -> None:
    text = DOC.read_text(encoding="utf-8")
    table = text[text.index("## The error contract") :]
    listed = set(re.findall(r"^\|([^|]*)\|", table, flags=re.MULTILINE))
    documented = {code for cell in listed for code in re.findall(r"`([a-z_]+)`", cell)}
    missing = sorted(_codes() - documented)
    assert missing == [], f"codes {missing} are missing from the error table of docs/ARCHITECTURE.md"


# -- Broad excepts, module sizes, module-level state ---------------------------------------------


def _broad_excepts() -> Iterator[str]:
    """``module:function`` of every handler of ``Exception``/``BaseException`` (or a bare
    ``except``) that does not end by re-raising."""

    def visit(name: str, node: ast.AST, where: list[str]) -> Iterator[str]:
        for child in ast.iter_child_nodes(node):
            inner = where
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                inner = [*where, child.name]
            if isinstance(child, ast.ExceptHandler) and _is_broad(child) and not _reraises(child):
                yield f"{name}:{'.'.join(where) or '<module>'}"
            yield from visit(name, child, inner)

    for name in sorted(_modules()):
        yield from visit(name, _tree(name), [])


def _is_broad(handler: ast.ExceptHandler) -> bool:
    if handler.type is None:
        return True
    caught = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(isinstance(kind, ast.Name) and kind.id in ("Exception", "BaseException") for kind in caught)


def _reraises(handler: ast.ExceptHandler) -> bool:
    return isinstance(handler.body[-1], ast.Raise)


def test_every_broad_except_that_swallows_is_allowed_with_a_reason() -> None:
    found = set(_broad_excepts())
    assert sorted(found - set(BROAD_EXCEPTS)) == [], (
        "a new except Exception that does not re-raise: catch the errors you expect, or add it to "
        "BROAD_EXCEPTS in tests/test_architecture.py with the reason it must swallow anything"
    )
    assert sorted(set(BROAD_EXCEPTS) - found) == [], "BROAD_EXCEPTS names a handler that is gone: drop it"


def test_no_module_is_over_the_size_budget_unless_named() -> None:
    sizes = {name: len(path.read_text(encoding="utf-8").splitlines()) for name, path in _modules().items()}
    over = sorted(f"{name} ({sizes[name]} lines)" for name in sizes if sizes[name] > MAX_MODULE_LINES)
    assert [entry for entry in over if entry.split(" ")[0] not in LARGE_MODULES] == [], (
        f"modules over {MAX_MODULE_LINES} lines: split each by concept (docs/ARCHITECTURE.md, rule 1)"
    )
    shrunk = sorted(name for name in LARGE_MODULES if sizes.get(name, 0) <= MAX_MODULE_LINES)
    assert shrunk == [], f"{shrunk} are within the budget now: drop them from LARGE_MODULES"


def _module_state(name: str) -> Iterator[str]:
    tree = _tree(name)
    names: set[str] = set()
    for node in tree.body:
        targets = (
            node.targets
            if isinstance(node, ast.Assign)
            else [node.target]
            if isinstance(node, ast.AnnAssign)
            else []
        )
        names |= {target.id for target in targets if isinstance(target, ast.Name)}
        value = node.value if isinstance(node, ast.Assign | ast.AnnAssign) else None
        if isinstance(value, ast.Call) and _called(value) in _STATEFUL:
            yield f"{name}:{node.lineno} makes a {_called(value)}() at import"
    for function in ast.walk(tree):
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for inner in ast.walk(function):
            changed = _changes(inner, names)
            if changed is not None:
                line = getattr(inner, "lineno", 0)
                yield f"{name}:{line} {function.name}() changes the module-level {changed}"


def _called(call: ast.Call) -> str:
    func = call.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def _changes(node: ast.AST, names: set[str]) -> str | None:
    """The module-level name ``node`` rebinds or changes in place, if any."""
    if isinstance(node, ast.Global):
        return ", ".join(node.names)
    targets: list[ast.expr] = []
    if isinstance(node, ast.Assign | ast.Delete):
        targets = node.targets
    elif isinstance(node, ast.AugAssign):
        targets = [node.target]
    for target in targets:
        if (
            isinstance(target, ast.Subscript)
            and isinstance(target.value, ast.Name)
            and target.value.id in names
        ):
            return target.value.id
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id in names
        and node.func.attr in _MUTATORS
    ):
        return node.func.value.id
    return None


def test_no_module_keeps_mutable_state_at_module_level() -> None:
    found = [
        entry for name in sorted(_modules()) if name not in MODULE_STATE for entry in _module_state(name)
    ]
    assert found == [], (
        "module-level state (docs/ARCHITECTURE.md, rule 2): keep it in an instance the Workspace or "
        "the server owns, or memoise a pure function with functools.cache"
    )
    stale = [name for name in MODULE_STATE if not list(_module_state(name))]
    assert stale == [], f"{stale} keep no module-level state now: drop them from MODULE_STATE"


# -- Lazy heavy libraries ------------------------------------------------------------------------

_PROBE = """
import json, sys
import mcp_localtools
from mcp_localtools import build_registry, parse_config
build_registry(parse_config({"paths": {"allowed_roots": [sys.argv[1]]}}))
heavy = sys.argv[2].split(",")
print(json.dumps(sorted({m.split(".")[0] for m in list(sys.modules) if any(m == h or m.startswith(h + ".") or
      (h == "tree_sitter" and m.startswith("tree_sitter")) for h in heavy)})))
"""


def test_importing_the_package_and_building_a_registry_loads_no_heavy_library(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-c", _PROBE, str(tmp_path), ",".join(HEAVY)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    loaded = json.loads(result.stdout.strip().splitlines()[-1])
    assert loaded == [], f"{loaded} are imported at start-up: import them on first use (docs/ARCHITECTURE.md)"


@pytest.mark.parametrize("rule", ["excepts", "sizes"])
def test_the_allowlists_name_real_modules(rule: str) -> None:
    names = (
        set(LARGE_MODULES) | set(MODULE_STATE)
        if rule == "sizes"
        else {entry.partition(":")[0] for entry in BROAD_EXCEPTS}
    )
    assert names <= set(_modules())


CHILD_SCRIPTS: dict[str, str] = {
    "mcp_localtools.parsers.worker": "the confined parser worker: a process of its own (python worker.py)",
    "mcp_localtools.processes.supervisor": "runs inside each connection's sandbox, a process of its own",
    "mcp_localtools.sandbox.landlock_exec": "applies Landlock, then execs the command: a process of its own",
}
"""Standalone scripts a server starts as child processes: what they read of their own environment
is their command line's business, not the server's."""

ENVIRONMENT_READS: dict[str, str] = {}
"""Modules outside ``cli/`` allowed to read the environment themselves, each with the reason
(design rule 2: only ``cli/`` reads it; everything else is handed an ``environ`` mapping)."""

_ENVIRONMENT = {"environ", "environb", "getenv", "getenvb"}


def _environment_reads(name: str) -> list[int]:
    """The lines of module ``name`` that touch the process environment (``os.environ``,
    ``os.getenv``, ``from os import environ``)."""
    lines = []
    for node in ast.walk(_tree(name)):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "os"
            and node.attr in _ENVIRONMENT
        ) or (
            isinstance(node, ast.ImportFrom)
            and node.module == "os"
            and any(alias.name in _ENVIRONMENT for alias in node.names)
        ):
            lines.append(node.lineno)
    return lines


def test_only_the_command_line_reads_the_environment() -> None:
    found = {
        name: lines
        for name in _modules()
        if name != f"{PACKAGE}.cli"
        and not name.startswith(f"{PACKAGE}.cli.")
        and name not in CHILD_SCRIPTS
        and name not in ENVIRONMENT_READS
        and (lines := _environment_reads(name))
    }
    assert found == {}, f"only cli/ reads the environment; pass an environ mapping instead: {found}"
    assert set(CHILD_SCRIPTS) | set(ENVIRONMENT_READS) <= set(_modules())
    assert all(_environment_reads(name) for name in ENVIRONMENT_READS), "an allowance no longer needed"


OWN_EXCEPTIONS: dict[str, str] = {
    "mcp_localtools.parsers.worker:Refusal": "the confined worker runs standalone: imports nothing of ours",
}
"""Exception classes defined outside ``errors.py`` (private ``_Name`` ones, which never leave
their module, need no entry), each with the reason."""


def _exception_classes() -> Iterator[str]:
    """``module:Class`` of every public class outside ``errors.py`` whose bases name an error."""
    for name in _modules():
        if name == "mcp_localtools.errors":
            continue
        for node in _tree(name).body:
            if not isinstance(node, ast.ClassDef) or node.name.startswith("_"):
                continue
            bases = [ast.unparse(base) for base in node.bases]
            if any(base.endswith(("Error", "Exception", "Problems", "Violation")) for base in bases):
                yield f"{name}:{node.name}"


def test_every_exception_of_ours_lives_in_errors_py() -> None:
    found = set(_exception_classes())
    assert sorted(found - set(OWN_EXCEPTIONS)) == [], "define the exception in errors.py (the one tree)"
    assert sorted(set(OWN_EXCEPTIONS) - found) == [], "OWN_EXCEPTIONS names a class that is gone: drop it"


def test_the_module_table_has_one_line_per_row() -> None:
    """Each row of ARCHITECTURE's module table says what the module holds in one line; a
    package's detail is its ``__init__`` docstring (issue 39: a map that stays short)."""
    text = DOC.read_text(encoding="utf-8")
    table = text.split("| module | what it holds |", 1)[1].split("\n\n", 1)[0]
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    assert len(rows) > 20, "the module table was not found"
    long = [row.split(" | ", 1)[0] for row in rows if len(row.split(" | ", 1)[1].split()) > MAX_ROW_WORDS]
    assert long == [], f"rows over {MAX_ROW_WORDS} words: move the detail into the module's docstring"
