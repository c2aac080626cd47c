"""The exec group: shellcommand and runscript under the execution policy, and the background
process tools (startprocess, processoutput, waitprocess, writeprocess, stopprocess, listprocesses).

One module per tool, named for it; each exposes ``spec(workspace)``, and both share one
``ExecGroup`` (``_group``: the policy, sessions and process runner) through
``workspace.shared(ExecGroup.create)``. Private helpers: ``_shells`` (which shell, which argv),
``_sessions``, ``_environment`` (allowlisted base env), ``_process`` (spawn, timeout, stop,
drain), ``_proctree`` (finding escaped descendants), ``_output`` (head+tail capture),
``_streaming`` (progress notifications), ``_report`` (result fields and text), ``_background``
(background processes: the table, their buffers and reader threads), ``_processview`` (what the
process tools report, and waiting for a line).
"""

from __future__ import annotations

from mcp_localtools.tools.exec import (
    listprocesses,
    processoutput,
    runscript,
    shellcommand,
    startprocess,
    stopprocess,
    waitprocess,
    writeprocess,
)

__all__ = ["MODULES"]

MODULES = (
    shellcommand,
    runscript,
    startprocess,
    processoutput,
    waitprocess,
    writeprocess,
    stopprocess,
    listprocesses,
)
"""The group's tool modules."""
