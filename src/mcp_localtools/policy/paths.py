"""PathPolicy: the allowed roots, the base directory for relative paths, and the symlink rules.

The rules:

* Roots are canonicalised once at start-up (``~`` expanded, absolute, symlinks resolved); a
  missing root or one that is not a directory is a start-up error. Their order is kept, and
  the base directory defaults to the first root *as written* (not the first after sorting).
* A path is trimmed; empty paths and NUL bytes are refused. A relative path is joined to the
  base directory, then ``..`` is collapsed lexically.
* Containment is decided on the real path (symlinks resolved; for a path that does not exist
  yet, its nearest existing ancestor is resolved and the rest re-joined), compared with
  ``Path.is_relative_to`` so a sibling such as ``<root>_evil`` is outside.
* With ``block_symlinks`` every existing component below the root, the final one included,
  is ``lstat``-ed and a symlink is refused.
* ``resolve()`` only checks names. To close the window between the check and the use, tools
  open through ``open()``/``opened()``, which verify that the object actually opened lies inside
  the roots (``/proc/self/fd`` on Linux, ``F_GETPATH`` on macOS, an inode comparison elsewhere).

The policy is not an OS sandbox: processes started by the exec tools are not confined.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from mcp_localtools import compat
from mcp_localtools.config import PathsConfig
from mcp_localtools.errors import (
    PATH_MAX,
    ConfigError,
    InvalidPath,
    NoRoots,
    OutsideAllowedRoots,
    ProtectedPath,
    SymlinkRefused,
    ToolError,
    from_os_error,
    printable,
)
from mcp_localtools.policy.pathnames import kernel_realpath, normal_text, normalise, split_path
from mcp_localtools.policy.protected import GIT_PROTECTED

__all__ = ["NO_ROOTS_MESSAGE", "PathPolicy", "ResolvedPath"]

NO_ROOTS_MESSAGE = (
    "no allowed roots: the server was started without a root (--root DIR, [paths] allowed_roots or "
    "MCP_LOCALTOOLS_ROOTS) and the client has sent no roots (MCP roots, such as its workspace folders; "
    "protocol revision 2026-07-28 carries no client roots, so a client speaking it needs the server "
    "started with --root DIR or [paths] allowed_roots); restart the server with --root DIR, or open a "
    "folder in a client that shares it (protocol 2024-11-05 ... 2025-11-25)"
)
"""What every path and command is refused with while a server has no roots."""

_MACOS_ALIASES = ("/var", "/tmp", "/etc")  # noqa: S108 - symlinks to /private/... a root may contain


@dataclass(frozen=True, slots=True)
class ResolvedPath:
    """A user-supplied path after the policy accepted it.

    Attributes:
        given: the path exactly as the caller wrote it (for messages).
        path: the absolute, lexically normalised path the tool operates on and reports.
        real: ``path`` with every symlink resolved (for a missing path: its nearest existing
            ancestor resolved, the rest appended).
        root: the allowed root that contains ``real``.
    """

    given: str
    path: Path
    real: Path
    root: Path

    @property
    def is_root(self) -> bool:
        """True when the path is one of the allowed roots itself."""
        return self.real == self.root


@dataclass(frozen=True, slots=True)
class PathPolicy:
    """Decides which paths tools may touch. Build it with ``PathPolicy.create``.

    Attributes:
        roots: canonical allowed roots, in the order given, without duplicates.
        base_dir: canonical directory that relative paths are joined to; inside a root.
        block_symlinks: refuse symlink components and symlink files.
        protected: canonical paths inside the roots that tools may read but not change
            (``.git/config``, ``.git/hooks``, the server's own files; ``check_writable``), besides
            the git config, hooks and pointers of every ``.git`` directory.
        unprotected: canonical paths lifted from protection on purpose.
    """

    roots: tuple[Path, ...]
    base_dir: Path
    block_symlinks: bool = False
    protected: tuple[Path, ...] = ()
    unprotected: tuple[Path, ...] = ()
    _prefixes: tuple[str, ...] = field(init=False, repr=False, compare=False, default=())

    @classmethod
    def from_config(cls, paths: PathsConfig) -> PathPolicy:
        """The policy of a ``[paths]`` section (see ``create``).

        Raises:
            ConfigError: a root is missing or not a directory, or the base directory is outside
                the roots.
        """
        return cls.create(
            paths.allowed_roots, base_dir=paths.work_base_dir, block_symlinks=paths.block_symlinks
        )

    @classmethod
    def create(
        cls,
        roots: Sequence[str | os.PathLike[str]],
        *,
        base_dir: str | os.PathLike[str] | None = None,
        block_symlinks: bool = False,
    ) -> PathPolicy:
        """Canonicalise ``roots`` and ``base_dir`` and build the policy.

        Args:
            roots: existing directories; relative ones are taken against the current directory.
            base_dir: base for relative tool paths; default the first root as written.
            block_symlinks: refuse symlink components below a root and symlink files.

        No roots make a policy that refuses every path with ``NoRoots`` (a server whose roots
        come only from the client, until it sends some).

        Raises:
            ConfigError: a root that is missing or not a directory, a base directory outside the
                roots (or given without roots), or (with ``block_symlinks``) a root or base that
                contains a symlink component.
        """
        if not roots:
            if base_dir is not None:
                raise ConfigError("work_base_dir needs allowed roots: with no roots there is no base")
            # The base is never used: resolve() refuses every path before joining it.
            return cls(roots=(), base_dir=Path(os.sep), block_symlinks=block_symlinks)
        found = (cls._canonical_dir(raw, "allowed root", block_symlinks) for raw in roots)
        canonical = list(dict.fromkeys(found))
        base = (
            canonical[0]
            if base_dir is None
            else cls._canonical_dir(base_dir, "work_base_dir", block_symlinks)
        )
        if not any(base.is_relative_to(root) for root in canonical):
            raise ConfigError(
                f"work_base_dir {base} is outside the allowed roots ({', '.join(map(str, canonical))})"
            )
        return cls(roots=tuple(canonical), base_dir=base, block_symlinks=block_symlinks)

    @staticmethod
    def _canonical_dir(raw: str | os.PathLike[str], what: str, block_symlinks: bool) -> Path:
        text = os.fspath(raw)
        if not text.strip() or "\x00" in text:
            raise ConfigError(f"invalid {what}: {text!r}")
        lexical = normalise(Path(text).expanduser().absolute())
        try:
            real = lexical.resolve(strict=True)
        except (OSError, RuntimeError) as exc:
            raise ConfigError(f"invalid {what}: {text} does not exist") from exc
        if not real.is_dir():
            raise ConfigError(f"invalid {what}: {text} is not a directory")
        if block_symlinks:
            probe = Path("/")
            for part in lexical.parts[1:]:
                probe = probe / part
                if probe.is_symlink() and str(probe) not in _MACOS_ALIASES:
                    raise ConfigError(
                        f"invalid {what}: {text} contains the symlink {probe}, and block_symlinks is on; "
                        f"use the real path {real}"
                    )
        return real

    def __post_init__(self) -> None:
        prefixes = tuple(os.fspath(root).rstrip(os.sep) + os.sep for root in self.roots)
        object.__setattr__(self, "_prefixes", prefixes)

    def root_of(self, real: Path | str) -> Path | None:
        """The allowed root containing the canonical path ``real`` (the deepest one), or None.

        On POSIX compared as text, component by component (a sibling such as ``<root>_evil`` is
        outside); on Windows with ``Path.is_relative_to`` (case-insensitive)."""
        if compat.IS_WINDOWS:  # pragma: no cover - Windows
            inside = [root for root in self.roots if Path(real).is_relative_to(root)]
            return max(inside, key=lambda root: len(root.parts)) if inside else None
        text = os.fspath(real)
        found, longest = None, -1
        for root, prefix in zip(self.roots, self._prefixes, strict=True):
            if len(prefix) > longest and (text.startswith(prefix) or text == prefix[:-1]):
                found, longest = root, len(prefix)
        return found

    def check_writable(self, resolved: ResolvedPath, action: str) -> None:
        """Refuse to ``action`` (``"write"``, ``"delete"``, ``"move"``, ...) a protected path, a
        path inside one, or a directory that contains one (moving ``.git`` away would take
        ``.git/config`` with it); and in any ``.git`` directory, the directory itself and its
        ``GIT_PROTECTED`` entries (config, hooks, the pointers to other git directories), unless
        ``unprotected`` lifts them.

        Raises:
            ProtectedPath: it is protected; the message names the rule and how to lift it.
        """
        real = resolved.real
        if any(root.is_relative_to(real) for root in self.roots):
            return  # a root, or above one: the callers' own root checks refuse what they must
        if any(real == lifted or real.is_relative_to(lifted) for lifted in self.unprotected):
            return
        parts = real.parts
        if ".git" in parts:
            after = parts[parts.index(".git") + 1 :]
            if not after or any(part in GIT_PROTECTED for part in after):
                raise ProtectedPath(
                    f"refusing to {action} {printable(str(resolved.path))}: a git directory's config, "
                    "hooks and pointers (config, hooks, commondir, worktrees, modules) are protected "
                    "(git would run what they say); change them with git outside the tools, or lift a "
                    "path on purpose with [paths] unprotected_paths"
                )
        for protected in self.protected:
            if real == protected or real.is_relative_to(protected) or protected.is_relative_to(real):
                raise ProtectedPath(
                    f"refusing to {action} {printable(str(resolved.path))}: {protected} is a protected path "
                    "(tools may read it but not change it, because a later command would run what it says); "
                    "lift it on purpose with [paths] unprotected_paths"
                )

    def resolve(self, path: str, *, field: str = "path", follow_final: bool = True) -> ResolvedPath:
        """Check a user-supplied path and return where it points.

        Args:
            path: absolute, or relative to ``base_dir``; surrounding whitespace is trimmed.
            field: the argument name, used in error messages.
            follow_final: resolve a final symlink to its target (the default, for tools that use
                what the path points at). False checks the link itself, for tools that act on the
                directory entry (delete, move): its parent is resolved, its name kept.

        Raises:
            NoRoots: the policy has no roots (none configured, none sent by the client).
            InvalidPath: the path is empty, longer than ``PATH_MAX`` bytes, or contains a NUL byte.
            OutsideAllowedRoots: the path (or what it resolves to) is outside every root.
            SymlinkRefused: ``block_symlinks`` is on and a component or the path itself is a symlink.
        """
        if not self.roots:
            raise NoRoots(NO_ROOTS_MESSAGE)
        if len(path) > PATH_MAX or len(path.encode("utf-8", "surrogatepass")) > PATH_MAX:
            raise InvalidPath(
                f"invalid path: {field} is longer than {PATH_MAX} bytes (PATH_MAX): {printable(path)}; "
                "give a shorter path"
            )
        given = path.strip()
        if not given:
            raise InvalidPath(
                f"invalid path: {field} is empty; give a path relative to {self.base_dir} "
                "or an absolute path inside the allowed roots"
            )
        if "\x00" in given:
            raise InvalidPath(f"invalid path: {field} contains a NUL byte: {printable(given)}")
        absolute = Path(given).is_absolute() if compat.IS_WINDOWS else given.startswith("/")
        lexical = normal_text(given if absolute else f"{self.base_dir}{os.sep}{given}")
        try:  # as text: pathlib's parsing costs more than the walk itself
            real = kernel_realpath(lexical, follow_final)
            if real is None:
                parent, name = split_path(lexical)
                if follow_final or parent == lexical:
                    real = os.path.realpath(lexical)
                else:
                    real = f"{os.path.realpath(parent).rstrip(os.sep)}{os.sep}{name}"
        except OSError as exc:  # a component vanished or changed while it was being resolved
            raise from_os_error(exc, given) from exc
        root = self.root_of(real)
        if root is None:
            raise OutsideAllowedRoots(
                f"path is outside allowed roots: {printable(given)}{self._where_it_leaves(Path(lexical))}; "
                f"allowed roots: {', '.join(map(str, self.roots))}"
            )
        lexical_root = self.root_of(lexical)
        if self.block_symlinks:
            self._refuse_symlinks(given, Path(lexical), lexical_root)
        # Work on the lexical form (so a later lstat still sees a final symlink) unless
        # the caller came in through a symlink outside the roots: then use where it lands.
        real_path = Path(real)
        used = real_path if lexical_root is None or lexical == real else Path(lexical)
        return ResolvedPath(given=given, path=used, real=real_path, root=root)

    def _where_it_leaves(self, lexical: Path) -> str:
        """For a path inside a root that resolves outside every root: which of its components
        leads out (a symlink). Only names inside the roots are shown, never where the link
        points (that would tell the caller about the outside)."""
        root = self.root_of(lexical)
        if root is None:
            return ""
        probe = root
        for part in lexical.relative_to(root).parts:
            probe = probe / part
            try:
                if self.root_of(Path(os.path.realpath(probe))) is None:
                    return f" ({printable(str(probe))} is a symlink that leads outside them)"
            except OSError:
                break
        return " (a symlink in it leads outside them)"

    @staticmethod
    def _refuse_symlinks(given: str, lexical: Path, lexical_root: Path | None) -> None:
        if lexical_root is None:
            raise SymlinkRefused(
                f"symlinks are disallowed by policy: {printable(given)} reaches the allowed roots through a "
                "symlink"
            )
        probe = lexical_root
        for part in lexical.relative_to(lexical_root).parts:
            probe = probe / part
            try:
                mode = os.lstat(probe).st_mode
            except FileNotFoundError:
                return  # nothing below a missing component can be a symlink yet
            except OSError as exc:
                raise from_os_error(exc, given) from exc
            if stat.S_ISLNK(mode):
                raise SymlinkRefused(
                    f"symlinks are disallowed by policy: {printable(str(probe))} "
                    f"(in {printable(given)}) is a symlink"
                )

    def verify_fd(self, fd: int, resolved: ResolvedPath) -> None:
        """Check that the object open at ``fd`` lies inside the roots.

        Closes the window between ``resolve()`` and ``open()``: whatever a racing process
        swapped in, the kernel's view of the opened object decides.

        Raises:
            OutsideAllowedRoots: the opened object is outside every root.
        """
        location = compat.fd_path(fd)
        if location is not None:
            if self.root_of(location) is None:
                raise OutsideAllowedRoots(
                    f"path is outside allowed roots: {printable(resolved.given)} changed while it was opened "
                    "and now leads outside them"
                )
            return
        # No kernel path available: the opened object must be the one the check saw.
        opened = os.fstat(fd)
        try:
            checked = os.stat(resolved.real)
        except OSError:
            checked = None
        if checked is None or (checked.st_dev, checked.st_ino) != (opened.st_dev, opened.st_ino):
            raise OutsideAllowedRoots(
                f"path is outside allowed roots: {printable(resolved.given)} changed while it was opened"
            )

    def open(self, resolved: ResolvedPath, flags: int, mode: int = 0o666) -> int:
        """Open ``resolved.path`` with ``os.open`` and verify the result (``verify_fd``).

        ``O_CLOEXEC`` (and Windows' ``O_BINARY``) is always added, ``O_NOFOLLOW`` when
        ``block_symlinks`` is on.

        Returns:
            An open file descriptor that the caller must close.

        Raises:
            ToolError: the open failed (translated ``OSError``) or the opened object is outside
                the roots.
        """
        flags |= compat.O_CLOEXEC | compat.O_BINARY
        if self.block_symlinks:
            flags |= compat.O_NOFOLLOW
        try:
            fd = os.open(resolved.path, flags, mode)
        except OSError as exc:
            raise from_os_error(exc, str(resolved.path)) from exc
        try:
            self.verify_fd(fd, resolved)
        except ToolError:
            os.close(fd)
            raise
        return fd

    @contextmanager
    def opened(self, resolved: ResolvedPath, flags: int, mode: int = 0o666) -> Iterator[int]:
        """``open()`` as a context manager that closes the descriptor."""
        fd = self.open(resolved, flags, mode)
        try:
            yield fd
        finally:
            os.close(fd)
