"""The result of one command run as the model sees it: structured fields and a compact text."""

from __future__ import annotations

from pydantic import Field

from mcp_localtools.registry import ToolOutput
from mcp_localtools.results import cut_text
from mcp_localtools.tools.exec._process import RunOutcome
from mcp_localtools.tools.exec._sandbox import CommandSandbox

__all__ = ["RunReport", "fit_text", "render_run", "report_fields"]


class RunReport(ToolOutput):
    """Fields every command run reports (shellcommand's entries, runscript's result)."""

    exit_code: int | None = Field(
        description="Exit code; 128+N when killed by signal N, 124 on timeout, 127 when it could not start. "
        "Absent when the command was refused and did not run."
    )
    timed_out: bool = Field(description="True when the command was stopped at its timeout.")
    duration_ms: int = Field(alias="durationMS", description="Wall-clock run time in milliseconds.")
    stdout: str = Field(
        description="Standard output (UTF-8, invalid bytes replaced); head and tail when cut."
    )
    stderr: str = Field(description="Standard error, captured like stdout.")
    stdout_truncated: bool = Field(description="True when the middle of stdout was elided.")
    stderr_truncated: bool = Field(description="True when the middle of stderr was elided.")
    stdout_bytes: int = Field(description="Bytes the command wrote to stdout in all.")
    stderr_bytes: int = Field(description="Bytes the command wrote to stderr in all.")
    sandbox_note: str | None = Field(
        None,
        description="Set when the error output shows the sandbox refused a write or the network: what "
        "to change.",
    )


def report_fields(outcome: RunOutcome, sandbox: CommandSandbox) -> dict[str, object]:
    """``RunReport`` fields (by Python name) of a run finished inside ``sandbox``."""
    return {
        "sandbox_note": sandbox.explain(outcome.stderr.text, outcome.exit_code, outcome.reverted),
        "exit_code": outcome.exit_code,
        "timed_out": outcome.timed_out,
        "duration_ms": outcome.duration_ms,
        "stdout": outcome.stdout.text,
        "stderr": outcome.stderr.text,
        "stdout_truncated": outcome.stdout.truncated,
        "stderr_truncated": outcome.stderr.truncated,
        "stdout_bytes": outcome.stdout.total_bytes,
        "stderr_bytes": outcome.stderr.total_bytes,
    }


def render_run(command: str, report: RunReport, *, timeout: float) -> str:
    """``$ command``, a status line, stdout, and stderr under ``[stderr]``."""
    if report.timed_out:
        status = f"[timed out after {timeout:g} s and stopped; exit {report.exit_code}]"
    else:
        status = f"[exit {report.exit_code}, {report.duration_ms} ms]"
    parts = [f"$ {command}", status]
    if report.stdout:
        parts.append(report.stdout.rstrip("\n"))
    if report.stderr:
        parts.append("[stderr]\n" + report.stderr.rstrip("\n"))
    if report.sandbox_note:
        parts.append(f"[{report.sandbox_note}]")
    return "\n".join(parts)


def fit_text(text: str, budget: int, *, full: str) -> str:
    """``text`` cut to ``budget`` characters (``results.cut_text``); when cut, a last line says
    so and that structuredContent has ``full`` (what the text left out, e.g. "the full output")."""
    kept, cut = cut_text(text, budget)
    if not cut:
        return kept
    return f"{kept}\n[text cut at {budget} characters; structuredContent has {full}]"
