"""The internal interface between the search tools and the engines that walk and search.

Two engines implement it with identical results (``tests/search/test_parity.py``):
ripgrep (``rg.py``), and a pure-Python fallback (``native.py``: an fd-based walk, RE2 on bytes)
for machines without an ``rg``. The tools never see which one runs.

What both engines agree on, so the tools can rely on it:

* The walk starts at a real directory and follows no symlink at all: symlinked files and
  directories are not searched or listed, so nothing outside the allowed roots is read.
* Entries are filtered as ripgrep does: the ``--glob`` overrides first (include globs, then
  exclude globs, then ``!.git`` if include globs could reach it; the last matching glob wins),
  then the ignore files ``.rgignore`` > ``.ignore`` > ``.gitignore`` of the directories from the
  walk root down (the deepest match wins within a kind; no ignore files above the walk root, no
  global or ``.git/info/exclude`` rules), then hidden names (a leading dot).
* Only regular files are listed or searched; FIFOs, sockets and devices are passed over.
* A file larger than ``max_file_size`` bytes reports nothing: the Python engine passes over it
  unread and counts it in ``ListingReport.oversize``; ripgrep searches it (a size check of every
  file would cost rg 15 % more) and leaves out, and counts, the files over the cap that matched.
  A file holding a NUL byte anywhere is binary and reports nothing.
* A pattern matches within one line (a line ends at ``\n``, which is not part of it); ``^`` and
  ``$`` match at line boundaries. Lines are reported with their number and the byte offset of
  their start. A line longer than ``LINE_WIDTH`` bytes (counting its newline) comes back without
  its text: the tool reads an excerpt of it itself (``tools/fs/_excerpt.py``).
* Paths are relative to the walk root, ``/``-separated, ``str`` decoded with the filesystem
  encoding (``os.fsdecode``). Results arrive in no particular order: the tools sort them.
* With ``ContentQuery.max_lines`` a file's lines are those of its first ``max_lines`` matching
  lines and their context (``line.cap_lines``); every matching line is still counted. Memory is
  bounded by what a result can show, not by what matches.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    from mcp_localtools.search.regex import ContentRegex
from mcp_localtools.search.line import Line

__all__ = [
    "ContentQuery",
    "Engine",
    "EngineOutput",
    "FileHits",
    "ListingReport",
    "Progress",
    "Skipped",
    "WalkFilters",
]


EngineOutput = Literal["files", "count", "occurrences", "lines"]
"""What a content search reports of each matching file (see ``ContentQuery.output``)."""


Progress = Callable[[int, str], Coroutine[Any, Any, None]]
"""``(count, message)``: a running count of files searched or found, and what it counts."""


@dataclass(frozen=True, slots=True)
class WalkFilters:
    """Which entries a walk visits.

    Attributes:
        include: globs (gitignore syntax, relative to the walk root); when given, only files
            matching one are visited.
        exclude: globs of files and directories to pass over.
        respect_ignore_files: apply ``.gitignore``, ``.ignore`` and ``.rgignore`` files.
        include_hidden: visit names starting with a dot, ``.git`` included.
    """

    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    respect_ignore_files: bool = True
    include_hidden: bool = False

    def override_globs(self) -> tuple[str, ...]:
        """The filters as ripgrep ``--glob`` values, in order (a later match wins).

        Without ``include_hidden``, ``.git`` is skipped as any hidden name is; an include glob
        could match into it, so ``!.git`` comes last when there are include globs (only then:
        every override costs ripgrep a glob match per entry).
        """
        hidden = ("!.git",) if self.include and not self.include_hidden else ()
        return (*self.include, *(f"!{glob}" for glob in self.exclude), *hidden)


@dataclass(frozen=True, slots=True)
class ContentQuery:
    """One content search.

    Attributes:
        directory: the real path of the directory to walk.
        pattern: the regular expression (or the literal text with ``fixed_strings``).
        case_sensitive: false folds case (Unicode simple folding).
        fixed_strings: the pattern is a literal string, not a regex.
        filters: what the walk visits.
        max_file_size: files larger than this many bytes report nothing (see the module docstring).
        output: ``files``: each matching file with count 1 (an engine may stop searching a file
            at its first match); ``count``: each matching file with its number of matching
            lines; ``occurrences``: each matching file with its number of matches (several on
            one line count apart); ``lines``: the line count and the matching lines (matches mode).
        context_lines: lines of context before and after each match (with ``lines``).
        max_lines: with ``lines``, the most matching lines of one file whose lines an engine
            keeps (``line.CappedLines``: the first ones, with their context); the rest are only
            counted in ``FileHits.count``. None keeps them all. It bounds a search's memory by
            what its result can show.
        regex: the pattern compiled by the caller, for an engine that matches in Python (it
            compiles the pattern itself when None); it must be ``pattern`` with the same options.
    """

    directory: Path
    pattern: str
    case_sensitive: bool
    fixed_strings: bool
    filters: WalkFilters
    max_file_size: int
    output: EngineOutput
    context_lines: int = 0
    regex: ContentRegex | None = field(default=None, compare=False)
    max_lines: int | None = None


@dataclass(frozen=True, slots=True)
class FileHits:
    """What one file matched.

    Attributes:
        path: relative to the walk root.
        count: number of matching lines (1 with output ``files``; matches with ``occurrences``).
        lines: with output ``lines``: the matching and context lines, in line order (those of
            the first ``ContentQuery.max_lines`` matching lines).
    """

    path: str
    count: int
    lines: tuple[Line, ...] = ()


@dataclass(frozen=True, slots=True)
class Skipped:
    """A file or directory the engine could not read (``path`` relative to the walk root)."""

    path: str
    reason: str


@dataclass(slots=True)
class ListingReport:
    """What a listing or a search passed over: unreadable entries, and files over the size cap
    (a search by ripgrep: those of them that matched)."""

    skipped: list[Skipped] = field(default_factory=list)
    oversize: int = 0


class Engine(Protocol):
    """Walks a directory and searches its files; see the module docstring for the contract."""

    @property
    def name(self) -> str:
        """A short name for progress messages, such as ``ripgrep`` or ``python``."""
        ...

    async def search(
        self, query: ContentQuery, sink: Callable[[FileHits], None], progress: Progress
    ) -> ListingReport:
        """Search every visited file; call ``sink`` once for each file with at least one match.

        Returns:
            The entries that could not be read, and how many files were passed over for being
            larger than ``query.max_file_size``.

        Raises:
            InvalidArguments: the engine refused the pattern or a glob.
            ToolError: the engine failed as a whole.
        """
        ...

    async def list_files(
        self,
        directory: Path,
        filters: WalkFilters,
        sink: Callable[[str], None],
        progress: Progress,
        *,
        max_file_size: int | None = None,
    ) -> ListingReport:
        """Call ``sink`` with the relative path of every visited regular file.

        With ``max_file_size``, larger files are left out and counted in ``oversize``.
        """
        ...
