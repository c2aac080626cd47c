"""The result of one command run as the model sees it: structured fields and a compact text."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from pydantic import Field

from mcp_localtools.processes.runner import OUTPUT_STOP_FACTOR, RunOutcome
from mcp_localtools.processes.stored import KeptOutput, OutputStore, Recorder
from mcp_localtools.results import LinkContent, head_tail
from mcp_localtools.sandbox.command import CommandSandbox
from mcp_localtools.spec import ToolOutput

__all__ = [
    "KeptStreams",
    "RunReport",
    "cut_command",
    "cut_reports",
    "render_run",
    "report_fields",
    "share_out",
]

STREAMS = ("stdout", "stderr")


class RunReport(ToolOutput):
    """Fields every command run reports (shellcommand's entries, runscript's result)."""

    exit_code: int | None = Field(
        description="Exit code; 128+N when killed by signal N, 124 on timeout, 127 when it could not start. "
        "Absent when the command was refused and did not run."
    )
    timed_out: bool = Field(description="True when the command was stopped at its timeout.")
    output_stopped: bool = Field(
        False,
        description=f"True when the command was stopped because one stream wrote {OUTPUT_STOP_FACTOR} "
        "times the output cap (what followed could not be shown).",
    )
    duration_ms: int = Field(alias="durationMS", description="Wall-clock run time in milliseconds.")
    stdout: str = Field(
        description="Standard output (UTF-8, invalid bytes replaced); head and tail when cut."
    )
    stderr: str = Field(description="Standard error, captured like stdout.")
    stdout_truncated: bool = Field(description="True when the middle of stdout was elided.")
    stderr_truncated: bool = Field(description="True when the middle of stderr was elided.")
    stdout_bytes: int = Field(description="Bytes the command wrote to stdout in all.")
    stderr_bytes: int = Field(description="Bytes the command wrote to stderr in all.")
    stdout_uri: str | None = Field(
        None,
        alias="stdoutURI",
        description="Set when stdout was cut: the resource (resources/read) with all of it, page 1.",
    )
    stderr_uri: str | None = Field(None, alias="stderrURI", description="Like stdoutURI, for stderr.")
    sandbox_note: str | None = Field(
        None,
        description="Set when the error output shows the sandbox refused a write or the network: what "
        "to change; and on a connection's first command when commands run under Landlock or "
        "uncontained: so, and how to get bubblewrap.",
    )


def report_fields(outcome: RunOutcome, sandbox: CommandSandbox, owner: str) -> dict[str, object]:
    """``RunReport`` fields (by Python name) of a run of client connection ``owner``
    (``CallContext.session_id``) finished inside ``sandbox``; the connection's first also says
    when the sandbox is weaker than bubblewrap (``CommandSandbox.first_notice``)."""
    notes = [
        outcome.sandbox_note
        or sandbox.explain(
            outcome.stderr.text,
            outcome.exit_code,
            outcome.reverted,
            stdout=outcome.stdout.text,
            cleaned=outcome.cleaned,
        ),
        sandbox.first_notice(owner),
    ]
    return {
        "sandbox_note": ". ".join(note for note in notes if note) or None,
        "exit_code": outcome.exit_code,
        "timed_out": outcome.timed_out,
        "output_stopped": outcome.output_stopped is not None,
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
    elif report.output_stopped:
        stream = "stdout" if report.stdout_bytes > report.stderr_bytes else "stderr"
        status = (
            f"[stopped after {report.duration_ms} ms: its {stream} passed {OUTPUT_STOP_FACTOR} times the "
            f"output cap ({report.stdout_bytes + report.stderr_bytes} bytes); exit {report.exit_code}; "
            "print less (| head, | tail, a quieter flag) or write to a file and read that]"
        )
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


def share_out(sizes: Sequence[int], total: int) -> list[int]:
    """Per-item character limits that share ``total`` among items of ``sizes`` fairly: small
    items whole, the large ones an equal share of the rest (water-filling)."""
    limits = list(sizes)
    left, open_items = total, sorted(range(len(sizes)), key=lambda i: sizes[i])
    while open_items:
        share = max(left, 0) // len(open_items)
        index = open_items[0]
        if sizes[index] > share:
            for rest in open_items:
                limits[rest] = share
            break
        left -= sizes[index]
        open_items.pop(0)
    return limits


class KeptStreams:
    """The full output of a call's runs, stored in ``store`` the first time a result cuts it.

    Args:
        store: where the outputs are kept.
        session_id: the MCP session they belong to.
        links: whether results carry a ``resource_link`` item per kept stream.
    """

    def __init__(self, store: OutputStore, session_id: str, *, links: bool = True) -> None:
        self.store = store
        self.session_id = session_id
        self.links = links
        self.recorders: list[Recorder | None] = []
        self._kept: dict[tuple[int, str], KeptOutput | None] = {}

    def kept(self, run: int, stream: str) -> KeptOutput | None:
        """The stored stream ``stream`` of run number ``run`` (stored now if need be)."""
        if (run, stream) not in self._kept:
            recorder = self.recorders[run] if run < len(self.recorders) else None
            self._kept[(run, stream)] = (
                self.store.keep(self.session_id, stream, recorder.data(stream)) if recorder else None
            )
        return self._kept[(run, stream)]


R = TypeVar("R", bound=RunReport)


def cut_command(command: str, limit: int) -> str:
    """``command`` as a result echoes it: whole when it has at most ``limit`` characters, else
    its head and tail with a marker saying how many characters of it were left out (the model
    sent it, so it lost nothing; a 50 KB heredoc echoed twice used to crowd out the output)."""

    def marker(elided: int) -> str:
        return f"[... {elided} characters of the command elided ...]"

    cut, _ = head_tail(command, max(limit, 200), marker)
    return cut


def cut_reports(
    reports: Sequence[R], names: Sequence[str], kept: KeptStreams, payload: int
) -> tuple[list[R], list[LinkContent]]:
    """The reports with their streams cut to ``payload`` characters in all, each keeping its head
    and its tail; a cut stream's marker and ``stdoutURI``/``stderrURI`` name the resource with
    all of it, and a link to it is returned.

    Args:
        reports: one per run, in order, with the streams as captured.
        names: the command of each run (for the links' names).
        kept: where the runs' full outputs are stored.
        payload: characters the streams of all runs may take together.

    Returns:
        ``(cut reports, resource links)``.
    """
    texts = [getattr(report, stream) for report in reports for stream in STREAMS]
    limits = share_out([len(text) for text in texts], payload)
    out: list[R] = []
    links: list[LinkContent] = []
    for run, report in enumerate(reports):
        changes: dict[str, object] = {}
        for number, stream in enumerate(STREAMS):
            text = texts[run * 2 + number]
            limit = limits[run * 2 + number]
            if len(text) <= limit and not getattr(report, f"{stream}_truncated"):
                continue
            stored = kept.kept(run, stream)
            where = f"; all of {stream}: {stored.uri()} ({stored.pages} page(s))" if stored else ""

            def marker(elided: int, where: str = where) -> str:
                return f"[... {elided} characters elided{where} ...]"

            cut, was_cut = head_tail(text, max(limit - len(marker(10**7)), 0), marker)
            changes[stream] = cut
            changes[f"{stream}_truncated"] = was_cut or getattr(report, f"{stream}_truncated")
            if stored is not None:
                changes[f"{stream}_uri"] = stored.uri()
                if kept.links:
                    links.append(stored.link(names[run]))
        out.append(report.model_copy(update=changes) if changes else report)
    return out, links
