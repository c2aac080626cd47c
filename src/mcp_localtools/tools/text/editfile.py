"""editfile: exact-text edits, applied in order in memory, all or nothing.

Each edit's ``oldText`` is matched by the ladder of ``_match.py`` against the text as the earlier
edits left it; if any edit fails, nothing is written. ``dryRun`` returns the diff without
writing; a real run returns the diff too and the new ``sha256``. The file's line endings (a
CRLF file stays CRLF), BOM, final-newline state and mode are kept.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from pydantic import Field, field_validator
from pydantic_core import PydanticCustomError

from mcp_localtools import compat
from mcp_localtools.config import LimitsConfig
from mcp_localtools.errors import AmbiguousMatch, NoMatch
from mcp_localtools.files.locks import FileLocks
from mcp_localtools.offload import offload
from mcp_localtools.policy.paths import PathPolicy
from mcp_localtools.results import ToolResult
from mcp_localtools.spec import DESTRUCTIVE, DRY_RUN, ToolArgs, ToolOutput, ToolSpec, changes_at
from mcp_localtools.toolnames import served_text
from mcp_localtools.tools.text._lines import BOM, newline_style
from mcp_localtools.tools.text._match import MatchKind, MatchMode, apply_edit
from mcp_localtools.tools.text._report import EditedFile, edit_report, expected_sha256_field
from mcp_localtools.tools.text._textfile import check_edit, edit_text
from mcp_localtools.workspace import Workspace

__all__ = ["EditFileArgs", "EditFileResult", "TextEdit", "edit_file", "spec"]

MAX_EDITS = 100


class TextEdit(ToolArgs):
    old_text: str = Field(description="Exact text from the file, enough lines to be unique; not empty.")
    new_text: str = Field(
        description=r"Inserted literally; empty deletes. regex: \1, \g<name> insert groups, \\ a backslash."
    )
    expected_replacements: int = Field(1, ge=1, description="Places oldText must match; all are replaced.")
    replace_all: bool = Field(
        False, description="Replace every match (at least one); ignores expectedReplacements."
    )
    match: MatchMode = Field(
        "literal",
        description=(
            "literal: exact, else ignoring line endings, else trimmed lines; wholeWord: not "
            "inside a longer word (renames); regex: oldText is RE2, ^ and $ at every line."
        ),
    )

    @field_validator("old_text")
    @classmethod
    def _not_empty(cls, text: str) -> str:
        if not text:
            raise PydanticCustomError(
                "empty",
                served_text(
                    "oldText must not be empty (to add lines use inserttextlines; a new file: writefile)"
                ),
                {},
            )
        return text


class EditFileArgs(ToolArgs):
    path: str = Field(description="UTF-8 text file.")
    edits: list[TextEdit] = Field(
        min_length=1,
        max_length=MAX_EDITS,
        description="Applied in order; all succeed or nothing is written.",
    )
    dry_run: bool = Field(False, description="Only return the diff; write nothing.")
    expected_sha256: str | None = expected_sha256_field()


LISTED_RANGES = 200
"""Line ranges an edit lists at most: 60,000 replacements once listed 60,000 ranges, which crowded
the diff out of the result budget."""


class LineRange(ToolOutput):
    start_line: int = Field(description="1-based first line replaced.")
    end_line: int = Field(description="1-based last line replaced.")


class AppliedEdit(ToolOutput):
    match: MatchKind = Field(
        description=(
            "How oldText matched: exact, lineEndings (CRLF read as LF), whitespace (lines "
            "compared trimmed), wholeWord or regex."
        )
    )
    replacements: int = Field(description="Number of places replaced.")
    lines: list[LineRange] = Field(
        description=f"The replaced lines (the first {LISTED_RANGES}; replacements counts them all), "
        "counted in the text this edit was applied to (the file for edit 0)."
    )


class EditFileResult(EditedFile):
    dry_run: bool = Field(description="True when nothing was written.")
    edits: list[AppliedEdit] = Field(description="One entry per edit, in order.")


def _keep_final_newline(before: str, after: str, newline: str) -> str:
    if before.endswith("\n") and after and not after.endswith("\n"):
        return after + newline
    if not before.endswith("\n") and after.endswith("\n"):
        return after[:-2] if after.endswith("\r\n") else after[:-1]
    return after


def edit_file(args: EditFileArgs, *, paths: PathPolicy, limits: LimitsConfig, locks: FileLocks) -> ToolResult:
    """The editfile tool body (runs in a worker thread)."""
    with edit_text(paths, args.path, limits, locks, expected_sha256=args.expected_sha256) as target:
        text = target.file.text  # edits work on the text: no line split of the whole file
        bom = text.startswith(BOM)
        original = body = text[1:] if bom else text
        newline = newline_style(body)
        applied: list[AppliedEdit] = []
        notes: list[str] = []
        for k, edit in enumerate(args.edits):
            old, new = edit.old_text, edit.new_text
            if bom and old.startswith(BOM):
                old, new = old[1:], new.removeprefix(BOM)
            where = (
                str(target.path)
                if k == 0
                else f"{target.path} as edits[0..{k - 1}] left it (lines count there)"
            )
            try:
                body, done = apply_edit(
                    body,
                    old,
                    new,
                    expected=edit.expected_replacements,
                    newline=newline,
                    what=f"edits[{k}].oldText",
                    where=where,
                    replace_all=edit.replace_all,
                    match=edit.match,
                    new_what=f"edits[{k}].newText",
                )
            except (NoMatch, AmbiguousMatch) as exc:
                if len(args.edits) == 1:
                    raise
                raise type(exc)(f"{exc.message}\nNo edit was applied (edits are all or nothing).") from exc
            if done.kind in ("lineEndings", "whitespace"):
                how = (
                    "CRLF read as LF"
                    if done.kind == "lineEndings"
                    else "lines compared without leading/trailing whitespace"
                )
                notes.append(f"edits[{k}] had no exact match and matched with {how}: check the diff")
            applied.append(
                AppliedEdit(
                    match=done.kind,
                    replacements=len(done.lines),
                    lines=[LineRange(start_line=a, end_line=b) for a, b in done.lines[:LISTED_RANGES]],
                )
            )
        body = _keep_final_newline(original, body, newline)
        count = sum(a.replacements for a in applied)
        verb = "would apply" if args.dry_run else "applied"
        summary = f"{verb} {len(applied)} edit(s), {count} replacement(s) to {target.path}"
        text = BOM + body if bom else body
        saved = target.preview(text) if args.dry_run else target.save(text)
        return edit_report(
            EditFileResult,
            target,
            text,
            saved,
            budget=limits.max_result_chars,
            summary=summary,
            notes=notes,
            dry_run=args.dry_run,
            edits=applied,
        )


def spec(workspace: Workspace) -> ToolSpec[Any]:
    """The editfile tool, bound to ``workspace``."""
    paths = workspace.paths
    limits = workspace.limits
    locks = workspace.locks
    return ToolSpec(
        name="editfile",
        title="Edit a text file",
        description=(
            "Replace text in a UTF-8 file. A wrong match count is an error listing the matches (none: "
            "the closest region). Keeps line endings, BOM, final newline, mode; atomic; returns diff "
            "and sha256."
        ),
        args_model=EditFileArgs,
        result_model=EditFileResult,
        handler=offload(partial(edit_file, paths=paths, limits=limits, locks=locks)),
        check=offload(partial(check_edit, paths=paths)),
        changes=changes_at("path"),
        annotations=DESTRUCTIVE,
        preview=DRY_RUN,
        unsupported=compat.why_unsupported(dir_fd=True),
    )
