"""The exec group: shellcommand and runscript under the execution policy, and the background
process tools (startprocess, processoutput, waitprocess, writeprocess, stopprocess, listprocesses).

One module per tool, named for it and listed in ``tools.GROUPS``; each exposes
``spec(workspace)``, and all share one ``ExecGroup`` (``_group``: the policy, sessions, sandbox
and process runner) through ``workspace.shared(ExecGroup.create)``. The subsystem they drive
lives below ``tools/``: ``processes/`` (running commands, background processes, exec sessions,
kept outputs) and ``sandbox/`` (what contains every command). Private to the tools: ``_envarg`` (the ``env``
argument's schema), ``_streaming`` (progress notifications), ``_report`` (result fields and
text), ``_processview`` (what the process tools report, and waiting for a line).
"""

from __future__ import annotations

from mcp_localtools.tools.exec._group import ExecGroup
from mcp_localtools.workspace import Workspace

__all__ = ["command_sandbox", "probe_sandbox", "sandbox_notice"]


def probe_sandbox(workspace: Workspace) -> None:
    """Start choosing the command sandbox of ``workspace`` in the background, as registering a
    command tool does (``ToolSpec.on_register``), before any is built (a cached start's check)."""
    workspace.shared(ExecGroup.create).sandbox.start()


def command_sandbox(workspace: Workspace, *, timeout: float) -> tuple[str, str] | None:
    """The sandbox the command tools of ``workspace`` run in: ``(backend, reason)`` once its probe
    has chosen (waiting up to ``timeout`` seconds; blocking) — the backend is ``bwrap``,
    ``landlock``, ``seatbelt``, ``off``, ``none`` (commands refused, ``reason`` says why) or
    ``probing`` (not chosen in time). None when the workspace serves no command tool."""
    group = workspace.existing(ExecGroup.create)
    if group is None:
        return None
    if not group.sandbox.chosen(timeout):
        return "probing", ""
    return group.sandbox.name, group.sandbox.reason


def sandbox_notice(workspace: Workspace, *, timeout: float) -> str | None:
    """A sentence for the server's instructions when the command tools of ``workspace`` run
    commands under a weaker sandbox than bubblewrap (Landlock), uncontained, or refuse every
    command: what, why and how to get bubblewrap (``CommandSandbox.weakness``). Waits up to
    ``timeout`` seconds for the probe (blocking); None when nothing is to be said, or the probe
    has not chosen in time."""
    group = workspace.existing(ExecGroup.create)
    if group is None or not group.sandbox.chosen(timeout):
        return None
    if group.sandbox.backend is None:
        return f"The command tools refuse every command here: {group.sandbox.reason}."
    weakness = group.sandbox.weakness()
    return f"{weakness[0].upper()}{weakness[1:]}." if weakness else None
