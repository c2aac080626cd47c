"""replacetextlines and deletetextlines (``seed-tools.md`` 4.5 RP-1..RP-8, 4.6 DL-1..DL-5).

A block matches where its lines equal the file's after trimming, with ``beforeLines`` directly
above and ``afterLines`` directly below when given. The number of matches must be exactly the
expected one (default 1), or nothing is written and the error lists every match's line (or, with
none, the closest region). All matches are changed, from the bottom up; the reported lines are
1-based and count in the file before the edit. Deleting every line leaves an empty file (DL-4
fixed); replacement lines are written verbatim.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from pydantic import Field, field_validator
from pydantic_core import PydanticCustomError

from mcp_localtools.config import LimitsConfig
from mcp_localtools.errors import AmbiguousMatch, NoMatch
from mcp_localtools.fswrite import FileLocks
from mcp_localtools.policy.paths import PathPolicy
from mcp_localtools.registry import DESTRUCTIVE, ToolArgs, ToolSpec
from mcp_localtools.results import ToolResult
from mcp_localtools.tools.offload import offload
from mcp_localtools.tools.text.lines import (
    LISTED_LINES,
    TextLines,
    block_starts,
    check_no_overlap,
    context_starts,
    format_line_numbers,
    line_list,
    splice_many,
    trimmed,
)
from mcp_localtools.tools.text.report import EditedFile, edit_result, expected_sha256_field
from mcp_localtools.tools.text.similar import closest_hint
from mcp_localtools.tools.text.textfile import edit_text

__all__ = [
    "DeleteTextLinesArgs",
    "DeleteTextLinesResult",
    "ReplaceTextLinesArgs",
    "ReplaceTextLinesResult",
    "block_specs",
    "delete_text_lines",
    "replace_text_lines",
]


class _BlockArgs(ToolArgs):
    path: str = Field(description="UTF-8 text file, absolute or relative to the base directory.")
    match_lines: list[str] = Field(min_length=1, description="The block of lines to find, compared trimmed.")
    before_lines: list[str] | None = Field(
        None, min_length=1, description="Lines that must sit directly above the block (context, not changed)."
    )
    after_lines: list[str] | None = Field(
        None, min_length=1, description="Lines that must sit directly below the block (context, not changed)."
    )
    expected_sha256: str | None = expected_sha256_field()


class ReplaceTextLinesArgs(_BlockArgs):
    replace_with_lines: list[str] = Field(
        json_schema_extra={"minItems": 1},
        description='The new lines, verbatim ([""] leaves one blank line; to delete use deletetextlines).',
    )
    expected_replacements: int = Field(
        1, ge=1, description="Exact number of matches required; all are replaced."
    )

    @field_validator("replace_with_lines")
    @classmethod
    def _not_a_deletion(cls, lines: list[str]) -> list[str]:
        if not lines:
            raise PydanticCustomError(
                "deletion",
                "an empty replaceWithLines would delete: deletion is not supported here, use deletetextlines",
                {},
            )
        return lines


class DeleteTextLinesArgs(_BlockArgs):
    expected_deletions: int = Field(1, ge=1, description="Exact number of matches required; all are deleted.")


class ReplaceTextLinesResult(EditedFile):
    replacements_made: int = Field(description="Number of blocks replaced.")
    replaced_at_lines: list[int] = Field(
        description="1-based first line of each replaced block, before the edit."
    )


class DeleteTextLinesResult(EditedFile):
    deletions_made: int = Field(description="Number of blocks deleted.")
    deleted_at_lines: list[int] = Field(
        description="1-based first line of each deleted block, before the edit."
    )


def _find(
    doc: TextLines, args: _BlockArgs, expected: int, verb: str, path: Path
) -> tuple[list[str], list[int]]:
    block = line_list(args.match_lines)
    before = line_list(args.before_lines or [])
    after = line_list(args.after_lines or [])
    file_trimmed = trimmed(doc.lines)
    limit = expected + LISTED_LINES
    starts = context_starts(file_trimmed, block, before=before, after=after, limit=limit)
    check_no_overlap(starts, len(block), "matchLines")
    if len(starts) == expected:
        return block, starts
    capped = len(starts) == limit
    found = f"more than {limit - 1}" if capped else str(len(starts))
    head = f"{verb} match count mismatch: expected {expected}, found {found}"
    if starts:
        raise AmbiguousMatch(
            f"{head} (at lines {_numbers(starts, complete=not capped)}) in {path}; provide tighter "
            "beforeLines/afterLines to disambiguate, or set the expected count"
        )
    alone = block_starts(file_trimmed, block, limit=LISTED_LINES + 1)
    if alone:
        raise NoMatch(
            f"{head} in {path}: matchLines occurs at lines "
            f"{_numbers(alone, complete=len(alone) <= LISTED_LINES)}, but not with the given "
            "beforeLines/afterLines directly around it"
        )
    raise NoMatch(f"{head}: matchLines is not in {path}. {closest_hint(doc.lines, block)}")


def _numbers(starts: Sequence[int], *, complete: bool = True) -> str:
    return format_line_numbers([s + 1 for s in starts], complete=complete)


@dataclass(frozen=True, slots=True)
class _Action:
    verb: str  # in messages: "replace match count mismatch"
    done: str  # in the summary: "replaced 2 block(s)"
    count_field: str  # the result's fields for the number of blocks and their lines
    lines_field: str


_REPLACE = _Action("replace", "replaced", "replacements_made", "replaced_at_lines")
_DELETE = _Action("delete", "deleted", "deletions_made", "deleted_at_lines")


def _edit_blocks(
    model: type[EditedFile],
    action: _Action,
    args: _BlockArgs,
    replacement: Sequence[str],
    expected: int,
    *,
    paths: PathPolicy,
    limits: LimitsConfig,
    locks: FileLocks,
) -> ToolResult:
    """Replace each of the ``expected`` matches of the block with ``replacement`` (an empty one
    deletes), in one pass, and return ``model`` filled in.

    Raises:
        AmbiguousMatch, NoMatch: the block does not match exactly ``expected`` times.
        the errors of ``edit_text`` and ``EditableText.save``.
    """
    with edit_text(paths, args.path, limits, locks, expected_sha256=args.expected_sha256) as target:
        block, starts = _find(target.doc, args, expected, action.verb, target.path)
        new = splice_many(target.doc, [(start, start + len(block), replacement) for start in starts])
        fields: dict[str, Any] = {
            action.count_field: len(starts),
            action.lines_field: [s + 1 for s in starts],
        }
        return edit_result(
            model,
            target,
            new.render(),
            budget=limits.max_result_chars,
            summary=f"{action.done} {len(starts)} block(s) at line(s) {_numbers(starts)} of {target.path}",
            **fields,
        )


def replace_text_lines(
    args: ReplaceTextLinesArgs, *, paths: PathPolicy, limits: LimitsConfig, locks: FileLocks
) -> ToolResult:
    """The replacetextlines tool body (runs in a worker thread)."""
    replacement = line_list(args.replace_with_lines)
    return _edit_blocks(
        ReplaceTextLinesResult,
        _REPLACE,
        args,
        replacement,
        args.expected_replacements,
        paths=paths,
        limits=limits,
        locks=locks,
    )


def delete_text_lines(
    args: DeleteTextLinesArgs, *, paths: PathPolicy, limits: LimitsConfig, locks: FileLocks
) -> ToolResult:
    """The deletetextlines tool body (runs in a worker thread)."""
    return _edit_blocks(
        DeleteTextLinesResult,
        _DELETE,
        args,
        [],
        args.expected_deletions,
        paths=paths,
        limits=limits,
        locks=locks,
    )


def block_specs(paths: PathPolicy, limits: LimitsConfig, locks: FileLocks) -> list[ToolSpec[Any]]:
    """The replacetextlines and deletetextlines specs."""
    common = (
        "(compared trimmed), optionally with beforeLines/afterLines directly around it. The number of "
        "matches must equal {count} (default 1) or nothing changes and the error lists them. Line endings, "
        "BOM and final newline are kept; the write is atomic. Returns the diff and the new sha256."
    )
    return [
        ToolSpec(
            name="replacetextlines",
            group="text",
            title="Replace lines in a text file",
            description="Replace a block of lines in a UTF-8 text file with new lines (verbatim). The block "
            + common.format(count="expectedReplacements")
            + " For a substring edit use editfile.",
            args_model=ReplaceTextLinesArgs,
            result_model=ReplaceTextLinesResult,
            handler=offload(partial(replace_text_lines, paths=paths, limits=limits, locks=locks)),
            annotations=DESTRUCTIVE,
        ),
        ToolSpec(
            name="deletetextlines",
            group="text",
            title="Delete lines from a text file",
            description="Delete a block of lines from a UTF-8 text file. The block "
            + common.format(count="expectedDeletions"),
            args_model=DeleteTextLinesArgs,
            result_model=DeleteTextLinesResult,
            handler=offload(partial(delete_text_lines, paths=paths, limits=limits, locks=locks)),
            annotations=DESTRUCTIVE,
        ),
    ]
