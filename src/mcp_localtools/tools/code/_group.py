"""What the code tools share: the workspace's code indexes, opening the one a path belongs to,
and how paths and lines are shown."""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from pathlib import Path

from mcp_localtools.codeintel.index import CodeIndex, IndexSettings
from mcp_localtools.codeintel.indexes import CodeIndexes
from mcp_localtools.codeintel.languages import LANGUAGES
from mcp_localtools.errors import ConfigError, NotADirectory, PolicyViolation, ToolError
from mcp_localtools.files.read import read_regular_file
from mcp_localtools.policy.paths import PathPolicy
from mcp_localtools.spec import CallContext, ProgressFn
from mcp_localtools.toolnames import served, served_text
from mcp_localtools.workspace import Workspace

__all__ = [
    "IndexSummary",
    "Scope",
    "build_index",
    "cache_notice",
    "code_indexes",
    "index_settings",
    "open_scope",
    "read_lines",
]


def index_settings(workspace: Workspace) -> IndexSettings:
    """``[index]`` for ``workspace``; the default cache directory comes from the environment
    (``$XDG_CACHE_HOME/mcp-localtools/index``, else ``$HOME/.cache/...``; neither: in memory).

    Raises:
        ConfigError: ``languages`` names a language no grammar reads; ``cache_dir`` lies inside a
            root (a default one that does is moved by ``CodeIndexes``, with a start-up message).
    """
    config = workspace.config.index
    known = {info.name for info in LANGUAGES}
    unknown = sorted(set(config.languages) - known)
    if unknown:
        raise ConfigError(
            f"index.languages: no grammar for {', '.join(unknown)}; known: {', '.join(sorted(known))}"
        )
    environ = workspace.environ
    base = environ.get("XDG_CACHE_HOME") or (f"{environ['HOME']}/.cache" if environ.get("HOME") else "")
    cache = Path(base) / "mcp-localtools" / "index" if base and Path(base).is_absolute() else None
    if config.cache_dir:
        cache = Path(config.cache_dir).expanduser()
        inside = workspace.paths.root_of(Path(os.path.realpath(cache)))
        if inside is not None:
            raise ConfigError(
                f"index.cache_dir: {cache} lies inside the allowed root {inside}, where tools could change "
                "the index; set it to a directory outside the roots (the default is in the user's cache)"
            )
    hidden = tuple(
        Path(os.path.realpath(Path(entry).expanduser())) for entry in workspace.config.exec.sandbox.hide_paths
    )
    return IndexSettings(
        enabled=config.enabled,
        cache_dir=cache,
        max_file_bytes=config.max_file_bytes,
        languages=frozenset(config.languages),
        hidden=hidden,
        idle_seconds=config.idle_seconds,
    )


logger = logging.getLogger(__name__)


def cache_notice(workspace: Workspace) -> bool:
    """Log, when the server starts (once per workspace: ``workspace.shared(cache_notice)``), that
    the default index cache lies inside an allowed root and will be kept outside it
    (``CodeIndexes`` moves it at first use, and says where). True when it does."""
    cache = index_settings(workspace).cache_dir
    inside = workspace.paths.root_of(Path(os.path.realpath(cache))) if cache is not None else None
    if inside is not None:
        logger.warning(
            "the index cache %s lies inside the allowed root %s, where tools could change it: the code "
            "index will be kept outside the roots ($TMPDIR/mcp-localtools-<uid>/index, else in memory); "
            "set [index] cache_dir to a directory outside them",
            cache, inside,
        )  # fmt: skip
    return inside is not None


def _create(workspace: Workspace) -> CodeIndexes:
    home = workspace.environ.get("HOME")
    indexes = CodeIndexes(
        workspace.paths,
        index_settings(workspace),
        workspace.search,
        Path(os.path.realpath(home)) if home else None,
        workspace.environ,
    )
    workspace.changes.subscribe(indexes.changed)
    return indexes


