"""The start-up line: what a server serves, in one line on stderr, at the default log level.

::

    mcp-localtools 0.1.0: serving stdio; roots /home/a/proj (a client may narrow them);
    sandbox bwrap; search ripgrep

It is written once the server listens (over HTTP: after a successful bind) and the command
sandbox's probe has chosen a backend, from a background thread so that neither start-up nor the
first request waits for it. A weaker fallback (no ripgrep: the Python engine; Landlock instead of
bubblewrap) is also a warning of its own, and no sandbox at all an error (the probe logs it).
"""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Callable

from mcp_localtools._version import __version__
from mcp_localtools.policy.implicit_root import implicit_root_refusal, user_home
from mcp_localtools.server.adapter import RegistryServer
from mcp_localtools.tools.exec import command_sandbox
from mcp_localtools.workspace import Workspace

__all__ = ["announce", "startup_line"]

logger = logging.getLogger("mcp_localtools")

_PROBE_SECONDS = 30.0
"""How long the line waits for the sandbox probe (it takes about 10 ms)."""


def _roots(server: RegistryServer) -> tuple[str, list[str]]:
    """The roots part of the line, and a warning per root that serves more than a project (the
    filesystem, a home or a system directory, given explicitly: ``--root /``)."""
    workspace = server.routes.default.workspace
    if workspace is None:
        return "roots unknown", []
    roots = ", ".join(str(root) for root in workspace.paths.roots)
    client = workspace.config.paths.client_roots
    if not roots:
        if client:
            return "roots from the client (none of its own)", []
        return "no roots: every file tool is refused", []
    home = user_home()
    broad = [phrase for root in workspace.paths.roots if (phrase := implicit_root_refusal(root, home))]
    warnings = [f"a root is {phrase}: every file below it is served" for phrase in broad]
    return f"roots {roots}" + (" (a client may narrow them)" if client else ""), warnings


def _sandbox(workspace: Workspace) -> tuple[str, str | None]:
    """The sandbox part of the line, and a warning when it is weaker than it could be."""
    found = command_sandbox(workspace, timeout=_PROBE_SECONDS)
    if found is None:
        return "no command tools", None
    name, reason = found
    if name == "none":
        return "sandbox NONE: commands will be refused", None  # the probe logged why, as an error
    if name == "landlock" and reason:
        return (
            f"sandbox landlock (weaker than bwrap: {reason})",
            f"commands run under Landlock only: {reason}",
        )
    if name == "off":
        return "sandbox off: commands run with the server's authority", None
    return f"sandbox {name}", None


def _search(workspace: Workspace) -> tuple[str, str | None]:
    pick = getattr(workspace.search, "pick", None)  # a DeferredEngine picks at its first search
    name = str(pick().name if pick is not None else workspace.search.name)
    if name == "python":
        return "search python (slower: no ripgrep 14+ found)", (
            "no ripgrep 14 or later found: searches use the slower Python engine; install ripgrep "
            "(or reinstall mcp-localtools, whose ripgrep wheel carries one)"
        )
    return f"search {name}", None


def startup_line(server: RegistryServer, where: str) -> tuple[str, list[str]]:
    """The start-up line of ``server`` (a ``build_server`` result) serving ``where`` (``stdio``,
    ``streamable-http on http://127.0.0.1:8765/mcp``), and the warnings that go with it.
    Blocking: waits for the sandbox probe and picks the search engine."""
    route = server.routes.default
    workspace = route.workspace
    roots, warnings = _roots(server)
    parts = [f"mcp-localtools {__version__}: serving {where}", roots]
    if workspace is not None:
        commands = any(spec.group == "exec" for spec in route.registry.specs())
        sandbox = _sandbox(workspace) if commands else ("no command tools", None)
        for part, warning in (sandbox, _search(workspace)):
            parts.append(part)
            if warning is not None:
                warnings.append(warning)
    return "; ".join(parts), warnings


def announce(
    server: RegistryServer,
    where: str,
    *,
    quiet: bool,
    then: Callable[[str, list[str]], None] | None = None,
) -> threading.Thread:
    """Write the start-up line to stderr from a background thread (``quiet``: only its
    warnings, through the log), then call ``then(line, warnings)`` there (the start-up cache
    records the start); return the thread."""

    def run() -> None:
        line, warnings = startup_line(server, where)
        if not quiet:
            sys.stderr.write(line + "\n")
            sys.stderr.flush()
        for warning in warnings:
            logger.warning(warning)
        if then is not None:
            then(line, warnings)

    thread = threading.Thread(target=run, name="startup-line", daemon=True)
    thread.start()
    return thread
