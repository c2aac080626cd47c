"""Loading a UTF-8 text file for the text tools, and saving an edited one back atomically.

Read-only tools (``read_text``) follow a final symlink like readfile does. Editing tools
(``edit_text``) never write through one: the file is named relative to its verified parent
directory, opened with ``O_NOFOLLOW`` (a symlink there fails the open), checked against
``expectedSha256``, and saved with ``files.atomic.write_atomic`` (temp file, fsync, rename) keeping
its permission bits. An in-process lock per file serialises edits of the same file, so two
parallel calls cannot lose one another's change; the ``expectedSha256`` check covers other
writers.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from mcp_localtools.config import LimitsConfig
from mcp_localtools.errors import Conflict, NotFound, SymlinkRefused, TooLarge
from mcp_localtools.files.atomic import write_atomic
from mcp_localtools.files.locks import FileLocks
from mcp_localtools.files.parents import ParentDir, parent_dir, read_entry
from mcp_localtools.files.read import decode_utf8, read_regular_file, sha256_hex
from mcp_localtools.policy.paths import PathPolicy, ResolvedPath
from mcp_localtools.toolnames import served, served_text
from mcp_localtools.tools.text._lines import TextLines, parse_text

__all__ = ["EditableText", "Saved", "TextFile", "edit_text", "read_text", "root_relative"]

_ENCODE_CHARS = 1024 * 1024  # characters encoded and written at a time by save()
_NOT_UTF8_HINT = 'the text tools handle UTF-8 files only; readfile with encoding "binary" reads any file'


@dataclass(frozen=True)
class TextFile:
    """A UTF-8 text file as read. The bytes are not kept: decoding valid UTF-8 and encoding the
    text again gives them back exactly, so the text is the one copy held in memory.

    Attributes:
        path: absolute path (for results and messages).
        text: the file's content decoded (a BOM kept as U+FEFF).
        size_bytes: the size of the bytes that were read.
        known_sha256: the SHA-256 of the bytes when it was computed while they were at hand.
    """

    path: Path
    text: str
    size_bytes: int
    known_sha256: str | None = None

    @cached_property
    def doc(self) -> TextLines:
        """The text as lines, split on first use (editfile works on the text and never needs it)."""
        return parse_text(self.text)

    @cached_property
    def sha256(self) -> str:
        """SHA-256 of the file's bytes (from the text when it was not computed at reading)."""
        return self.known_sha256 or sha256_hex(self.text.encode("utf-8"))


@dataclass(frozen=True, slots=True)
class Saved:
    """What saving did: the file's SHA-256 and size afterwards, and whether anything changed."""

    sha256: str
    size_bytes: int
    changed: bool


def _decode(data: bytes, path: Path) -> str:
    return decode_utf8(data, path, hint=served_text(_NOT_UTF8_HINT))


def read_text(paths: PathPolicy, path: str, limits: LimitsConfig) -> TextFile:
    """Read a UTF-8 text file for a read-only tool (a final symlink is followed).

    Raises:
        NotFound, NotAFile, TooLarge, UnsupportedContent (not UTF-8), policy errors.
    """
    resolved = paths.resolve(path)
    file = read_regular_file(paths, resolved, max_bytes=limits.max_read_bytes)
    return TextFile(
        path=file.path,
        text=_decode(file.data, file.path),
        size_bytes=len(file.data),
        known_sha256=sha256_hex(file.data),
    )


