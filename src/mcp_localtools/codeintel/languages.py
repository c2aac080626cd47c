"""Which grammar reads which file, and the tags queries that find its definitions and references.

Grammars come from the per-language ``tree-sitter-<lang>`` wheels (each carries its compiled
parser; nothing is downloaded at run time). The tags queries are the grammar packages' own
``queries/tags.scm`` (MIT, read from the installed distribution, not copied), TypeScript's
together with JavaScript's (its package extends the JavaScript grammar), plus a supplement of
ours in ``codeintel/queries/<language>.scm`` for what a grammar's file lacks (Bash ships none;
C and C++ have no references; Java, C# and TypeScript lack enums, records, type aliases).

Captures follow the tags convention (tree-sitter's code navigation): ``@name`` the identifier,
``@definition.<kind>`` or ``@reference.<kind>`` the whole node.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.resources
import logging
import posixpath
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import tree_sitter

__all__ = ["LANGUAGES", "TEXT_EXTENSIONS", "Grammar", "Grammars", "LanguageInfo", "language_of"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class LanguageInfo:
    """One language the code tools parse.

    Attributes:
        name: our name for it (``python``, ``tsx``).
        module: the grammar's Python module (``tree_sitter_python``).
        function: the module's function returning the language pointer.
        distribution: the wheel that holds the module and its ``queries/tags.scm``.
        extensions: file name suffixes, lower case, with the dot.
        filenames: whole file names (``Rakefile``).
        extra_tags: other distributions whose ``tags.scm`` applies too (TypeScript: JavaScript's).
    """

    name: str
    module: str
    function: str
    distribution: str
    extensions: tuple[str, ...]
    filenames: tuple[str, ...] = ()
    extra_tags: tuple[str, ...] = ()


LANGUAGES: tuple[LanguageInfo, ...] = (
    LanguageInfo("python", "tree_sitter_python", "language", "tree-sitter-python", (".py", ".pyi", ".pyw")),
    LanguageInfo(
        "javascript", "tree_sitter_javascript", "language", "tree-sitter-javascript",
        (".js", ".mjs", ".cjs", ".jsx"),
    ),
    LanguageInfo(
        "typescript", "tree_sitter_typescript", "language_typescript", "tree-sitter-typescript",
        (".ts", ".mts", ".cts"), extra_tags=("tree-sitter-javascript",),
    ),
    LanguageInfo(
        "tsx", "tree_sitter_typescript", "language_tsx", "tree-sitter-typescript", (".tsx",),
        extra_tags=("tree-sitter-javascript",),
    ),
    LanguageInfo("go", "tree_sitter_go", "language", "tree-sitter-go", (".go",)),
    LanguageInfo("rust", "tree_sitter_rust", "language", "tree-sitter-rust", (".rs",)),
    LanguageInfo("java", "tree_sitter_java", "language", "tree-sitter-java", (".java",)),
    LanguageInfo("c", "tree_sitter_c", "language", "tree-sitter-c", (".c", ".h")),
    LanguageInfo(
        "cpp", "tree_sitter_cpp", "language", "tree-sitter-cpp",
        (".cc", ".cpp", ".cxx", ".c++", ".hpp", ".hh", ".hxx", ".h++", ".ipp"),
    ),
    LanguageInfo("csharp", "tree_sitter_c_sharp", "language", "tree-sitter-c-sharp", (".cs",)),
    LanguageInfo(
        "ruby", "tree_sitter_ruby", "language", "tree-sitter-ruby", (".rb", ".rake", ".gemspec"),
        filenames=("Rakefile", "Gemfile"),
    ),
    LanguageInfo("php", "tree_sitter_php", "language_php", "tree-sitter-php", (".php",)),
    LanguageInfo("bash", "tree_sitter_bash", "language", "tree-sitter-bash", (".sh", ".bash")),
)  # fmt: skip
"""The parsed languages."""

TEXT_EXTENSIONS = frozenset(
    ".md .markdown .rst .txt .adoc .toml .yaml .yml .ini .cfg .conf .json .xml .html .htm .css .scss .sql "
    ".kt .kts .swift .scala .lua .pl .pm .r .jl .dart .ex .exs .erl .hs .ml .clj .vue .svelte .zig .nim "
    ".proto .graphql .tf .gradle .cmake .mk .dockerfile .zsh .fish .ps1 .bat".split()
)
"""Text the index cuts into line windows (no grammar, still searchable by meaning)."""

_BY_EXTENSION = {ext: info for info in LANGUAGES for ext in info.extensions}
_BY_NAME = {name: info for info in LANGUAGES for name in info.filenames}


def language_of(path: str) -> LanguageInfo | None:
    """The language of a file by its name (``a/b.py`` → python), or None when no grammar reads it."""
    base = posixpath.basename(path)
    if base in _BY_NAME:
        return _BY_NAME[base]
    return _BY_EXTENSION.get(posixpath.splitext(base)[1].lower())


def _tags_text(distribution: str) -> str:
    """The ``queries/tags.scm`` a grammar distribution ships, or ``""``."""
    try:
        files = importlib.metadata.files(distribution) or []
    except importlib.metadata.PackageNotFoundError:
        return ""
    for file in files:
        if str(file).replace("\\", "/").endswith("queries/tags.scm"):
            try:
                return file.read_text(encoding="utf-8")
            except OSError:
                return ""
    return ""


_LOCALS = {"tsx": "typescript"}
"""Languages whose locals and imports queries are another's (``queries/<name>.locals.scm``)."""


def _supplement(name: str) -> str:
    resource = importlib.resources.files(__package__).joinpath("queries", f"{name}.scm")
    return resource.read_text(encoding="utf-8") if resource.is_file() else ""


@dataclass(frozen=True, slots=True)
class Grammar:
    """A loaded language: its tree-sitter ``Language`` and compiled tags queries.

    Attributes:
        info: the language.
        language: the ``tree_sitter.Language``.
        queries: the compiled tags queries (the grammar's own, then ours), each usable alone.
        definition_queries: the same with only their definition patterns (an outline needs no
            references, and skipping them halves the query time).
        imports: the query of what a file imports (``queries/<name>.imports.scm``), if any.
        locals: the query of the names a scope binds (``queries/<name>.locals.scm``), if any.
        analysis: what a file's analysis runs, as (query, first imports pattern, first locals
            pattern): one query of the tags, imports and locals patterns together (a query's
            cost is mostly its walk of the tree: one walk, not three), or each apart when the
            whole does not compile.
    """

    info: LanguageInfo
    language: tree_sitter.Language
    queries: tuple[tree_sitter.Query, ...]
    definition_queries: tuple[tree_sitter.Query, ...]
    imports: tree_sitter.Query | None = None
    locals: tree_sitter.Query | None = None
    analysis: tuple[tuple[tree_sitter.Query, int, int], ...] = ()

    def parser(self) -> tree_sitter.Parser:
        """A new parser for this language (a parser is not shared between threads)."""
        import tree_sitter

        return tree_sitter.Parser(self.language)


class Grammars:
    """Loads grammars on first use and keeps them (one instance per code index).

    Thread-safe: concurrent first uses load once.
    """

    def __init__(self) -> None:
        self._loaded: dict[str, Grammar | None] = {}
        self._lock = threading.Lock()

    def get(self, info: LanguageInfo) -> Grammar | None:
        """The loaded grammar of ``info``, or None when its wheel is missing or unusable (logged once)."""
        with self._lock:
            if info.name not in self._loaded:
                self._loaded[info.name] = self._load(info)
            return self._loaded[info.name]

    @staticmethod
    def _load(info: LanguageInfo) -> Grammar | None:
        import tree_sitter

        try:
            module: Any = importlib.import_module(info.module)
            language = tree_sitter.Language(getattr(module, info.function)())
        except (ImportError, AttributeError, ValueError, TypeError) as exc:
            logger.warning("no grammar for %s (%s): %s", info.name, info.distribution, exc)
            return None
        ours = [info.name, *(["javascript"] if "tree-sitter-javascript" in info.extra_tags else [])]
        sources = [_tags_text(info.distribution), *map(_tags_text, info.extra_tags), *map(_supplement, ours)]
        usable: list[str] = []
        for source in sources:
            if not source.strip():
                continue
            try:
                tree_sitter.Query(language, source)
                usable.append(source)
            except (tree_sitter.QueryError, ValueError) as exc:  # a grammar version the query does not fit
                logger.warning("a tags query of %s does not compile: %s", info.name, exc)
        # One query of all the patterns: a query costs a walk of the tree, whatever its patterns.
        whole = "\n".join(usable)
        queries = [tree_sitter.Query(language, whole)] if usable else []
        definitions = [_definitions_only(tree_sitter.Query(language, whole), whole)] if usable else []
        # TypeScript's own imports (import m = require) and JavaScript's, which it reads too.
        imports = "\n".join(
            _supplement(f"{name}.imports") for name in dict.fromkeys(_LOCALS.get(n, n) for n in ours)
        )
        imported = _compiled(language, imports, f"the imports query of {info.name}")
        scopes = _supplement(f"{_LOCALS.get(info.name, info.name)}.locals")
        bound = _compiled(language, scopes, f"the locals query of {info.name}")
        parts = [(whole, queries[0] if queries else None), (imports, imported), (scopes, bound)]
        return Grammar(
            info, language, tuple(queries), tuple(definitions), imported, bound, _together(language, parts)
        )


_NEVER = 1 << 30
"""A pattern index no query reaches."""


def _together(
    language: tree_sitter.Language, parts: list[tuple[str, tree_sitter.Query | None]]
) -> tuple[tuple[tree_sitter.Query, int, int], ...]:
    """``Grammar.analysis`` of the (text, compiled query or None) of the tags, imports and locals
    queries: one query of the three when it compiles with their patterns in that order, else
    each apart."""
    import tree_sitter

    kept = [(text, query) for text, query in parts if query is not None]
    counts = [query.pattern_count if query is not None else 0 for _, query in parts]
    if len(kept) <= 1:  # at most one query: it already is the whole, compiled once
        return tuple((query, counts[0], counts[0] + counts[1]) for _, query in kept if query is not None)
    try:
        whole = tree_sitter.Query(language, "\n".join(text for text, _ in kept))
        if whole.pattern_count == sum(counts):
            return ((whole, counts[0], counts[0] + counts[1]),)
    except (tree_sitter.QueryError, ValueError) as exc:
        logger.warning("the queries of a grammar do not compile together (%s): each runs apart", exc)
    return _apart(*(query for _, query in parts))


def _apart(
    tags: tree_sitter.Query | None, imports: tree_sitter.Query | None, scopes: tree_sitter.Query | None
) -> tuple[tuple[tree_sitter.Query, int, int], ...]:
    """``Grammar.analysis`` of the tags, imports and locals queries run each apart (when they do
    not compile together): each with the pattern indexes that route all its matches to its part
    (a tags pattern's index is below any first imports pattern; an imports query's from 0)."""
    apart = [(tags, _NEVER, _NEVER), (imports, 0, _NEVER), (scopes, 0, 0)]
    return tuple((query, first, second) for query, first, second in apart if query is not None)


def _compiled(language: tree_sitter.Language, source: str, what: str) -> tree_sitter.Query | None:
    """``source`` compiled for ``language``; None when empty or when it does not compile (logged)."""
    import tree_sitter

    if not source.strip():
        return None
    try:
        return tree_sitter.Query(language, source)
    except (tree_sitter.QueryError, ValueError) as exc:
        logger.warning("%s does not compile: %s", what, exc)
        return None


def _definitions_only(query: tree_sitter.Query, source: str) -> tree_sitter.Query:
    """``query`` (compiled from ``source``) with every pattern that captures no definition disabled."""
    encoded = source.encode("utf-8")
    for index in range(query.pattern_count):
        text = encoded[query.start_byte_for_pattern(index) : query.end_byte_for_pattern(index)]
        if b"@definition." not in text:
            query.disable_pattern(index)
    return query
