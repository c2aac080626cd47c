"""replacetextlines: replace a block of lines in a UTF-8 text file.

The block is found as ``_blocks.find_blocks`` says; all of its ``expectedReplacements`` matches
are replaced in one pass, and the reported lines are 1-based and count in the file before the
edit. Replacement lines are written verbatim.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from pydantic import Field, field_validator
from pydantic_core import PydanticCustomError

from mcp_localtools import compat
from mcp_localtools.config import LimitsConfig
from mcp_localtools.files.locks import FileLocks
from mcp_localtools.offload import offload
from mcp_localtools.policy.paths import PathPolicy
from mcp_localtools.results import ToolResult
from mcp_localtools.spec import DESTRUCTIVE, ToolSpec, changes_at
from mcp_localtools.toolnames import served_text
from mcp_localtools.tools.text._blocks import BlockArgs, block_numbers, find_blocks
from mcp_localtools.tools.text._lines import line_list, splice_many
from mcp_localtools.tools.text._report import EditedFile, edit_report
from mcp_localtools.tools.text._textfile import check_edit, edit_text
from mcp_localtools.workspace import Workspace

__all__ = ["ReplaceTextLinesArgs", "ReplaceTextLinesResult", "replace_text_lines", "spec"]


class ReplaceTextLinesArgs(BlockArgs):
    replace_with_lines: list[str] = Field(
        json_schema_extra={"minItems": 1},
        description='The new lines, verbatim ([""] leaves one blank line).',
    )
    expected_replacements: int = Field(1, ge=1, description="Matches required; all are replaced.")

    @field_validator("replace_with_lines")
    @classmethod
    def _not_a_deletion(cls, lines: list[str]) -> list[str]:
        if not lines:
            raise PydanticCustomError(
                "deletion",
                served_text(
                    "an empty replaceWithLines would delete: deletion is not supported here, "
                    "use deletetextlines"
                ),
                {},
            )
        return lines


class ReplaceTextLinesResult(EditedFile):
    replacements_made: int = Field(description="Number of blocks replaced.")
    replaced_at_lines: list[int] = Field(
        description="1-based first line of each replaced block, before the edit."
    )


def replace_text_lines(
    args: ReplaceTextLinesArgs, *, paths: PathPolicy, limits: LimitsConfig, locks: FileLocks
) -> ToolResult:
    """The replacetextlines tool body (runs in a worker thread)."""
    with edit_text(paths, args.path, limits, locks, expected_sha256=args.expected_sha256) as target:
        block, starts = find_blocks(target.doc, args, args.expected_replacements, "replace", target.path)
        replacement = line_list(args.replace_with_lines)
        text = splice_many(target.doc, [(s, s + len(block), replacement) for s in starts]).render()
        saved = target.save(text)
        return edit_report(
            ReplaceTextLinesResult,
            target,
            text,
            saved,
            budget=limits.max_result_chars,
            summary=f"replaced {len(starts)} block(s) at line(s) {block_numbers(starts)} of {target.path}",
            replacements_made=len(starts),
            replaced_at_lines=[s + 1 for s in starts],
        )


def spec(workspace: Workspace) -> ToolSpec[Any]:
    """The replacetextlines tool, bound to ``workspace``."""
    return ToolSpec(
        name="replacetextlines",
        title="Replace lines in a text file",
        description=(
            "Replace a block of lines in a UTF-8 file; a wrong match count is an error listing the "
            "matches. Keeps line endings, BOM, final newline; atomic; returns diff and sha256. For a "
            "substring edit use editfile."
        ),
        args_model=ReplaceTextLinesArgs,
        result_model=ReplaceTextLinesResult,
        handler=offload(
            partial(replace_text_lines, paths=workspace.paths, limits=workspace.limits, locks=workspace.locks)
        ),
        check=offload(partial(check_edit, paths=workspace.paths)),
        changes=changes_at("path"),
        annotations=DESTRUCTIVE,
        unsupported=compat.why_unsupported(dir_fd=True),
    )
