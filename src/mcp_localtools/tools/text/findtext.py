"""findtext: the lines of a text file that match a substring, a regex or a block of lines, with context.

``substring`` and ``regex`` test each line after trimming it (one match per line); ``regex`` is
RE2 syntax run by RE2 (``google-re2``), so matching is linear in the line's length whatever the
pattern: no catastrophic backtracking. ``lineBlock`` matches a block of lines compared trimmed.
``contextLines`` defaults to 5 when omitted; ``reachedMaxMatches`` is true only when more
matches exist than were returned (the seed set it when the count reached the maximum). Output
over the result budget, or over 4000 window lines, is cut and says so (``truncated``) instead of
failing, in the text and the structured result alike: matches that do not fit are left out, and
when the first match's window alone does not fit, its context is narrowed (and, if the match
alone is too big, its lines are cut).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from functools import partial
from itertools import accumulate, islice
from typing import Annotated, Any, Literal, Self

from pydantic import Field, model_validator
from pydantic_core import PydanticCustomError

from mcp_localtools.config import LimitsConfig
from mcp_localtools.errors import InvalidArguments, RegexError
from mcp_localtools.offload import offload
from mcp_localtools.policy.paths import PathPolicy
from mcp_localtools.regexes import compile_re2
from mcp_localtools.results import ToolResult, fit_within
from mcp_localtools.spec import READ_ONLY, ToolArgs, ToolOutput, ToolSpec, any_case
from mcp_localtools.tools.text._lines import block_starts, check_no_overlap, line_list, trimmed
from mcp_localtools.tools.text._textfile import read_text
from mcp_localtools.tools.text.readtextrange import NumberedLine
from mcp_localtools.workspace import Workspace

__all__ = ["FindTextArgs", "FindTextResult", "find_text", "spec"]

MAX_CONTEXT_LINES = 2000
MAX_MATCHES = 500
MAX_WINDOW_LINES = 4000
_QueryTypes = Literal["substring", "regex", "lineBlock"]
QueryType = Annotated[_QueryTypes, any_case(_QueryTypes)]


class FindTextArgs(ToolArgs):
    path: str = Field(description="UTF-8 text file.")
    query_type: QueryType = Field(
        "substring",
        description=(
            "`substring` (case-sensitive) or `regex` on each trimmed line; `lineBlock`: matchLines, trimmed."
        ),
    )
    query: str = Field("", description="Text or RE2 pattern (substring, regex).")
    match_lines: list[str] = Field(default_factory=list, description="lineBlock: the lines.")
    context_lines: int = Field(
        5, ge=0, le=MAX_CONTEXT_LINES, description="Lines before and after each match."
    )
    max_matches: int = Field(10, ge=1, le=MAX_MATCHES, description="Stop after this many matches.")

    @model_validator(mode="after")
    def _query_or_lines(self) -> Self:
        if self.query_type == "lineBlock":
            if self.query.strip():
                raise PydanticCustomError("conflict", "query must be empty for queryType lineBlock", {})
            if not self.match_lines:
                raise PydanticCustomError(
                    "argument_missing", "matchLines is required for queryType lineBlock", {}
                )
        else:
            if self.match_lines:
                raise PydanticCustomError(
                    "conflict", f"matchLines is only for queryType lineBlock, not {self.query_type}", {}
                )
            if not self.query.strip():
                raise PydanticCustomError(
                    "argument_missing", f"query is required for queryType {self.query_type}", {}
                )
        return self


class TextMatch(ToolOutput):
    match_start_line: int = Field(description="1-based first line of the match.")
    match_end_line: int = Field(description="1-based last line of the match.")
    matched_lines_with_context: list[NumberedLine] = Field(description="The match with its context lines.")


class FindTextResult(ToolOutput):
    path: str = Field(description="Absolute path of the file.")
    sha256: str = Field(description="SHA-256 of the file (pass it as expectedSha256 to an edit).")
    matches_returned: int = Field(description="Number of matches returned.")
    reached_max_matches: bool = Field(description="True when more matches exist than maxMatches allowed.")
    truncated: bool = Field(
        description=(
            "True when matches were left out, or the first match's window was cut, to fit the result "
            "budget or 4000 lines (reduce contextLines)."
        )
    )
    matches: list[TextMatch] = Field(description="The matches in file order.")


def _regex(pattern: str) -> Any:
    try:
        return compile_re2(pattern)
    except RegexError as exc:
        raise InvalidArguments(
            f"invalid regex {pattern!r}: {exc.reason} (RE2 syntax: no backreferences or lookaround)"
        ) from exc


def _spans(args: FindTextArgs, file_trimmed: list[str]) -> Iterator[tuple[int, int]]:
    if args.query_type == "lineBlock":
        block = line_list(args.match_lines)
        starts = block_starts(file_trimmed, block, limit=args.max_matches + 1)
        check_no_overlap(starts, len(block), "matchLines")
        yield from ((s, s + len(block) - 1) for s in starts)
    elif args.query_type == "substring":
        query = args.query.strip()
        yield from ((i, i) for i, line in enumerate(file_trimmed) if query in line)
    else:
        regex = _regex(args.query)
        yield from ((i, i) for i, line in enumerate(file_trimmed) if regex.search(line))


def _fit_window(
    lines: Sequence[str], first: int, last: int, context: int, width: int, room: int
) -> tuple[list[tuple[int, str]], str]:
    """The rows of the first match's window (0-based lines ``first..last`` with ``context``
    lines around) when the whole window is over ``room`` characters of output or
    ``MAX_WINDOW_LINES`` lines, and a note saying what was left out.

    The context is narrowed to the most lines (the same number on each side) that fit; when
    even the match alone does not fit, its lines are given while they fit and the line that does
    not is cut to what is left (the match's first line is always there, cut if need be).
    """
    lo, hi = max(0, first - context), min(len(lines) - 1, last + context)
    sums = list(accumulate((width + 3 + len(lines[n]) for n in range(lo, hi + 1)), initial=0))

    def bounds(around: int) -> tuple[int, int]:
        return max(lo, first - around), min(hi, last + around)

    def fits(around: int) -> bool:
        a, b = bounds(around)
        return b - a < MAX_WINDOW_LINES and sums[b - lo + 1] - sums[a - lo] <= room

    limit = f"over the result budget or {MAX_WINDOW_LINES} lines"
    if fits(0):
        good, bad = 0, context  # fits(good) and not fits(bad): the whole window did not fit
        while bad - good > 1:
            mid = (good + bad) // 2
            good, bad = (mid, bad) if fits(mid) else (good, mid)
        a, b = bounds(good)
        note = f"match 1's window is {limit}: its context was cut to {good} line(s) each side"
        return [(n, lines[n]) for n in range(a, b + 1)], note
    rows: list[tuple[int, str]] = []
    for n in range(first, last + 1):
        cost = width + 3 + len(lines[n])  # "  12: text" and its line break
        if len(rows) == MAX_WINDOW_LINES or (rows and room <= width + 3):
            break
        rows.append((n, lines[n][: max(room - width - 3, 0)]))
        room -= cost
    end, shown = rows[-1]
    note = f"match 1 alone is {limit}: no context is shown"
    if end < last:
        note += f", lines {end + 2}-{last + 1} of the match are left out"
    if len(shown) < len(lines[end]):
        note += f", line {end + 1} shows {len(shown)} of its {len(lines[end])} characters"
    return rows, note


def find_text(args: FindTextArgs, *, paths: PathPolicy, limits: LimitsConfig) -> ToolResult:
    """The findtext tool body (runs in a worker thread).

    Matches are returned in file order while their windows fit the result budget
    (``max_result_chars`` less a reserve for the header and notes, in characters of the text
    output) and ``MAX_WINDOW_LINES`` lines in all; a first window that alone is over either is
    narrowed or cut (``_fit_window``). ``truncated`` says whether anything was left out or cut.
    """
    file = read_text(paths, args.path, limits)
    lines = file.doc.lines
    spans = list(islice(_spans(args, trimmed(lines)), args.max_matches + 1))
    more = len(spans) > args.max_matches
    spans = spans[: args.max_matches]
    width = len(str(max(len(lines), 1)))

    def build(payload: int) -> ToolResult:
        budget = max(payload, 100)
        used = window_lines = 0
        matches: list[TextMatch] = []
        blocks: list[str] = []
        window_note = ""  # set when the first match's window alone was over a limit and was cut
        for first, last in spans:
            lo = max(0, first - args.context_lines)
            hi = min(len(lines) - 1, last + args.context_lines)
            where = f"line {first + 1}" if first == last else f"lines {first + 1}-{last + 1}"
            header = f"-- match {len(matches) + 1}: {where}"
            size = len(header) + sum(width + 3 + len(lines[n]) for n in range(lo, hi + 1))
            rows = [(n, lines[n]) for n in range(lo, hi + 1)]
            if used + size > budget or window_lines + len(rows) > MAX_WINDOW_LINES:
                if matches:
                    break
                room = budget - len(header)
                rows, window_note = _fit_window(lines, first, last, args.context_lines, width, room)
            text_rows = [f"{n + 1:>{width}}{':' if first <= n <= last else '-'} {text}" for n, text in rows]
            block = "\n".join([header, *text_rows])
            used += len(block) + 1
            window_lines += len(rows)
            blocks.append(block)
            matches.append(
                TextMatch(
                    match_start_line=first + 1,
                    match_end_line=last + 1,
                    matched_lines_with_context=[
                        NumberedLine(line_number=n + 1, text=text) for n, text in rows
                    ],
                )
            )
        left_out = len(spans) - len(matches)
        truncated = left_out > 0 or bool(window_note)
        result = FindTextResult(
            path=str(file.path),
            sha256=file.sha256,
            matches_returned=len(matches),
            reached_max_matches=more,
            truncated=truncated,
            matches=matches,
        )
        head = f"{file.path}: {len(matches)} match{'es' if len(matches) != 1 else ''}"
        notes = []
        if window_note:
            notes.append(window_note)
        if left_out:
            notes.append(
                f"{left_out} more matches were left out to fit the result; reduce contextLines or maxMatches"
            )
        if more:
            notes.append(
                f"more matches exist after the first {args.max_matches}; raise maxMatches to see them"
            )
        return ToolResult.of(result, text="\n".join([head, *blocks, *(f"[{note}]" for note in notes)]))

    # Each line goes twice (the text, a structured object): less than half the budget for the text.
    return fit_within(build, limits.max_result_chars, limits.max_result_chars * 2 // 5)


def spec(workspace: Workspace) -> ToolSpec[Any]:
    """The findtext tool, bound to ``workspace``."""
    paths = workspace.paths
    limits = workspace.limits
    return ToolSpec(
        name="findtext",
        title="Find text in a file",
        description=(
            "Find lines in one UTF-8 file; returns line numbers with context. For many files use searchfiles."
        ),
        args_model=FindTextArgs,
        result_model=FindTextResult,
        handler=offload(partial(find_text, paths=paths, limits=limits)),
        annotations=READ_ONLY,
    )
