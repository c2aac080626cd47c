"""writefile: write text or base64 binary content to a file, atomically.

Text (UTF-8) or base64 binary content; ``overwrite`` is decided atomically (exclusive create,
never check-then-write); ``createParents`` makes at most 8 directories and removes them again if
the write fails; ``append`` rewrites the file atomically with the new bytes at the end (readers
see the old content or the new, never a half); ``expectedSha256`` refuses when the file changed
since it was read. An overwrite keeps the old file's permission bits; new files get 0666 under
the umask. The destination is never followed when it is a symlink, and a hard-linked file is
replaced by a new inode, so the other names keep their content.
"""

from __future__ import annotations

import base64
import binascii
import stat
from contextlib import ExitStack
from functools import partial
from typing import Any

from pydantic import Field

from mcp_localtools import compat
from mcp_localtools.config import LimitsConfig
from mcp_localtools.errors import (
    AlreadyExists,
    Conflict,
    InvalidArguments,
    NotAFile,
    SymlinkRefused,
    TooLarge,
)
from mcp_localtools.files.atomic import write_atomic
from mcp_localtools.files.entries import kind_of
from mcp_localtools.files.locks import FileLocks
from mcp_localtools.files.parents import lstat_entry, parent_dir, read_entry
from mcp_localtools.files.read import sha256_hex
from mcp_localtools.offload import offload
from mcp_localtools.policy.paths import PathPolicy, ResolvedPath
from mcp_localtools.results import ToolResult
from mcp_localtools.spec import DESTRUCTIVE, ToolArgs, ToolOutput, ToolSpec, changes_at
from mcp_localtools.tools.fs.readfile import Encoding
from mcp_localtools.units import size_text
from mcp_localtools.workspace import Workspace

__all__ = ["WriteFileArgs", "WriteFileResult", "spec", "write_file"]

_SHA256_HEX = r"^[0-9a-fA-F]{64}$"


class WriteFileArgs(ToolArgs):
    path: str = Field(description="File to write.")
    content: str = Field(description="UTF-8 text, or base64 with encoding binary; may be empty.")
    encoding: Encoding = Field("text", description="`binary`: content is base64.")
    overwrite: bool = Field(False, description="Replace an existing file (else an error).")
    create_parents: bool = Field(False, description="Also create missing parents (at most 8).")
    append: bool = Field(False, description="Add to the end (file created if missing).")
    expected_sha256: str | None = Field(
        None,
        pattern=_SHA256_HEX,
        description="Refuse if the file's SHA-256 differs.",
    )


class WriteFileResult(ToolOutput):
    path: str = Field(description="Absolute path written.")
    bytes_written: int = Field(description="Bytes of content written by this call (decoded, for binary).")
    size_bytes: int = Field(description="Size of the file afterwards, in bytes.")
    sha256: str = Field(description="SHA-256 of the file afterwards.")
    created: bool = Field(description="True when the file did not exist before.")
    created_directories: list[str] = Field(description="Parent directories created by this call.")


def _content_bytes(args: WriteFileArgs, max_bytes: int) -> bytes:
    if args.encoding == "text":
        data = args.content.encode("utf-8")  # the registry refused lone surrogates
    else:
        encoded = "".join(args.content.split())
        if len(encoded) // 4 * 3 > max_bytes + 2:
            raise TooLarge(
                f"content too large: about {len(encoded) // 4 * 3} bytes decoded, the limit is {max_bytes}"
            )
        try:
            data = base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise InvalidArguments(f"invalid base64 content: {exc}") from exc
    if len(data) > max_bytes:
        raise TooLarge(f"content too large: {len(data)} bytes, the limit is {max_bytes}")
    return data


def _target(args: WriteFileArgs, paths: PathPolicy) -> ResolvedPath:
    """The path policy's checks this tool's body starts with, which are also its ``ToolSpec.check``
    (the approval step runs them before it asks).

    Raises:
        ToolError: the policy refuses a path (outside the roots, protected, a root itself, ...).
    """
    resolved = paths.resolve(args.path)
    paths.check_writable(resolved, "write")
    return resolved


