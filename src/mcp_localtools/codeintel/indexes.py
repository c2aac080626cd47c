"""The code indexes of a workspace: which directory a path belongs to, and keeping each one fresh.

A path's index is the directory of the git work tree it lies in (the nearest directory with a
``.git`` entry, inside the allowed root), else its allowed root, unless that root is the
filesystem root or the home directory (then the directory asked about). Each index is a SQLite
database under ``<cache_dir>/<sha256 of the directory>/index.sqlite3`` (``[index] cache_dir``,
default ``$XDG_CACHE_HOME/mcp-localtools/index``), or in memory when no cache directory is known.

Freshness, before every answer (``ready``):

* the first use builds the index in a background thread (a cancelled call leaves it running;
  the next call waits for it), reporting progress;
* the file list is taken again (the search engine's walk: ``.gitignore``, hidden names, no
  symlinks) when it is older than ``RESCAN_SECONDS`` (or ten times the last rescan's time, for
  a large tree) or a command may have changed anything,
  and the files whose size or mtime changed are indexed again, in the background. The answer
  waits for that at most ``WAIT_SECONDS``, and only when a command may have changed anything or
  when rescans are quick (the last one took at most ``QUICK_RESCAN_SECONDS``: a small project);
  a large project's periodic rescan never delays an answer, which comes from the index as it
  stands, the files of its results checked and read again first if they changed;
* files that a file tool reported changed (``Workspace.changes``) are checked at once.
"""

from __future__ import annotations

import hashlib
import logging
import os
import sqlite3
import stat
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import anyio.to_thread

from mcp_localtools.codeintel.idle import IdleRelease, fixed_mmap_threshold, give_back
from mcp_localtools.codeintel.index import CodeIndex, IndexSettings
from mcp_localtools.codeintel.languages import Grammars
from mcp_localtools.codeintel.store import Store
from mcp_localtools.codeintel.vectors import Embedder
from mcp_localtools.errors import FileSystemError
from mcp_localtools.policy.paths import PathPolicy
from mcp_localtools.search.engine import Engine, WalkFilters

__all__ = [
    "QUICK_RESCAN_SECONDS",
    "RESCAN_FACTOR",
    "RESCAN_SECONDS",
    "WAIT_SECONDS",
    "CodeIndexes",
    "Freshness",
    "project_directory",
]

logger = logging.getLogger(__name__)

RESCAN_SECONDS = 2.0
"""A file list younger than this is trusted (plus the changes tools reported)."""
RESCAN_FACTOR = 10.0
"""Rescans come at most every this many times the last one's duration: a large tree's take at
most a tenth of a core."""
WAIT_SECONDS = 0.3
"""How long an answer waits at most for a rescan after the first build (see ``QUICK_RESCAN_SECONDS``)."""
QUICK_RESCAN_SECONDS = 0.1
"""A periodic rescan is waited for (up to ``WAIT_SECONDS``) only when the last one took at most
this long (a small project); a larger project's goes on in the background while answers come
from the index as it stands (measured on Django's 6,800 files: about 0.25 s)."""

Report = Callable[[float, float | None, str], Awaitable[None]]
"""``(done, total, message)``: progress for the caller."""


def project_directory(real: Path, root: Path, home: Path | None) -> Path:
    """The directory indexed for the real directory ``real`` inside the allowed ``root``."""
    current = real
    while True:
        if os.path.lexists(current / ".git"):
            return current
        if current == root or current.parent == current:
            break
        current = current.parent
    if root == Path(root.anchor) or (home is not None and root == home):
        return real
    return root


