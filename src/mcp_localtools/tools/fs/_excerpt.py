"""Display text of reported lines, and the checks done on each file a result names.

Engines return a line's bytes only when it is at most ``LINE_WIDTH`` bytes long. For a longer
line (a minified file, a data dump) the tool reads the line itself, finds the first match with
RE2 and shows ``EXCERPT_BYTES`` bytes starting ``EXCERPT_LEAD`` bytes before it, marked with
``…`` where it was cut. Both engines go through the same code, so they give the same text.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

from mcp_localtools import compat
from mcp_localtools.errors import ToolError
from mcp_localtools.policy.paths import PathPolicy
from mcp_localtools.search.line import Line
from mcp_localtools.search.regex import ContentRegex

__all__ = ["EXCERPT_BYTES", "EXCERPT_LEAD", "Containment", "FileReader", "decode_line"]

EXCERPT_BYTES = 200
EXCERPT_LEAD = 60
_CHUNK = 1024 * 1024


def decode_line(raw: bytes) -> str:
    """A line's bytes as text: UTF-8 with invalid bytes replaced, a trailing CR dropped."""
    return raw.removesuffix(b"\r").decode("utf-8", "replace")


def _trim_utf8(raw: bytes, *, head: bool, tail: bool) -> bytes:
    """Drop the partial UTF-8 sequences a cut left at the start (``head``) or end (``tail``)."""
    if head:
        skip = 0
        while skip < min(3, len(raw)) and 0x80 <= raw[skip] < 0xC0:
            skip += 1
        raw = raw[skip:]
    if tail:
        for back in range(1, min(4, len(raw)) + 1):
            byte = raw[-back]
            if byte < 0x80:
                break
            if byte >= 0xC0:  # a lead byte: keep its sequence only if complete
                need = 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
                if need > back:
                    raw = raw[:-back]
                break
    return raw


class Containment:
    """Checks that files a result names still lie inside the allowed roots.

    Engines follow no symlink, so a reported file is normally its walk root joined with its
    relative path; this catches a directory or file swapped for a symlink while the engine ran.
    With ``base`` (the walk root's real path) a directory below it is checked with one ``lstat``
    per path component, each once per call (a real directory, not a symlink, keeps everything
    under it inside); the base itself, and any path not below it or through a symlink, is
    resolved (``realpath``) and checked against the roots. A file is ``lstat``-ed: one that is a
    symlink is resolved too.

    Args:
        paths: the policy whose roots bound the result.
        base: the walk root's real path, when the paths checked are below it.
    """

    def __init__(self, paths: PathPolicy, base: Path | str | None = None) -> None:
        self._paths = paths
        self._directories: dict[str, bool] = {}
        self._base = str(base).rstrip("/") if base is not None else None

    def _inside(self, path: str) -> bool:
        real = os.path.realpath(path)
        return real == path or self._paths.root_of(Path(real)) is not None

    def _directory_inside(self, directory: str) -> bool:
        base = self._base
        if base is None or directory == (base or "/") or not directory.startswith(base + "/"):
            return self._inside(directory)
        if not self._known(base or "/", self._inside):
            return False
        current = base
        for part in directory[len(base) + 1 :].split("/"):
            current = f"{current}/{part}"
            if not self._known(current, _plain_directory):
                return self._inside(directory)  # through a symlink: where does it lead?
        return True

    def _known(self, directory: str, check: Callable[[str], bool]) -> bool:
        found = self._directories.get(directory)
        if found is None:
            found = self._directories[directory] = check(directory)
        return found

    def check(self, path: str) -> bool:
        """Whether the file at the absolute, normalised ``path`` resolves inside the roots."""
        if not self._known(path.rpartition("/")[0] or "/", self._directory_inside):
            return False
        try:
            if not stat.S_ISLNK(os.lstat(path).st_mode):
                return True
        except OSError:
            return True  # gone: nothing of it is shown but its name, inside a checked directory
        return self._inside(path)


def _plain_directory(path: str) -> bool:
    """Whether ``path`` is a directory itself, not a symlink (one ``lstat``)."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


class FileReader:
    """Reads what a result shows of one file, through the path policy.

    Args:
        paths: the policy; the file is resolved and opened through it.
        path: the file's real path (the walk root joined with the engine's relative path).
        regex: the search pattern, to find the match in a long line.
        max_line: the most bytes of a matching line read to find its match (the search's file
            size cap); of a context line only ``EXCERPT_BYTES`` are read.
    """

    def __init__(self, paths: PathPolicy, path: str, regex: ContentRegex, max_line: int) -> None:
        self._paths = paths
        self._path = path
        self._regex = regex
        self._max_line = max_line
        self._fd: int | None = None
        self._failed = False

    def _line(self, offset: int, limit: int) -> bytes | None:
        """The line starting at ``offset`` (without its newline), cut after ``limit`` bytes;
        None if unreadable."""
        if self._fd is None and not self._failed:
            try:
                resolved = self._paths.resolve(self._path)
                self._fd = self._paths.open(resolved, os.O_RDONLY | compat.O_NONBLOCK)
            except ToolError:
                self._failed = True
        if self._fd is None:
            return None
        chunks: list[bytes] = []
        size = 0
        try:
            while size < limit:
                want = min(_CHUNK, limit - size)
                chunk = compat.pread(self._fd, want, offset + size)
                newline = chunk.find(b"\n")
                if newline >= 0:
                    chunks.append(chunk[:newline])
                    break
                chunks.append(chunk)
                size += len(chunk)
                if len(chunk) < want:  # end of file
                    break
        except OSError:
            return None
        return b"".join(chunks)

    def text(self, line: Line) -> str:
        """The display text of ``line``: all of it, or an excerpt around its first match (a
        matching line) or from its start (a context line)."""
        if line.text is not None:
            return decode_line(line.text)
        # A matching line is read whole (up to the file size cap) to find its match; of a
        # context line only the excerpt's bytes are read, and one more to know it goes on.
        whole = self._line(line.offset, self._max_line + 1 if line.is_match else EXCERPT_BYTES + 1)
        if whole is None:
            return "[line no longer readable]"
        first = self._regex.first_match(whole) if line.is_match else None
        start = max(0, (first or 0) - EXCERPT_LEAD)
        body = whole[start : start + EXCERPT_BYTES]
        more = start + EXCERPT_BYTES < len(whole)
        body = _trim_utf8(body, head=start > 0, tail=more)
        return ("…" if start else "") + decode_line(body) + ("…" if more else "")

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
