"""Loading a UTF-8 text file for the text tools, and saving an edited one back (TX-1, TX-7).

Read-only tools (``read_text``) follow a final symlink like readfile does. Editing tools
(``edit_text``) never write through one: the file is named relative to its verified parent
directory, ``lstat``-ed, opened with ``O_NOFOLLOW``, checked against ``expectedSha256``, and
saved with ``fswrite.write_atomic`` (temp file, fsync, rename) keeping its permission bits. An
in-process lock per file serialises edits of the same file, so two parallel calls cannot lose
one another's change; the ``expectedSha256`` check covers other writers.
"""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from mcp_localtools.config import LimitsConfig
from mcp_localtools.errors import (
    Conflict,
    InvalidArguments,
    NotAFile,
    NotFound,
    SymlinkRefused,
    TooLarge,
    from_os_error,
)
from mcp_localtools.fileio import decode_utf8, kind_of, read_regular_file, sha256_hex
from mcp_localtools.fswrite import ParentDir, lstat_entry, parent_dir, write_atomic
from mcp_localtools.policy.paths import PathPolicy

from .lines import TextLines, parse_text

__all__ = ["EditLocks", "EditableText", "Saved", "TextFile", "edit_text", "read_text"]

_NOT_UTF8_HINT = 'the text tools handle UTF-8 files only; readfile with encoding "binary" reads any file'
_CHUNK = 1024 * 1024


@dataclass(frozen=True, slots=True)
class TextFile:
    """A UTF-8 text file as read.

    Attributes:
        path: absolute path (for results and messages).
        data: the file's bytes.
        doc: the text as lines.
        sha256: SHA-256 of ``data``.
    """

    path: Path
    data: bytes
    doc: TextLines
    sha256: str


@dataclass(frozen=True, slots=True)
class Saved:
    """What saving did: the file's SHA-256 and size afterwards, and whether anything changed."""

    sha256: str
    size_bytes: int
    changed: bool


def _decode(data: bytes, path: Path) -> TextLines:
    return parse_text(decode_utf8(data, path, hint=_NOT_UTF8_HINT))


def read_text(paths: PathPolicy, path: str, limits: LimitsConfig) -> TextFile:
    """Read a UTF-8 text file for a read-only tool (a final symlink is followed, TX-1).

    Raises:
        NotFound, NotAFile, TooLarge, UnsupportedContent (not UTF-8), policy errors.
    """
    resolved = paths.resolve(path)
    file = read_regular_file(paths, resolved, max_bytes=limits.max_read_bytes)
    return TextFile(
        path=file.path, data=file.data, doc=_decode(file.data, file.path), sha256=sha256_hex(file.data)
    )


@dataclass
class EditLocks:
    """One lock per file being edited, owned by the text tool group (no module-level state).

    Locks live only while a call holds or waits for them.
    """

    _guard: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)
    _locks: dict[Path, tuple[threading.Lock, int]] = field(default_factory=dict, init=False, repr=False)

    @contextmanager
    def hold(self, key: Path) -> Iterator[None]:
        """Hold the lock of ``key`` for the duration of the block."""
        with self._guard:
            lock, users = self._locks.get(key, (threading.Lock(), 0))
            self._locks[key] = (lock, users + 1)
        try:
            with lock:
                yield
        finally:
            with self._guard:
                lock, users = self._locks[key]
                if users == 1:
                    del self._locks[key]
                else:
                    self._locks[key] = (lock, users - 1)