@dataclass(slots=True)
class Freshness:
    """What one index knows about its own state (guarded by the ``CodeIndexes`` lock).

    Attributes:
        listed_at: ``time.monotonic()`` of the last complete file list, or None before the first.
        everything: a command may have changed anything: list again before the next answer.
        pending: files tools reported changed, relative to the directory, not checked yet.
        job: the running update, if any (a thread); ``done``/``total`` its progress in files.
        error: why the last update failed, if it did.
        building: the running job is the first build (callers wait for it to end).
        rescan_seconds: how long the last rescan took (rescans come at most every ten times that).
        urgent: the running rescan follows a command that may have changed anything (answers
            wait for it, up to ``WAIT_SECONDS``).
        refreshing: held by the call that brings the index up to date.
    """

    listed_at: float | None = None
    everything: bool = False
    pending: set[str] | None = None
    job: threading.Thread | None = None
    done: int = 0
    total: int = 0
    error: str | None = None
    building: bool = False
    rescan_seconds: float = 0.0
    urgent: bool = False
    refreshing: anyio.Lock = field(default_factory=anyio.Lock)


class CodeIndexes:
    """Every code index of one workspace (``Workspace.shared``).

    Args:
        paths: the path policy all reads go through.
        settings: ``[index]``.
        engine: the search engine whose walk lists files.
        home: the home directory (never indexed whole), if known.
        environ: the server's environment (``TMPDIR``), if known.
    """

    def __init__(
        self,
        paths: PathPolicy,
        settings: IndexSettings,
        engine: Engine,
        home: Path | None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.paths = paths
        self._environ: Mapping[str, str] = environ or {}
        self.settings = settings
        self._engine = engine
        self._home = home
        self._grammars = Grammars()
        self._embedder = Embedder()
        self._indexes: dict[Path, CodeIndex] = {}
        self._state: dict[Path, Freshness] = {}
        self._lock = threading.Lock()
        self._warned = False
        self.idle = IdleRelease(settings.idle_seconds, self.release)
        fixed_mmap_threshold()  # large blocks unmapped when freed (``idle``)

    def release(self) -> None:
        """Drop what every index and the embedding model keep in memory and give the heap back
        to the OS (``idle.give_back``); put off while an index is being built."""
        with self._lock:
            busy = any(state.job is not None for state in self._state.values())
            indexes = list(self._indexes.values())
        if busy:
            self.idle.touch()
            return
        for index in indexes:
            index.release()
        self._embedder.release()
        give_back()

    @property
    def grammars(self) -> Grammars:
        """The grammars, loaded on first use, shared by all indexes."""
        return self._grammars

    @property
    def embedder(self) -> Embedder:
        """The embedding model, loaded on first use, shared by all indexes."""
        return self._embedder

    def changed(self, paths: Sequence[Path] | None) -> None:
        """A ``ChangeFeed`` listener: note what changed; the work waits for the next answer."""
        with self._lock:
            for directory, state in self._state.items():
                if paths is None:
                    state.everything = True
                    continue
                for path in paths:
                    if path == directory or directory.is_relative_to(path):
                        state.everything = True
                    elif path.is_relative_to(directory):
                        state.pending = (state.pending or set()) | {path.relative_to(directory).as_posix()}

    def index_for(self, real: Path) -> CodeIndex:
        """The index of the real directory ``real`` (inside the roots), opened on first use.

        Raises:
            FileSystemError: its database cannot be opened or created.
        """
        root = self.paths.root_of(real) or real
        directory = project_directory(real, root, self._home)
        with self._lock:
            index = self._indexes.get(directory)
            if index is None:
                index = CodeIndex(
                    directory, self._open_store(directory), self.settings, self.paths, self._grammars,
                    self._embedder,
                )  # fmt: skip
                self._indexes[directory] = index
                self._state[directory] = Freshness()
            return index

    def _open_store(self, directory: Path) -> Store:
        cache = self.settings.cache_dir
        if cache is None:
            return Store(None)
        inside = self.paths.root_of(Path(os.path.realpath(cache)))
        if inside is not None:
            cache = self._moved_cache(cache, inside)
            if cache is None:
                return Store(None)
        try:
            return Store(cache / self._key(directory) / "index.sqlite3")
        except (OSError, sqlite3.Error) as exc:
            raise FileSystemError(
                f"cannot open the code index of {directory} under {cache}: {exc}; set [index] cache_dir "
                "to a writable directory"
            ) from exc

    if sys.platform != "win32":  # a uid owns the private directory (POSIX)

        def _private_cache(self) -> Path | None:
            """``$TMPDIR`` (else ``/var/tmp``) ``/mcp-localtools-<uid>/index`` when that directory
            is outside the roots and this user's alone, else None."""
            tmp = self._environ.get("TMPDIR") or "/var/tmp"  # noqa: S108 - a private directory, checked below
            base = Path(tmp) / f"mcp-localtools-{os.getuid()}"
            try:
                base.mkdir(mode=0o700, exist_ok=True)
                info = os.lstat(base)
            except OSError:
                return None
            private = stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and not info.st_mode & 0o077
            outside = self.paths.root_of(Path(os.path.realpath(base))) is None
            return base / "index" if private and outside else None

    def _moved_cache(self, cache: Path, root: Path) -> Path | None:
        """Where the index goes instead of ``cache``, which lies inside ``root`` (where a command or
        a file tool could change what the model is shown): ``$TMPDIR`` (else ``/var/tmp``)
        ``/mcp-localtools-<uid>/index`` when that is outside the roots and a directory of this
        user's alone, else None (in memory). Logged once."""
        if sys.platform == "win32":  # pragma: no cover - no uid to make a directory this user's alone
            moved: Path | None = None
        else:
            moved = self._private_cache()
        if not self._warned:
            self._warned = True
            logger.warning(
                "the index cache %s lies inside the allowed root %s, where tools could change it: the "
                "code index is kept %s; set [index] cache_dir to a directory outside the roots",
                cache, root, f"in {moved}" if moved else "in memory",
            )  # fmt: skip
        return moved

    async def ready(self, index: CodeIndex, report: Report) -> None:
        """Bring ``index`` up to date before an answer (see the module docstring), reporting
        progress while files are indexed. Cancelling the caller leaves an update running."""
        state = self._state[index.directory]
        self.idle.touch()
        async with state.refreshing:  # one refresh at a time; a second caller finds it done
            await self._refresh(index, state, report)

    async def _refresh(self, index: CodeIndex, state: Freshness, report: Report) -> None:
        with self._lock:
            job, limit = state.job, self._patience(state)
        if job is not None:  # the first build is waited for; a later rescan briefly, if at all
            await self._wait(job, state, report, limit)
        with self._lock:
            listed = state.listed_at
            interval = max(RESCAN_SECONDS, RESCAN_FACTOR * state.rescan_seconds)
            due = listed is None or state.everything or time.monotonic() - listed > interval
            pending, state.pending = state.pending, None
            urgent, state.everything = state.everything, False
        if pending:
            pending |= await self._listed_under(index, pending)
            changed, gone = await anyio.to_thread.run_sync(index.stale_of, sorted(pending))
            if changed or gone:
                await anyio.to_thread.run_sync(index.update, changed, gone, lambda done: None)
        if not due:
            return
        with self._lock:
            if state.job is not None:
                return  # a rescan is running: it will see what changed
            # The first build is waited for; an index on disk answers at once while it is checked,
            # its vectors and graph loaded in the background for the answers that need them.
            # An unfinished build (a full disk, a killed server) is finished before answers too.
            building = state.listed_at is None and not index.store.complete()
            if state.listed_at is None and not building:
                threading.Thread(target=index.warm, name="code index warm-up", daemon=True).start()
            state.listed_at, state.building, state.error = time.monotonic(), building, None
            state.urgent = urgent
            state.done = state.total = 0
            state.job = threading.Thread(
                target=self._rescan,
                args=(index, state),
                name=f"code index {index.directory.name}",
                daemon=True,
            )
            state.job.start()
            job, limit = state.job, self._patience(state)
        await self._wait(job, state, report, limit)
        if building and state.error is not None:
            raise FileSystemError(f"indexing {index.directory} failed: {state.error}")

    @staticmethod
    def _patience(state: Freshness) -> float | None:
        """How long an answer waits for the running job (under the lock): the first build to its
        end, a rescan after a command or of a small project ``WAIT_SECONDS``, another not at all."""
        if state.building:
            return None
        if state.urgent or state.rescan_seconds <= QUICK_RESCAN_SECONDS:
            return WAIT_SECONDS
        return 0.0

    def _rescan(self, index: CodeIndex, state: Freshness) -> None:
        """List the directory's files and index what changed (a thread of its own: a call may
        answer before it ends, and a cancelled call leaves it running)."""
        began = time.monotonic()
        try:
            listing = anyio.run(self._list, index)
            changed, gone = index.stale(listing)
            state.total = len(changed)
            index.update(changed, gone, lambda done: setattr(state, "done", done))
            if not index.store.complete():
                index.store.mark_complete()  # after every batch's commit
            if state.building:  # what the first answers need, made before they are asked
                threading.Thread(target=index.warm, name="code index warm-up", daemon=True).start()
        except Exception as exc:
            logger.exception("indexing %s failed", index.directory)
            with self._lock:
                state.error = str(exc)
                state.listed_at = None  # try again on the next call
        finally:
            self.idle.touch()
            with self._lock:
                state.job = None
                if not state.building:
                    state.rescan_seconds = time.monotonic() - began
                state.building = False

    async def _listed_under(self, index: CodeIndex, rels: set[str]) -> set[str]:
        """The files the engine lists under those of ``rels`` that are directories now (a folder
        a tool moved, copied or made), relative to the index's directory."""
        out: set[str] = set()
        for rel in rels:
            if await anyio.to_thread.run_sync((index.directory / rel).is_dir):
                out.update(f"{rel}/{found}" for found in await self._list(index, rel))
        return out

    async def _list(self, index: CodeIndex, under: str = "") -> list[str]:
        found: list[str] = []

        async def progress(count: int, message: str) -> None:
            return None

        await self._engine.list_files(
            index.directory / under,
            WalkFilters(),
            found.append,
            progress,
            max_file_size=self.settings.max_file_bytes,
        )
        return found

    async def _wait(
        self, job: threading.Thread, state: Freshness, report: Report, limit: float | None
    ) -> None:
        """Wait for ``job`` (at most ``limit`` seconds), reporting its progress every half second."""
        deadline = None if limit is None else time.monotonic() + limit
        while job.is_alive():
            step = 0.5 if deadline is None else min(0.5, deadline - time.monotonic())
            if step <= 0:
                return
            await anyio.to_thread.run_sync(job.join, step, abandon_on_cancel=True)
            if job.is_alive() and state.total:
                await report(state.done, state.total, f"indexing {state.done} of {state.total} files")

    def indexing(self, index: CodeIndex) -> str | None:
        """``"indexing, N of M files"`` while an update of ``index`` that the answer did not wait
        for is running (an empty answer may only mean "not indexed yet"), else None."""
        with self._lock:
            state = self._state.get(index.directory)
            if state is None or state.job is None:
                return None
            if not state.total:
                return "indexing, listing files"
            return f"indexing, {state.done} of {state.total} files"

    async def settle(self, index: CodeIndex, report: Report) -> None:
        """Wait until no update of ``index`` runs (a rescan an answer did not wait for)."""
        state = self._state[index.directory]
        with self._lock:
            job = state.job
        if job is not None:
            await self._wait(job, state, report, None)
        if state.error is not None:
            raise FileSystemError(f"indexing {index.directory} failed: {state.error}")

    def database(self, index: CodeIndex) -> Path | None:
        """Where ``index`` is kept, or None in memory."""
        cache = self.settings.cache_dir
        return None if cache is None else cache / self._key(index.directory) / "index.sqlite3"

    @staticmethod
    def _key(directory: Path) -> str:
        return hashlib.sha256(os.fsencode(directory)).hexdigest()[:32]

    def check_files(self, index: CodeIndex, rels: Sequence[str]) -> bool:
        """Index again any of ``rels`` that changed since they were indexed (blocking; for the
        files of a result, before it is returned). True when one did."""
        return index.refresh(rels)