def code_indexes(workspace: Workspace) -> CodeIndexes:
    """The workspace's code indexes (one set per workspace, built on first use)."""
    return workspace.shared(_create)


@dataclass(frozen=True, slots=True)
class Scope:
    """A directory a code tool answers about, and the index holding it.

    Attributes:
        index: the index.
        prefix: the directory relative to the index's (``""``: all of it; else ends with ``/``).
        base: the base directory, against which paths are shown.
    """

    index: CodeIndex
    prefix: str
    base: Path
    _shown: str | None = field(init=False, default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        # The index's directory as shown (relative to the base, with a separator), when every
        # path in it shows as that plus the path: the common case, then ``show`` is a string join.
        directory = self.index.directory
        if directory.is_relative_to(self.base):
            shown = os.path.relpath(directory, self.base)
            object.__setattr__(self, "_shown", "" if shown == "." else shown + os.sep)

    def covers(self, rel: str) -> bool:
        """Whether the index-relative path ``rel`` lies in the scope."""
        return rel.startswith(self.prefix)

    def show(self, rel: str) -> str:
        """How a result names the file at the index-relative ``rel`` (POSIX): relative to the
        base directory when it lies below it, else absolute."""
        if self._shown is not None:
            return self._shown + (rel if os.sep == "/" else rel.replace("/", os.sep))
        full = self.index.directory / rel
        return os.path.relpath(full, self.base) if full.is_relative_to(self.base) else str(full)


async def open_scope(indexes: CodeIndexes, given: str, ctx: CallContext, *, field: str = "path") -> Scope:
    """Resolve a directory argument, open its index and bring it up to date (progress reported).

    Raises:
        PolicyViolation: ``[index] enabled = false``.
        NotFound, NotADirectory, OutsideAllowedRoots: a bad directory.
        FileSystemError: the index cannot be opened or built.
    """
    import anyio.to_thread

    if not indexes.settings.enabled:
        raise PolicyViolation(
            served_text("the code index is off ([index] enabled = false); use searchfiles instead")
        )
    paths = indexes.paths

    def resolve() -> Path:
        resolved = paths.resolve(given, field=field)
        if not resolved.real.is_dir():
            raise NotADirectory(
                f"{field} is not a directory: {given}; give a directory (for a file use {served('symbols')})"
            )
        return resolved.real

    real = await anyio.to_thread.run_sync(resolve)
    index = await anyio.to_thread.run_sync(indexes.index_for, real)
    await indexes.ready(index, ctx.report_progress)
    rel = real.relative_to(index.directory).as_posix()
    return Scope(index, "" if rel == "." else rel + "/", paths.base_dir)


def read_lines(paths: PathPolicy, full: Path, start: int, end: int, max_bytes: int) -> list[str]:
    """Lines ``start``..``end`` (1-based, inclusive) of a file, read through the policy; ``[]``
    when it cannot be read."""
    try:
        data = read_regular_file(paths, paths.resolve(str(full)), max_bytes=max_bytes, follow_symlinks=False)
    except ToolError:
        return []
    return data.data.decode("utf-8", "replace").splitlines()[start - 1 : end]


@dataclass(frozen=True, slots=True)
class IndexSummary:
    """What ``build_index`` built: the indexed directory, its counts, where it is kept."""

    directory: Path
    files: int
    symbols: int
    chunks: int
    database: Path | None


async def build_index(workspace: Workspace, given: str, report: ProgressFn) -> IndexSummary:
    """Build (or bring up to date) the code index of the directory ``given``, as the code tools
    would on first use, and wait until it is complete (``mcp-localtools index``).

    Raises:
        as ``open_scope``.
    """
    indexes = code_indexes(workspace)
    scope = await open_scope(indexes, given, CallContext(progress=report))
    await indexes.settle(scope.index, report)
    files, symbols, chunks = scope.index.store.counts()
    return IndexSummary(scope.index.directory, files, symbols, chunks, indexes.database(scope.index))