@dataclass
class EditableText:
    """A text file open for editing; ``save()`` writes the new text back atomically."""

    file: TextFile
    parent: ParentDir
    mode: int
    max_write_bytes: int

    @property
    def path(self) -> Path:
        return self.file.path

    @property
    def doc(self) -> TextLines:
        return self.file.doc

    def encode(self, text: str) -> bytes:
        """The bytes ``save(text)`` would write.

        Raises:
            InvalidArguments: the text holds an unpaired surrogate (not encodable as UTF-8).
            TooLarge: the result exceeds the write cap.
        """
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise InvalidArguments(
                "the new text is not valid UTF-8 (it holds an unpaired surrogate); nothing was written"
            ) from exc
        if len(data) > self.max_write_bytes:
            raise TooLarge(
                f"the edited file would be {len(data)} bytes, over the write limit of "
                f"{self.max_write_bytes}; nothing was written"
            )
        return data

    def save(self, text: str) -> Saved:
        """Write ``text`` (UTF-8) in place of the file, keeping its mode; nothing is written when
        the bytes are unchanged.

        Raises:
            InvalidArguments, TooLarge: as ``encode``.
            FileSystemError: the write failed; the file is unchanged.
        """
        data = self.encode(text)
        if data == self.file.data:
            return Saved(sha256=self.file.sha256, size_bytes=len(data), changed=False)
        write_atomic(self.parent.fd, self.parent.name, data, replace=True, mode=self.mode, display=self.path)
        return Saved(sha256=sha256_hex(data), size_bytes=len(data), changed=True)


def _read_entry(parent: ParentDir, max_bytes: int) -> tuple[bytes, os.stat_result]:
    try:
        fd = os.open(
            parent.name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=parent.fd
        )
    except OSError as exc:
        raise from_os_error(exc, str(parent.path)) from exc
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotAFile(f"expected a regular file: {parent.path} is a {kind_of(info.st_mode)}")
        chunks: list[bytes] = []
        total = 0
        while chunk := os.read(fd, _CHUNK):
            total += len(chunk)
            if total > max_bytes:
                raise TooLarge(
                    f"file exceeds maximum allowed size: {parent.path} is over {max_bytes} bytes, the limit "
                    "of the text tools"
                )
            chunks.append(chunk)
    except OSError as exc:
        raise from_os_error(exc, str(parent.path)) from exc
    finally:
        os.close(fd)
    return b"".join(chunks), info


@contextmanager
def edit_text(
    paths: PathPolicy, path: str, limits: LimitsConfig, locks: EditLocks, *, expected_sha256: str | None
) -> Iterator[EditableText]:
    """Open an existing UTF-8 text file for editing (TX-1, TX-7).

    Raises:
        NotFound: the file (or its directory) does not exist.
        SymlinkRefused: the path names a symlink (editing tools never write through one).
        NotAFile: a directory or special file.
        TooLarge: over the read cap.
        UnsupportedContent: not valid UTF-8.
        Conflict: ``expected_sha256`` is given and differs from the file's.
    """
    resolved = paths.resolve(path)
    with ExitStack() as stack:
        try:
            parent = stack.enter_context(parent_dir(paths, resolved))
        except NotFound:
            raise NotFound(f"path does not exist: {resolved.path}") from None
        stack.enter_context(locks.hold(resolved.real))
        entry = lstat_entry(parent)
        if entry is None:
            raise NotFound(f"path does not exist: {parent.path}; create it with writefile")
        if stat.S_ISLNK(entry.st_mode):
            try:
                target = os.readlink(parent.name, dir_fd=parent.fd)
            except OSError:
                target = "?"
            raise SymlinkRefused(
                f"refusing to edit through a symlink: {parent.path} -> {target}; edit the target file instead"
            )
        if stat.S_ISDIR(entry.st_mode):
            raise NotAFile(f"expected a file but got a directory: {parent.path}")
        data, info = _read_entry(parent, limits.max_read_bytes)
        file = TextFile(path=parent.path, data=data, doc=_decode(data, parent.path), sha256=sha256_hex(data))
        if expected_sha256 and file.sha256 != expected_sha256.lower():
            raise Conflict(
                f"{parent.path} changed since it was read (sha256 is now {file.sha256}, expected "
                f"{expected_sha256.lower()}); read it again and redo the edit"
            )
        yield EditableText(
            file=file, parent=parent, mode=stat.S_IMODE(info.st_mode), max_write_bytes=limits.max_write_bytes
        )
