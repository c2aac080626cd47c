"""inserttextlines: insert lines at the start, the end, a line number, or before or after an anchor block.

Lines go in verbatim (no re-indentation) with the file's newline style; the file's other bytes,
its BOM and its final-newline state are kept. ``insertedAtLine`` is the first inserted line's
number in the new file; ``anchorMatchedAtLine`` counts in the file before the edit.
"""

from __future__ import annotations

from functools import partial
from typing import Annotated, Any, Literal, Self

from pydantic import Field, field_validator, model_validator
from pydantic_core import PydanticCustomError

from mcp_localtools import compat
from mcp_localtools.config import LimitsConfig
from mcp_localtools.errors import InvalidArguments
from mcp_localtools.files.locks import FileLocks
from mcp_localtools.offload import offload
from mcp_localtools.policy.paths import PathPolicy
from mcp_localtools.results import ToolResult
from mcp_localtools.spec import DESTRUCTIVE, ToolArgs, ToolSpec, any_case, changes_at
from mcp_localtools.tools.text._lines import line_list, splice, trimmed, unique_block
from mcp_localtools.tools.text._report import EditedFile, edit_report, expected_sha256_field
from mcp_localtools.tools.text._textfile import check_edit, edit_text
from mcp_localtools.workspace import Workspace

__all__ = ["InsertTextLinesArgs", "InsertTextLinesResult", "insert_text_lines", "spec"]

_Positions = Literal["start", "end", "beforeAnchor", "afterAnchor", "lineNumber"]
Position = Annotated[_Positions, any_case(_Positions)]


class InsertTextLinesArgs(ToolArgs):
    path: str = Field(description="UTF-8 text file.")
    lines_to_insert: list[str] = Field(
        json_schema_extra={"minItems": 1},
        description='Inserted verbatim; an item with line breaks is several lines, "" a blank line.',
    )
    position: Position = Field(
        "end",
        description=("Giving lineNumber implies `lineNumber`."),
    )
    anchor_match_lines: list[str] = Field(
        default_factory=list, description="Anchor block; must match once, trimmed."
    )
    line_number: int | None = Field(None, ge=1, description="Number of the first new line; last + 1 appends.")
    clamp: bool = Field(False, description="A lineNumber past the end appends instead of failing.")
    expected_sha256: str | None = expected_sha256_field()

    @field_validator("lines_to_insert")
    @classmethod
    def _not_empty(cls, lines: list[str]) -> list[str]:
        if not lines:
            raise PydanticCustomError("argument_missing", "linesToInsert is required (at least one line)", {})
        return lines

    @model_validator(mode="before")
    @classmethod
    def _line_number_implies_position(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("lineNumber") is not None and "position" not in data:
            return {**data, "position": "lineNumber"}
        return data

    @model_validator(mode="after")
    def _position_arguments(self) -> Self:
        position = self.position
        if position == "lineNumber" and self.line_number is None:
            raise PydanticCustomError("argument_missing", "position lineNumber needs lineNumber", {})
        if position != "lineNumber" and self.line_number is not None:
            raise PydanticCustomError("conflict", f"lineNumber is not used with position {position}", {})
        anchored = position in ("beforeAnchor", "afterAnchor")
        if anchored and not self.anchor_match_lines:
            raise PydanticCustomError("argument_missing", f"position {position} needs anchorMatchLines", {})
        if not anchored and self.anchor_match_lines:
            raise PydanticCustomError(
                "conflict",
                f"anchorMatchLines is only for beforeAnchor/afterAnchor, not position {position}",
                {},
            )
        return self


class InsertTextLinesResult(EditedFile):
    inserted_at_line: int = Field(description="1-based number of the first inserted line in the new file.")
    inserted_line_count: int = Field(description="Number of lines inserted.")
    anchor_matched_at_line: int | None = Field(
        None, description="1-based first line of the anchor block, before the edit."
    )


def insert_text_lines(
    args: InsertTextLinesArgs, *, paths: PathPolicy, limits: LimitsConfig, locks: FileLocks
) -> ToolResult:
    """The inserttextlines tool body (runs in a worker thread)."""
    new_lines = line_list(args.lines_to_insert)
    with edit_text(paths, args.path, limits, locks, expected_sha256=args.expected_sha256) as target:
        doc = target.doc
        anchor_at = None
        if args.position == "start":
            at = 0
        elif args.position == "end":
            at = len(doc)
        elif args.position == "lineNumber":
            assert args.line_number is not None
            if args.line_number > len(doc) + 1 and not args.clamp:
                raise InvalidArguments(
                    f"lineNumber {args.line_number} is past the end of {target.path} ({len(doc)} lines); "
                    f"{len(doc) + 1} appends, or pass clamp=true"
                )
            at = min(args.line_number, len(doc) + 1) - 1  # clamped as LLMC's insert_line is
        else:
            anchor = line_list(args.anchor_match_lines)
            anchor_at = unique_block(doc.lines, trimmed(doc.lines), anchor, "anchorMatchLines", target.path)
            at = anchor_at if args.position == "beforeAnchor" else anchor_at + len(anchor)
        text = splice(doc, at, at, new_lines).render()
        saved = target.save(text)
        where = f"after line {at}" if at else "at the start"
        return edit_report(
            InsertTextLinesResult,
            target,
            text,
            saved,
            budget=limits.max_result_chars,
            summary=f"inserted {len(new_lines)} line(s) {where} of {target.path}",
            inserted_at_line=at + 1,
            inserted_line_count=len(new_lines),
            anchor_matched_at_line=None if anchor_at is None else anchor_at + 1,
        )


def spec(workspace: Workspace) -> ToolSpec[Any]:
    """The inserttextlines tool, bound to ``workspace``."""
    paths = workspace.paths
    limits = workspace.limits
    locks = workspace.locks
    return ToolSpec(
        name="inserttextlines",
        title="Insert lines into a text file",
        description=(
            "Insert lines into a UTF-8 file at a position. Keeps line endings, BOM, final "
            "newline; atomic; returns diff and sha256."
        ),
        args_model=InsertTextLinesArgs,
        result_model=InsertTextLinesResult,
        handler=offload(partial(insert_text_lines, paths=paths, limits=limits, locks=locks)),
        check=offload(partial(check_edit, paths=paths)),
        changes=changes_at("path"),
        annotations=DESTRUCTIVE,
        unsupported=compat.why_unsupported(dir_fd=True),
    )
