"""What every editing tool returns: the file's new SHA-256 and the unified diff of the change,
cut to the result budget, so the model can check the edit without reading the file again.

An edit tool reads as load → change → save → report: ``edit_text`` loads, the tool computes
the new text, ``EditableText.save`` (or ``preview`` for a dry run) saves, ``edit_report``
reports."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from pydantic import Field

from mcp_localtools.results import ToolResult, fit_within
from mcp_localtools.spec import ToolOutput
from mcp_localtools.toolnames import served_text
from mcp_localtools.tools.text._diff import MIN_DIFF_CHARS, diff_within, unified_diff
from mcp_localtools.tools.text._textfile import EditableText, Saved

__all__ = ["EditedFile", "edit_report", "expected_sha256_field"]

_SHA256_PATTERN = r"^[0-9a-fA-F]{64}$"
_RESERVE = 2000  # room in the result budget for the summary and notes


def expected_sha256_field() -> Any:
    """The ``expectedSha256`` argument every editing tool takes."""
    return Field(
        None,
        pattern=_SHA256_PATTERN,
        description="Refuse if the file's SHA-256 differs.",
    )


class EditedFile(ToolOutput):
    path: str = Field(description="Absolute path of the file.")
    changed: bool = Field(description="True when the file's bytes changed (false for a dry run or a no-op).")
    sha256: str = Field(
        description="SHA-256 of the file after the call (unchanged for a dry run): pass it as expectedSha256."
    )
    size_bytes: int = Field(
        description="Size of the file after the call, in bytes (a dry run: as it would be)."
    )
    diff: str = Field(description="Unified diff of the change; line numbers are the file's.")
    diff_truncated: bool = Field(description="True when the diff was cut to fit the result budget.")


ResultT = TypeVar("ResultT", bound=EditedFile)


def edit_report(
    model: type[ResultT],
    target: EditableText,
    text: str,
    saved: Saved,
    *,
    budget: int,
    summary: str,
    notes: Sequence[str] = (),
    dry_run: bool = False,
    **fields: Any,
) -> ToolResult:
    """The result of an edit that produced ``text`` and was saved (or previewed) as ``saved``:
    ``model`` filled in with ``fields``, and a text of ``summary``, ``notes`` and the diff,
    within ``budget`` characters with the structured result (the diff goes in both, cut alike).
    Writes nothing."""
    full_diff = unified_diff(target.file.text, text, name=target.diff_name)
    if "dry_run" in model.model_fields:
        fields["dry_run"] = dry_run

    def build(payload: int) -> ToolResult:
        return _edit_result(model, target, saved, full_diff, payload, summary, notes, dry_run, fields)

    return fit_within(build, budget, max(budget // 2 - _RESERVE, MIN_DIFF_CHARS))


def _edit_result(
    model: type[ResultT],
    target: EditableText,
    saved: Saved,
    full_diff: str,
    payload: int,
    summary: str,
    notes: Sequence[str],
    dry_run: bool,
    fields: dict[str, Any],
) -> ToolResult:
    """``edit_report``'s result with the diff cut to ``payload`` characters (its head and tail,
    ``diff_within``; never less than ``MIN_DIFF_CHARS``)."""
    diff, cut = diff_within(full_diff, payload)
    result = model(
        path=str(target.path),
        changed=saved.changed,
        sha256=saved.sha256,
        size_bytes=saved.size_bytes,
        diff=diff,
        diff_truncated=cut,
        **fields,
    )
    if dry_run:
        state = "dry run, nothing written"
    else:
        state = f"sha256 {saved.sha256}" if saved.changed else "no change"
    rendered = "\n".join([f"{summary} ({state})", *(f"[{note}]" for note in notes)])
    if diff:
        rendered += "\n" + diff.rstrip("\n")
    if cut:
        rendered += "\n" + served_text(
            "[diff cut to fit the result budget (head and tail kept); readtextrange shows the edited lines]"
        )
    return ToolResult.of(result, text=rendered)