def check_write(args: WriteFileArgs, *, paths: PathPolicy, limits: LimitsConfig) -> None:
    """writefile's checks without writing (``ToolSpec.check``): the content's size and form, and
    the path policy on ``path``.

    Raises:
        ToolError: what the body would raise for the first refused check.
    """
    _content_bytes(args, limits.max_write_bytes)
    _target(args, paths)


def write_file(
    args: WriteFileArgs, *, paths: PathPolicy, limits: LimitsConfig, locks: FileLocks
) -> ToolResult:
    """The writefile tool body (runs in a worker thread). A read-modify-write (``append``,
    ``expectedSha256``) holds the file's lock in ``locks``, shared with the text edits."""
    data = _content_bytes(args, limits.max_write_bytes)
    resolved = _target(args, paths)
    with ExitStack() as stack:
        if args.append or args.expected_sha256:
            stack.enter_context(locks.hold(resolved.real))
        parent = stack.enter_context(parent_dir(paths, resolved, create=args.create_parents))
        current = lstat_entry(parent)
        if current is None:
            if args.expected_sha256:
                raise Conflict(f"{parent.path} does not exist, but expectedSha256 was given; read it again")
            write_atomic(parent.fd, parent.name, data, replace=False, display=parent.path)
            final = data
        else:
            if stat.S_ISLNK(current.st_mode):
                raise SymlinkRefused(
                    f"refusing to write through a symlink: {parent.path}; write to its target instead"
                )
            if stat.S_ISDIR(current.st_mode):
                raise NotAFile(f"path is a directory, not a file: {parent.path}")
            if not stat.S_ISREG(current.st_mode):
                raise NotAFile(f"refusing to write to a {kind_of(current.st_mode)}: {parent.path}")
            if not (args.overwrite or args.append):
                raise AlreadyExists(
                    f"file already exists and overwrite=false: {parent.path}; pass overwrite=true to replace "
                    "it or append=true to add to it"
                )
            needs_old = args.append or args.expected_sha256
            old = read_entry(parent, max_bytes=limits.max_read_bytes)[0] if needs_old else b""
            if args.expected_sha256 and (now := sha256_hex(old)) != args.expected_sha256.lower():
                raise Conflict(
                    f"{parent.path} changed since it was read (sha256 is now {now}); read it again and redo "
                    "the change"
                )
            final = old + data if args.append else data
            if len(final) > limits.max_write_bytes:
                raise TooLarge(
                    f"content too large: the file would be {len(final)} bytes, limit {limits.max_write_bytes}"
                )
            write_atomic(
                parent.fd,
                parent.name,
                final,
                replace=True,
                mode=stat.S_IMODE(current.st_mode),
                display=parent.path,
            )
        result = WriteFileResult(
            path=str(parent.path),
            bytes_written=len(data),
            size_bytes=len(final),
            sha256=sha256_hex(final),
            created=current is None,
            created_directories=[str(p) for p in parent.created],
        )
    verb = "created" if current is None else ("appended to" if args.append else "overwrote")
    return ToolResult.of(
        result, text=f"{verb} {result.path}: {len(data)} bytes written, sha256 {result.sha256}"
    )


def spec(workspace: Workspace) -> ToolSpec[Any]:
    """The writefile tool, bound to ``workspace``."""
    paths = workspace.paths
    limits = workspace.limits
    locks = workspace.locks
    return ToolSpec(
        name="writefile",
        title="Write a file",
        description=(
            f"Create or replace a file, atomically; at most {size_text(limits.max_write_bytes)}. For small "
            "edits prefer editfile."
        ),
        args_model=WriteFileArgs,
        result_model=WriteFileResult,
        handler=offload(partial(write_file, paths=paths, limits=limits, locks=locks)),
        check=offload(partial(check_write, paths=paths, limits=limits)),
        changes=changes_at("path"),
        annotations=DESTRUCTIVE,
        unsupported=compat.why_unsupported(dir_fd=True),
    )
