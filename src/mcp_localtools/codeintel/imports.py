"""What a file imports, and which file a use of a name resolves to through them.

``extract_imports`` reads a file's imports with its grammar's query
(``queries/<language>.imports.scm``: Python's ``from m import n as a``; JavaScript's and
TypeScript's ``import {n as a} from './m'``, ``import a from './m'``, ``const a = require('./m')``,
``const {n: a} = require('./m')``, TypeScript's ``import a = require('./m')``; re-exports:
JavaScript's ``export {n as a} from './m'``, ``export * from './m'`` and ``export * as ns from
'./m'``, Python's ``from m import *``), and what a CommonJS module exports (``module.exports =
{n}``, ``module.exports.n =``, ``exports.n =``: ``Import.module`` ``EXPORTS``).
``module_candidates`` turns an import's module into the indexed paths it may be (a relative module
against the importing file; an absolute Python module by its path's tail; a JavaScript package:
none). ``Resolver`` says which file a use resolves to: the file that uses it when that file defines
the name, else the file its import names, followed through re-exports (``from .api import get`` or
``from .api import *`` in a package's ``__init__.py``, ``export {get} from './api'`` or ``export *
from './api'`` in an ``index.ts``; ``ns.get()`` of an ``export * as ns from './api'``) for a few
hops; a use qualified with an imported module (``m.f()`` after ``import m``, ``from . import m``,
``require``, ``import * as m``; ``Reference.qualifier``) resolves in that module, and so does a
member of a default import (``import api from './api'``, ``api.get()``) when that module is CommonJS
and exports the name (its ``module.exports`` is its default export). A CommonJS module gives a
requiring or importing file only the names it exports: ``require('./m').f`` of an ``m`` that keeps
its ``f`` to itself does not resolve to it; ``const m = require('./m')`` is the module itself
(``module.exports = m``, whatever properties it sets), and a file with ``export`` statements is an
ES module whose names are reached whatever CommonJS properties it also sets. None when the name
comes from nowhere it can follow (a method of an object, a global, a package outside the index): a
possible caller, not a known one.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import tree_sitter

__all__ = [
    "DEFAULT",
    "ESM",
    "EXPORTS",
    "STAR",
    "Import",
    "Resolver",
    "extract_imports",
    "is_member",
    "module_candidates",
    "qualifier",
    "resolve_uses",
]

_JS_SUFFIXES = (
    "",
    ".js",
    ".mjs",
    ".cjs",
    ".jsx",
    ".ts",
    ".tsx",
    ".mts",
    "/index.js",
    "/index.ts",
    "/index.tsx",
)
_HOPS = 3
"""Re-exports followed at most."""
_STARRED = 32
"""Files a name is looked for in through ``*`` re-exports at most, for one use."""


DEFAULT = "@default"
"""``Import.name`` of a JavaScript or TypeScript default import (no name in any language)."""
STAR = "*"
"""``Import.name`` and ``local`` of ``from m import *`` and ``export * from './m'``: whatever
name the module has."""
EXPORTS = "@exports"
"""``Import.module`` of a name a CommonJS module exports (``module.exports = {n: a}``: ``local``
``a``, ``name`` ``n``), not an import (no module in any language)."""
ESM = "@esm"
"""``Import.name`` (``module`` ``EXPORTS``) that says the file has ``export`` statements: an ES
module, whose names are what importing it reaches, whatever CommonJS properties it also sets."""


@dataclass(frozen=True, slots=True)
class Import:
    """One imported name: the name it has in the importing file (``local``), its name in the
    module (``name``: ``""`` for the module itself, ``DEFAULT`` for its default export) and the
    module as written (``module``: ``.api``, ``./layer``); or, with ``module`` ``EXPORTS``, a
    name the file exports as a CommonJS module (``name``) and the name it has in the file
    (``local``)."""

    local: str
    name: str
    module: str


def extract_imports(
    matches: Iterable[dict[str, list[tree_sitter.Node]]], source: bytes
) -> tuple[Import, ...]:
    """The imports of a parsed file ``source`` from the matches of its grammar's imports query
    (``Grammar.imports``: each match's captures by name)."""
    found: list[Import] = []
    for captures in matches:
        if "esm" in captures:
            found.append(Import(ESM, ESM, EXPORTS))
            continue
        if exported := _first(captures.get("export"), source):
            found.append(Import(_first(captures.get("local"), source) or exported, exported, EXPORTS))
            continue
        module = captures.get("module")
        if not module:
            continue
        if "star" in captures:
            found.append(Import(STAR, STAR, _first(module, source)))
            continue
        imported = DEFAULT if "default" in captures else _first(captures.get("name"), source)
        written = _first(module, source)
        local = _first(captures.get("local"), source) or imported.rpartition(".")[2]
        if not local and "name" not in captures:  # import m, import a.b: used as written
            local = written
        if local:
            found.append(Import(local, imported, written))
    return tuple(dict.fromkeys(found))


def _first(nodes: Sequence[tree_sitter.Node] | None, source: bytes) -> str:
    return source[nodes[0].start_byte : nodes[0].end_byte].decode("utf-8", "replace") if nodes else ""


def module_candidates(module: str, importer: str, language: str) -> tuple[list[str], list[str]]:
    """``(exact paths, path tails)`` the module of an import in the file ``importer`` may be:
    exact paths relative to the indexed directory, and tails (``/a/b.py``) an absolute Python
    module may end with (a ``src/`` layout). A one-word module's file is not guessed by its tail:
    ``import json`` is the standard library's, not some ``serializers/json.py``; a package of that
    name (``src/m/__init__.py``) is."""
    if language == "python":
        dots = len(module) - len(module.lstrip("."))
        parts = module[dots:].replace(".", "/")
        if dots:
            base = posixpath.dirname(importer)
            for _ in range(dots - 1):
                base = posixpath.dirname(base)
            stem = posixpath.join(base, parts) if parts else base
            return [f"{stem}.py", f"{stem}/__init__.py"] if parts else [f"{stem}/__init__.py"], []
        tails = [f"/{parts}.py", f"/{parts}/__init__.py"] if "/" in parts else [f"/{parts}/__init__.py"]
        return [f"{parts}.py", f"{parts}/__init__.py"], tails
    if not module.startswith("."):
        return [], []  # a package: outside the index, or found by a resolution we do not follow
    stem = posixpath.normpath(posixpath.join(posixpath.dirname(importer), module))
    return [stem + suffix for suffix in _JS_SUFFIXES], []


class Resolver:
    """Which file a use of a name resolves to (see the module docstring), over one index's
    tables, the imports of the files it read cached (for one query).

    Args:
        select: runs a read-only SQL query on the index (``Store.select``): rows as tuples.
    """

    def __init__(self, select: Callable[[str, Sequence[object]], list[tuple[Any, ...]]]) -> None:
        self._select = select
        self._imports: dict[str, list[Import]] = {}
        self._languages: dict[str, str] = {}
        self._found: dict[tuple[tuple[str, ...], tuple[str, ...]], list[str]] = {}

    def prime(self, paths: Iterable[str]) -> None:
        """Load the imports of ``paths`` at once (one query for a result's uses)."""
        missing = sorted(set(paths) - self._imports.keys())
        if not missing:
            return
        for path in missing:
            self._imports[path] = []
        marks = ",".join("?" * len(missing))
        for row in self._select(
            f"SELECT f.path, f.language, i.local, i.name, i.module FROM files f LEFT JOIN imports i "  # noqa: S608
            f"ON i.file_id = f.id WHERE f.path IN ({marks})",
            missing,
        ):
            self._languages[row[0]] = row[1]
            if row[2] is not None:
                self._imports[row[0]].append(Import(*row[2:]))

    def _defines(self, path: str, name: str) -> bool:
        return bool(
            self._select(
                "SELECT 1 FROM symbols s JOIN files f ON f.id = s.file_id "
                "WHERE f.path = ? AND s.name = ? LIMIT 1",
                (path, name),
            )
        )

    def _existing(self, exact: Sequence[str], tails: Sequence[str]) -> list[str]:
        """Those of ``exact`` that are indexed files, in order, then files ending with a tail
        (asked once per query)."""
        key = (tuple(exact), tuple(tails))
        if key not in self._found:
            self._found[key] = self._look_up(exact, tails)
        return self._found[key]

    def _look_up(self, exact: Sequence[str], tails: Sequence[str]) -> list[str]:
        marks = ",".join("?" * len(exact)) or "NULL"
        found = {row[0] for row in self._select(f"SELECT path FROM files WHERE path IN ({marks})", exact)}  # noqa: S608
        out = [path for path in exact if path in found]
        for tail in tails if not out else ():
            escaped = tail.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            rows = self._select(
                "SELECT path FROM files WHERE path LIKE ? ESCAPE '\\' ORDER BY length(path), path LIMIT 1",
                ("%" + escaped,),
            )
            out.extend(row[0] for row in rows)
        return out

    def resolve(self, path: str, name: str) -> str | None:
        """The indexed file whose definition ``name`` used in the file at ``path`` resolves to,
        or None when it cannot be followed."""
        return self._resolve(path, name, _HOPS, set())

    def _resolve(self, path: str, name: str, hops: int, seen: set[tuple[str, str]]) -> str | None:
        """``resolve`` with ``hops`` re-exports left to follow, ``seen`` the files and names looked
        at already (for this use)."""
        if (path, name) in seen or len(seen) >= _STARRED:
            return None
        seen.add((path, name))
        if self._defines(path, name):
            return path
        if hops <= 0:
            return None
        self.prime([path])
        language = self._languages.get(path, "")
        imported = [item for item in self._imports[path] if item.module != EXPORTS]
        step = next((item for item in imported if item.local == name), None)
        if step is not None:
            targets = self._existing(*module_candidates(step.module, path, language))
            # A default export is taken to be the definition of the local name (``import Layer
            # from './layer'``: its ``Layer``), the usual way; a member of it is not followed.
            following = ("" if step.name == DEFAULT else step.name.rpartition(".")[2]) or name
            if targets and step.name not in (DEFAULT, ""):  # the module itself: its definition
                following = self._reached(targets[0], following) or ""
            return self._resolve(targets[0], following, hops - 1, seen) if targets and following else None
        for star in (item for item in imported if item.name == STAR):  # any name of the module
            targets = self._existing(*module_candidates(star.module, path, language))
            if targets and (found := self._resolve(targets[0], name, hops - 1, seen)):
                return found
        return None

    def resolve_qualified(self, path: str, qualifier: str, name: str) -> str | None:
        """The indexed file whose definition ``name`` resolves to when the file at ``path`` uses
        it as ``qualifier.name`` (``m.f()``, ``pkg.mod.f()``), ``qualifier`` being the name of
        an imported module there; None when it is not one, or cannot be followed."""
        self.prime([path])
        language = self._languages.get(path, "")
        for item in self._imports[path]:
            if item.local != qualifier or item.module == EXPORTS:
                continue
            if item.name == DEFAULT:  # the default export: a CommonJS module's is its exports
                target = next(iter(self._existing(*module_candidates(item.module, path, language))), None)
                local = self._exported(target, name) if target is not None else None
                return self.resolve(target, local) if target is not None and local else None
            if not item.name:  # the module itself
                module = item.module
            elif language == "python":  # from pkg import mod: the name may be a module
                module = item.module + ("" if item.module.endswith(".") else ".") + item.name
            else:  # import {ns} from './index' of an export * as ns from './m' there
                found = next(iter(self._existing(*module_candidates(item.module, path, language))), None)
                namespace = self._namespace(found, item.name, _HOPS) if found is not None else None
                local = self._reached(namespace, name) if namespace is not None else None
                if namespace is not None:
                    return self.resolve(namespace, local) if local else None
                continue
            targets = self._existing(*module_candidates(module, path, language))
            if targets:
                local = self._reached(targets[0], name)
                return self.resolve(targets[0], local) if local else None
        return None

    def _namespace(self, path: str, local: str, hops: int) -> str | None:
        """The file of the module that ``local`` names in the JavaScript or TypeScript file at
        ``path`` when it names one (``export * as ns from './m'``, ``import * as ns``), followed
        through ``hops`` named imports or re-exports of it; None when it names no module."""
        self.prime([path])
        language = self._languages.get(path, "")
        for item in self._imports[path]:
            if item.local != local or item.module == EXPORTS or item.name == DEFAULT:
                continue
            found = next(iter(self._existing(*module_candidates(item.module, path, language))), None)
            if found is None or not item.name:
                return found
            return self._namespace(found, item.name, hops - 1) if hops > 0 else None
        return None

    def _reached(self, path: str, name: str) -> str | None:
        """The name in the file at ``path`` of what a file that imports or requires it reaches
        as ``name``: ``name`` itself, but in a CommonJS module (one that exports names with
        ``module.exports``, and no ``export`` statement), which gives only what it exports: the
        name it exports as ``name``, or None when it exports none (a ``get`` it keeps to itself is
        not the requirer's)."""
        self.prime([path])
        exported = [item for item in self._imports[path] if item.module == EXPORTS]
        if not exported or any(item.name == ESM for item in exported):
            return name
        return next((item.local for item in exported if item.name == name), None)

    def _exported(self, path: str, name: str) -> str | None:
        """The name in the file at ``path`` of what it exports as ``name`` as a CommonJS module,
        or None when it exports no such name that way."""
        self.prime([path])
        return next(
            (item.local for item in self._imports[path] if item.module == EXPORTS and item.name == name), None
        )


def resolve_uses(
    resolver: Resolver, uses: Iterable[tuple[str, str, str]], max_files: int
) -> dict[tuple[str, str, str], str | None]:
    """The file each use ``(path, name, qualifier)`` resolves to (None: not followed): in the
    imported module it is qualified with (``Reference.qualifier``: ``m`` of ``m.f()``), else by
    its name through the file's scope and imports (an object's method: the file's own definition
    of the name, if any). Uses in more than ``max_files`` files: the first ``max_files`` files'
    are followed, the rest not."""
    uses = list(dict.fromkeys(uses))
    followed = set(list(dict.fromkeys(path for path, _, _ in uses))[:max_files])
    resolver.prime(followed)
    by_name: dict[tuple[str, str], str | None] = {}
    out: dict[tuple[str, str, str], str | None] = {}
    for path, name, qualifier in uses:
        if path not in followed:
            out[path, name, qualifier] = None
            continue
        target = resolver.resolve_qualified(path, qualifier, name) if qualifier else None
        if target is None:
            if (path, name) not in by_name:
                by_name[path, name] = resolver.resolve(path, name)
            target = by_name[path, name]
        out[path, name, qualifier] = target
    return out


_MEMBER = {"attribute": "attribute", "member_expression": "property"}
"""Node types of ``object.name`` (Python; JavaScript and TypeScript) → the field of the name."""
_DOTTED = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*")


def qualifier(name: tree_sitter.Node, source: bytes) -> str:
    """What the used ``name`` (a reference's name node, in the file ``source``) is qualified
    with: the dotted names before it (``a.b`` of ``a.b.name``) as written without spaces, or
    ``""`` (bare, or after anything but names: a call's result, an index)."""
    if not is_member(name):
        return ""
    assert name.parent is not None, "a member has a parent"
    owner = name.parent.child_by_field_name("object")
    if owner is None:
        return ""
    text = "".join(source[owner.start_byte : owner.end_byte].decode("utf-8", "replace").split())
    return text if len(text) <= 200 and _DOTTED.fullmatch(text) else ""


def is_member(name: tree_sitter.Node) -> bool:
    """Whether the name node ``name`` is the member of an ``object.name`` (Python's attribute,
    JavaScript's and TypeScript's member expression), not a bare name."""
    parent = name.parent
    field = _MEMBER.get(parent.type) if parent is not None else None
    if parent is None or field is None:
        return False
    member = parent.child_by_field_name(field)
    return member is not None and member.id == name.id
