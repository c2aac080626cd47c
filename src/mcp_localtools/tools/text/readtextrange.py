"""readtextrange: a range of a text file's lines, by marker blocks or line numbers, paged.

A range is given by marker blocks (``startMatchLines``/``endMatchLines``, each must match exactly
once, trimmed comparison, both blocks included) or by line numbers, or a mix (one of each per
side). A selection longer than the line window (2000 by default) or the result budget is not an
error (the seed refused it): the first window comes back with ``nextStartLine``.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any, Self

from pydantic import Field, model_validator
from pydantic_core import PydanticCustomError

from mcp_localtools.config import LimitsConfig
from mcp_localtools.errors import InvalidArguments
from mcp_localtools.offload import offload
from mcp_localtools.policy.paths import PathPolicy
from mcp_localtools.results import ToolResult, fit_within
from mcp_localtools.spec import READ_ONLY, ToolArgs, ToolOutput, ToolSpec
from mcp_localtools.toolnames import served
from mcp_localtools.tools.text._lines import line_list, trimmed, unique_block
from mcp_localtools.tools.text._textfile import read_text
from mcp_localtools.workspace import Workspace

__all__ = [
    "NumberedLine",
    "ReadTextRangeArgs",
    "ReadTextRangeResult",
    "read_text_range",
    "spec",
]

_RESERVE = 400  # room in the budget for the header and the notes


class ReadTextRangeArgs(ToolArgs):
    path: str = Field(description="UTF-8 text file.")
    start_match_lines: list[str] = Field(default_factory=list, description="Start marker lines.")
    end_match_lines: list[str] = Field(default_factory=list, description="End marker lines.")
    start_line: int | None = Field(None, ge=1, description="1-based first line.")
    end_line: int | None = Field(
        None,
        ge=1,
        description="1-based last line, included; may pass the end.",
    )

    @model_validator(mode="after")
    def _one_way_per_side(self) -> Self:
        for lines, number, side in (
            (self.start_match_lines, self.start_line, "start"),
            (self.end_match_lines, self.end_line, "end"),
        ):
            if lines and number is not None:
                raise PydanticCustomError("conflict", f"give {side}MatchLines or {side}Line, not both", {})
        if self.start_line and self.end_line and self.end_line < self.start_line:
            raise PydanticCustomError(
                "conflict", f"endLine {self.end_line} is before startLine {self.start_line}", {}
            )
        return self


class NumberedLine(ToolOutput):
    line_number: int = Field(description="1-based line number.")
    text: str = Field(description="The line as it is in the file, without its line ending.")


class ReadTextRangeResult(ToolOutput):
    path: str = Field(description="Absolute path of the file.")
    sha256: str = Field(description="SHA-256 of the file (pass it as expectedSha256 to an edit).")
    total_lines: int = Field(description="Lines in the whole file.")
    start_line: int | None = Field(None, description="1-based first returned line; absent when none.")
    end_line: int | None = Field(None, description="1-based last returned line; absent when none.")
    lines_returned: int = Field(description="Number of lines returned.")
    text: str = Field(
        description="Lines startLine..endLine as in the file, joined with \\n (line endings not kept)."
    )
    next_start_line: int | None = Field(
        None, description="Set when the range goes on: call again with startLine set to it (same end)."
    )
    truncated: bool = Field(
        description="True when the range was cut by the line window or the result budget."
    )


def read_text_range(args: ReadTextRangeArgs, *, paths: PathPolicy, limits: LimitsConfig) -> ToolResult:
    """The readtextrange tool body (runs in a worker thread)."""
    file = read_text(paths, args.path, limits)
    lines = file.doc.lines
    total = len(lines)
    file_trimmed = trimmed(lines)
    start, start_block_end = 0, 0
    if args.start_match_lines:
        block = line_list(args.start_match_lines)
        start = unique_block(lines, file_trimmed, block, "startMatchLines", file.path)
        start_block_end = start + len(block)
    elif args.start_line is not None:
        if args.start_line > max(total, 1):
            raise InvalidArguments(
                f"startLine {args.start_line} is past the end of {file.path} ({total} lines)"
            )
        start = start_block_end = args.start_line - 1
    stop = total
    if args.end_match_lines:
        block = line_list(args.end_match_lines)
        end_start = unique_block(lines, file_trimmed, block, "endMatchLines", file.path)
        if end_start < start_block_end:
            what = "startMatchLines" if args.start_match_lines else "startLine"
            raise InvalidArguments(
                f"endMatchLines occurs before (or overlaps) {what} (start at line {start + 1}, end at line "
                f"{end_start + 1})"
            )
        stop = end_start + len(block)
    elif args.end_line is not None:
        if args.end_line <= start:
            raise InvalidArguments(
                f"endLine {args.end_line} is before the start of the range (line {start + 1})"
            )
        stop = min(args.end_line, total)

    budget = limits.max_result_chars
    # The lines go in both copies (numbered in the text, plain in structuredContent.text), and
    # the budget bounds each copy: start from all of it, fit_within cuts back what JSON escapes add.
    return fit_within(
        partial(_window, file.path, file.sha256, lines, start, stop, limits.read_max_lines),
        budget,
        budget - _RESERVE,
    )


def _window(
    path: Any, sha256: str, lines: Sequence[str], start: int, stop: int, max_lines: int, payload: int
) -> ToolResult:
    """The result for lines ``start+1..stop`` (0-based ``start``), at most ``max_lines`` of them
    and ``payload`` characters of numbered text."""
    total = len(lines)
    width = len(str(max(stop, 1)))
    budget = max(payload, 100)
    shown: list[tuple[int, str]] = []
    used = 0
    cut_line = None
    for number in range(start + 1, min(stop, start + max_lines) + 1):
        size = width + len(lines[number - 1]) + 2
        if used + size > budget:
            if not shown:  # one line alone is over the budget: show its head
                shown.append((number, lines[number - 1][: budget - width - 2]))
                cut_line = number
            break
        shown.append((number, lines[number - 1]))
        used += size
    last = start + len(shown)
    next_start = last + 1 if last < stop else None
    result = ReadTextRangeResult(
        path=str(path),
        sha256=sha256,
        total_lines=total,
        start_line=start + 1 if shown else None,
        end_line=last if shown else None,
        lines_returned=len(shown),
        text="\n".join(text for _, text in shown),
        next_start_line=next_start,
        truncated=next_start is not None or cut_line is not None,
    )
    header = (
        f"{path}: lines {start + 1}-{last} of {total}" if shown else f"{path}: no lines ({total} in file)"
    )
    notes = []
    if cut_line is not None:
        notes.append(f"line {cut_line} is longer than the result budget and was cut")
    if next_start is not None:
        notes.append(
            f"the range goes on to line {stop}: call {served('readtextrange')} with startLine={next_start} "
            "(and the same end) to continue"
        )
    text = "\n".join([header, *(f"{n:>{width}}\t{t}" for n, t in shown), *(f"[{note}]" for note in notes)])
    return ToolResult.of(result, text=text)


def spec(workspace: Workspace) -> ToolSpec[Any]:
    """The readtextrange tool, bound to ``workspace``."""
    paths = workspace.paths
    limits = workspace.limits
    return ToolSpec(
        name="readtextrange",
        title="Read lines of a text file",
        description=(
            "Read numbered lines of a UTF-8 file: between marker lines (included; each must match once, "
            "trimmed) or by startLine/endLine; with neither, the whole file. At most "
            f"{limits.read_max_lines} lines per call; nextStartLine continues. Returns sha256 for "
            "expectedSha256."
        ),
        args_model=ReadTextRangeArgs,
        result_model=ReadTextRangeResult,
        handler=offload(partial(read_text_range, paths=paths, limits=limits)),
        annotations=READ_ONLY,
    )
