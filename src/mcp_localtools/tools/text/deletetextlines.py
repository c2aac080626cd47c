"""deletetextlines: delete a block of lines from a UTF-8 text file.

The block is found as ``_blocks.find_blocks`` says; all of its ``expectedDeletions`` matches are
deleted in one pass. Deleting every line leaves an empty file.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from pydantic import Field

from mcp_localtools import compat
from mcp_localtools.config import LimitsConfig
from mcp_localtools.files.locks import FileLocks
from mcp_localtools.offload import offload
from mcp_localtools.policy.paths import PathPolicy
from mcp_localtools.results import ToolResult
from mcp_localtools.spec import DESTRUCTIVE, ToolSpec, changes_at
from mcp_localtools.tools.text._blocks import BlockArgs, block_numbers, find_blocks
from mcp_localtools.tools.text._lines import splice_many
from mcp_localtools.tools.text._report import EditedFile, edit_report
from mcp_localtools.tools.text._textfile import check_edit, edit_text
from mcp_localtools.workspace import Workspace

__all__ = ["DeleteTextLinesArgs", "DeleteTextLinesResult", "delete_text_lines", "spec"]


class DeleteTextLinesArgs(BlockArgs):
    expected_deletions: int = Field(1, ge=1, description="Matches required; all are deleted.")


class DeleteTextLinesResult(EditedFile):
    deletions_made: int = Field(description="Number of blocks deleted.")
    deleted_at_lines: list[int] = Field(
        description="1-based first line of each deleted block, before the edit."
    )


def delete_text_lines(
    args: DeleteTextLinesArgs, *, paths: PathPolicy, limits: LimitsConfig, locks: FileLocks
) -> ToolResult:
    """The deletetextlines tool body (runs in a worker thread)."""
    with edit_text(paths, args.path, limits, locks, expected_sha256=args.expected_sha256) as target:
        block, starts = find_blocks(target.doc, args, args.expected_deletions, "delete", target.path)
        text = splice_many(target.doc, [(s, s + len(block), []) for s in starts]).render()
        saved = target.save(text)
        return edit_report(
            DeleteTextLinesResult,
            target,
            text,
            saved,
            budget=limits.max_result_chars,
            summary=f"deleted {len(starts)} block(s) at line(s) {block_numbers(starts)} of {target.path}",
            deletions_made=len(starts),
            deleted_at_lines=[s + 1 for s in starts],
        )


def spec(workspace: Workspace) -> ToolSpec[Any]:
    """The deletetextlines tool, bound to ``workspace``."""
    return ToolSpec(
        name="deletetextlines",
        title="Delete lines from a text file",
        description=(
            "Delete a block of lines from a UTF-8 file; a wrong match count is an error listing the "
            "matches. Keeps line endings, BOM, final newline; atomic; returns diff and sha256."
        ),
        args_model=DeleteTextLinesArgs,
        result_model=DeleteTextLinesResult,
        handler=offload(
            partial(delete_text_lines, paths=workspace.paths, limits=workspace.limits, locks=workspace.locks)
        ),
        check=offload(partial(check_edit, paths=workspace.paths)),
        changes=changes_at("path"),
        annotations=DESTRUCTIVE,
        unsupported=compat.why_unsupported(dir_fd=True),
    )