@dataclass
class EditableText:
    """A text file open for editing; ``save()`` writes the new text back atomically."""

    file: TextFile
    parent: ParentDir
    mode: int
    max_write_bytes: int
    diff_name: str
    """The file's path relative to its allowed root, ``/``-separated, as git names it in a diff
    (``src/x.py``)."""

    @property
    def path(self) -> Path:
        return self.file.path

    @property
    def doc(self) -> TextLines:
        return self.file.doc

    def encode(self, text: str) -> bytes:
        """The bytes ``save(text)`` would write (UTF-8).

        Raises:
            TooLarge: the result exceeds the write cap.
        """
        data = text.encode("utf-8")
        if len(data) > self.max_write_bytes:
            raise TooLarge(
                f"the edited file would be {len(data)} bytes, over the write limit of "
                f"{self.max_write_bytes}; nothing was written"
            )
        return data

    def preview(self, text: str) -> Saved:
        """What ``save(text)`` would report, writing nothing (a dry run): the file's current
        SHA-256, ``changed`` false, and the size the new text would have.

        Raises:
            TooLarge: the new text exceeds the write cap.
        """
        size = self.file.size_bytes if text == self.file.text else len(self.encode(text))
        return Saved(sha256=self.file.sha256, size_bytes=size, changed=False)

    def save(self, text: str) -> Saved:
        """Write ``text`` (UTF-8) in place of the file, keeping its mode; nothing is written when
        the bytes are unchanged.

        Raises:
            TooLarge: the new bytes exceed the write cap; nothing was written.
            FileSystemError: the write failed; the file is unchanged.
        """
        if text == self.file.text:
            return Saved(sha256=self.file.sha256, size_bytes=self.file.size_bytes, changed=False)
        # Encoded and hashed a piece at a time while it is written: a large file is not held a
        # third time (old text, new text, and its bytes) at the peak of an edit.
        hasher = hashlib.sha256()
        size = 0

        def pieces() -> Iterator[bytes]:
            nonlocal size
            for start in range(0, len(text), _ENCODE_CHARS):
                piece = text[start : start + _ENCODE_CHARS].encode("utf-8")
                size += len(piece)
                if size > self.max_write_bytes:
                    raise TooLarge(
                        f"the edited file would be over the write limit of {self.max_write_bytes} bytes; "
                        "nothing was written"
                    )
                hasher.update(piece)
                yield piece

        write_atomic(
            self.parent.fd, self.parent.name, pieces(), replace=True, mode=self.mode, display=self.path
        )
        return Saved(sha256=hasher.hexdigest(), size_bytes=size, changed=True)


def edit_target(paths: PathPolicy, path: str) -> ResolvedPath:
    """The file an edit of ``path`` changes, checked by the path policy (blocking: resolves).

    Raises:
        InvalidPath, OutsideAllowedRoots, SymlinkRefused, ProtectedPath: the policy refuses it.
    """
    resolved = paths.resolve(path)
    paths.check_writable(resolved, "edit")
    return resolved


def check_edit(args: Any, *, paths: PathPolicy) -> None:
    """A line tool's ``ToolSpec.check`` body: its ``path`` may be edited (``edit_target``)."""
    edit_target(paths, args.path)


@contextmanager
def edit_text(
    paths: PathPolicy, path: str, limits: LimitsConfig, locks: FileLocks, *, expected_sha256: str | None
) -> Iterator[EditableText]:
    """Open an existing UTF-8 text file for editing (never through a symlink; see ``save``).

    Raises:
        NotFound: the file (or its directory) does not exist.
        SymlinkRefused: the path names a symlink (editing tools never write through one).
        NotAFile: a directory or special file.
        TooLarge: over the read cap.
        UnsupportedContent: not valid UTF-8.
        Conflict: ``expected_sha256`` is given and differs from the file's.
    """
    resolved = edit_target(paths, path)
    with ExitStack() as stack:
        try:
            parent = stack.enter_context(parent_dir(paths, resolved))
        except NotFound:
            raise NotFound(f"path does not exist: {resolved.path}") from None
        stack.enter_context(locks.hold(resolved.real))
        try:
            data, info = read_entry(parent, max_bytes=limits.max_read_bytes)
        except NotFound as exc:
            raise NotFound(
                f"path does not exist: {parent.path}; create it with {served('writefile')}"
            ) from exc
        except SymlinkRefused as exc:  # O_NOFOLLOW met a symlink: say where it points
            try:
                target = os.readlink(parent.name, dir_fd=parent.fd)
            except OSError:
                target = "?"
            raise SymlinkRefused(
                f"refusing to edit through a symlink: {parent.path} -> {target}; edit the target file instead"
            ) from exc
        # The hash is needed now only to check expectedSha256; otherwise only if a result asks.
        known = sha256_hex(data) if expected_sha256 else None
        file = TextFile(
            path=parent.path, text=_decode(data, parent.path), size_bytes=len(data), known_sha256=known
        )
        del data  # the text is the copy kept: a 10 MiB edit holds old and new text, not old bytes too
        if expected_sha256 and file.sha256 != expected_sha256.lower():
            raise Conflict(
                f"{parent.path} changed since it was read (sha256 is now {file.sha256}, expected "
                f"{expected_sha256.lower()}); read it again and redo the edit"
            )
        yield EditableText(
            file=file,
            parent=parent,
            mode=stat.S_IMODE(info.st_mode),
            max_write_bytes=limits.max_write_bytes,
            diff_name=root_relative(resolved),
        )


def root_relative(resolved: ResolvedPath) -> str:
    """``resolved`` relative to its allowed root, ``/``-separated (``src/x.py``): the name git
    prints in a diff's ``--- a/...`` header. The path as named when it lies under the root, else
    where it really is (reached through a symlinked directory)."""
    named = resolved.path if resolved.path.is_relative_to(resolved.root) else resolved.real
    return named.relative_to(resolved.root).as_posix()
