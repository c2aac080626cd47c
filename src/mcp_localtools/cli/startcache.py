"""The start-up cache: what a stdio server answers to ``initialize`` and ``tools/list``, kept from
one start to the next, so a client's first requests are answered before any tool is imported.

After a stdio server was built, its config passed the start-up check and its command sandbox's
probe chose bubblewrap (nothing weaker to tell the model), ``record`` writes an entry to the
user's cache (``$XDG_CACHE_HOME/mcp-localtools/start``, else ``~/.cache/...``; Windows
``%LOCALAPPDATA%``), atomically, named by the hash of everything the answers are made of that a
start can see without building anything (``start_key``): this package's version and its source
files (their names, sizes and times), the MCP SDK's and pydantic's installs and the
site-packages folders holding them (any distribution installed or removed there), the Python
executable and version, the platform and kernel, the command-line arguments, the working
directory and the **whole environment** (every variable: a key that left out one the server reads
would serve a stale catalog). The entry also holds what must still be true on disk
(``Checks``): the config file's content, the roots as they resolve, where ``bwrap`` and ``rg``
are found, and the kernel's user-namespace switches bubblewrap needs.

``cached_start(argv)`` finds the entry of this start; when every check holds, the server is a
``server.cached.CachedServer``, and the real server is built in the background once
``initialize`` is answered (a request that needs it first waits for it), as without the cache
except that its config is not checked again (the entry was written for a config that passed) and
each tool is built at its first call (``tools.deferred_registry``): its module alone is imported
then, and its definition compared with the entry's (``CachedStart.tool_built``). What is not a
tool's (the instructions, the methods, the sandbox) is compared once the first request was
answered (``CachedStart.verify``). An entry found to differ is removed, so the next start builds
everything; this session keeps the tool list it was given.
Anything else (no entry, an unreadable or corrupt one, a failed check,
``MCP_LOCALTOOLS_START_CACHE=0``) is a start without the cache. Not cached (always built): the
network transports, ``[profiles]``, ``[server] select_tools``, ``[tools.custom]``, and a
sandbox weaker than bubblewrap (its notice joins the instructions once the probe has run).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcp_localtools._version import __version__
from mcp_localtools.cli.startchecks import Checks, checks_before, make_folder, private

if TYPE_CHECKING:
    from mcp_localtools.config import Config
    from mcp_localtools.server.adapter import RegistryServer

__all__ = [
    "CACHE_ENV",
    "CachedStart",
    "Checks",
    "cache_dir",
    "cached_start",
    "checks_before",
    "configure_logging",
    "record",
    "start_key",
]

logger = logging.getLogger(__name__)

CACHE_ENV = "MCP_LOCALTOOLS_START_CACHE"
"""``0`` (or ``off``, ``false``, ``no``): neither read nor write the start-up cache."""

_FORMAT = 1
_PACKAGE = Path(__file__).resolve().parent.parent
_KEEP = 16
"""Entries kept: one per way the server is started (a client, a project, a config)."""


def configure_logging(level: str) -> None:
    """Log to stderr only (stdout belongs to the stdio transport and to JSON output)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)


def enabled(environ: Mapping[str, str]) -> bool:
    """False when ``MCP_LOCALTOOLS_START_CACHE`` turns the cache off."""
    return environ.get(CACHE_ENV, "").strip().lower() not in ("0", "off", "false", "no")


def cache_dir(environ: Mapping[str, str]) -> Path | None:
    """Where entries live, from ``environ``; None when no absolute cache location is known."""
    if sys.platform == "win32":  # pragma: no cover - Windows
        base = environ.get("LOCALAPPDATA", "")
    else:
        base = environ.get("XDG_CACHE_HOME") or (f"{environ['HOME']}/.cache" if environ.get("HOME") else "")
    return Path(base) / "mcp-localtools" / "start" if base and Path(base).is_absolute() else None


def _installed(module: str) -> list[int]:
    """Where ``module``'s package is installed, as the inode and change time of its directory and
    of the directory holding it (site-packages: installing, upgrading or removing any
    distribution adds or removes an entry there)."""
    import importlib.util

    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        return []
    package = Path(next(iter(spec.submodule_search_locations)))
    return [
        value for path in (package, package.parent) for value in (path.stat().st_ino, path.stat().st_mtime_ns)
    ]


def _own_sources() -> str:
    """This package's source files: names, sizes and modification times (an edit of a checkout
    changes them; the version alone would not)."""
    digest = hashlib.sha256()
    for folder, dirs, files in os.walk(_PACKAGE):
        dirs[:] = sorted(name for name in dirs if name != "__pycache__")
        for name in sorted(files):
            if name.endswith((".py", ".json", ".scm", ".toml")):
                info = (Path(folder) / name).stat()
                digest.update(f"{folder}/{name}:{info.st_size}:{info.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def start_key(argv: Sequence[str], environ: Mapping[str, str], cwd: str) -> str:
    """The name of this start's entry: a hash of everything listed in the module's docstring."""
    uname = os.uname() if hasattr(os, "uname") else None
    facts = {
        "format": _FORMAT,
        "version": __version__,
        "package": [str(_PACKAGE), _own_sources()],
        "sdk": [_installed(name) for name in ("mcp", "mcp_types", "pydantic")],
        "python": [sys.executable, sys.version],
        "platform": [sys.platform, uname.release if uname else "", uname.machine if uname else ""],
        "argv": list(argv),
        "cwd": cwd,
        "environ": sorted(environ.items()),
    }
    return hashlib.sha256(json.dumps(facts, sort_keys=True).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class CachedStart:
    """An entry that serves this start: what ``server.cached.CachedServer`` needs, the log level,
    and what the start-up wrote to stderr."""

    info: dict[str, str | None]
    tools: dict[str, Any]
    methods: list[str]
    approval_ttl: float | None
    max_line_bytes: int
    log_level: str
    line: str | None
    warnings: list[tuple[str, str]]
    path: Path
    checks: Checks
    removed: list[str] = field(default_factory=list, compare=False)
    """Why this entry was removed, once it was (then nothing more is compared with it)."""

    def verify(self, real: RegistryServer) -> bool:
        """Once the real server is built (blocking: starts its sandbox probe and waits for it),
        whether this entry still tells what it tells of it (its tools are compared one by one as
        they are built, ``tool_built``); when it does not (a config saved or a root moved while
        the entry was written, a sandbox that weakened since), the entry is removed so that the
        next start builds everything. This session's first command's ``sandboxNote`` tells the
        model of a weaker sandbox."""
        if self.removed:  # already found stale (a fallback build serves the config as it is)
            return False
        route = real.routes.default
        if route.workspace is not None and _serves_commands(real):
            from mcp_localtools.tools.exec import probe_sandbox

            probe_sandbox(route.workspace)  # as a full start's command tools do when registered
        fresh = _answers_now(real, wait=5.0)
        held = fresh is not None and fresh == {
            "info": self.info,
            "tools": self.tools,
            "methods": self.methods,
            "approval_ttl": self.approval_ttl,
            "max_line_bytes": self.max_line_bytes,
        }
        if not held:
            self.remove("the server")
        return held

    def tool_built(self, name: str, manifest: dict[str, Any] | None) -> None:
        """A tool of a cached start was built (its first call): when its ``tools/list`` entry
        (``manifest``, ``Registry.manifest``) is not the one this entry listed, or it could not be
        built (None: a full start would have refused to start, or left it out), the entry is
        removed; the call is answered by the tool as built, or with its error."""
        from mcp_localtools.server.cached import listed_tool

        if self.removed:
            return
        listed = [tool for tool in self.tools.get("tools", []) if tool.get("name") == name]
        if manifest is None:
            self.remove(f"the tool {name}, which could not be built")
        elif listed != [listed_tool(manifest)]:
            self.remove(f"the tool {name}")

    def remove(self, what: str) -> None:
        """Remove this entry, which no longer tells ``what`` as it is (logged; a file that cannot
        be removed is logged too, never raised)."""
        if self.removed:
            return  # once: a later start with this key may have written a good entry since
        self.removed.append(what)
        logger.info("the start-up cache's entry no longer matches %s; removed: %s", what, self.path)
        try:
            self.path.unlink(missing_ok=True)
        except OSError as exc:
            logger.warning("the start-up cache's entry %s cannot be removed: %s", self.path, exc)

    def serve(self, build: Callable[[], RegistryServer]) -> int:
        """Serve stdio from this entry until the client leaves, ``build`` building the real
        server (blocking) at the first request that needs it; returns the exit status (0)."""
        import anyio

        from mcp_localtools.compat import watch_children_by_pidfd
        from mcp_localtools.server.cached import CachedServer

        configure_logging(self.log_level)
        for name, message in self.warnings:
            logging.getLogger(name).warning("%s", message)
        if self.line is not None:
            sys.stderr.write(self.line + "\n")
            sys.stderr.flush()
        server = CachedServer(
            info=self.info,
            tools=self.tools,
            methods=self.methods,
            approval_ttl=self.approval_ttl,
            build=build,
            verify=self.verify,
        )

        async def serve() -> None:
            watch_children_by_pidfd()
            await server.serve_stdio(max_line_bytes=self.max_line_bytes)

        try:
            anyio.run(serve)
        except KeyboardInterrupt:
            pass
        return 0


def cached_start(argv: Sequence[str], environ: Mapping[str, str] | None = None) -> CachedStart | None:
    """The entry that serves a start with ``argv`` (the arguments after the program name) in
    ``environ`` (default ``os.environ``) and the working directory, or None."""
    environ = os.environ if environ is None else environ
    folder = cache_dir(environ)
    if folder is None or not enabled(environ):
        return None
    try:
        if not private(folder):
            return None
        key = start_key(argv, environ, str(Path.cwd()))
        data = json.loads((folder / f"{key}.json").read_text(encoding="utf-8"))
        if data.get("format") != _FORMAT or data.get("key") != key:
            return None
        checks = Checks(**data["checks"])
        if not checks.hold(environ.get("PATH")):
            return None
        start = CachedStart(
            info=dict(data["info"]),
            tools=dict(data["tools"]),
            methods=list(data["methods"]),
            approval_ttl=data["approval_ttl"],
            max_line_bytes=int(data["max_line_bytes"]),
            log_level=str(data["log_level"]),
            line=data["line"],
            warnings=[(str(name), str(message)) for name, message in data["warnings"]],
            path=folder / f"{key}.json",
            checks=checks,
        )
        from mcp_localtools.server.cached import readable

        return start if readable(start.info, start.tools, start.methods) else None
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None  # no entry, or one this version cannot read: a start without the cache


def cacheable(config: Config, profile: str | None) -> bool:
    """Whether a stdio server of ``config`` may be served from the cache (see the docstring)."""
    return (
        config.server.transport == "stdio"
        and profile is None
        and not config.profiles
        and not config.server.select_tools
        and not config.tools.custom
    )


def _answers_now(server: RegistryServer, *, wait: float) -> dict[str, Any] | None:
    """``server.cached.answers(server)``, or None when its instructions are to carry a sandbox
    notice (or may: the probe has not chosen within ``wait`` seconds): such a start is not cached."""
    from mcp_localtools.server.cached import answers
    from mcp_localtools.tools.exec import command_sandbox, sandbox_notice

    route = server.routes.default
    if route.workspace is None:
        return None
    if _serves_commands(server):  # else no notice is told
        found = command_sandbox(route.workspace, timeout=wait)
        if (found is not None and found[0] == "probing") or sandbox_notice(route.workspace, timeout=0):
            return None
    return answers(server)


def _serves_commands(server: RegistryServer) -> bool:
    """Whether ``server`` serves a command tool (one of the exec group, maybe renamed), told
    without building a held tool."""
    from mcp_localtools.tools import GROUPS

    registry = server.routes.default.registry
    own = {served: name for name, served in registry.renamed.items()}
    return any(own.get(name, name) in GROUPS["exec"] for name in registry.names())


def record(
    argv: Sequence[str],
    config: Config,
    config_file: str | None,
    before: tuple[Checks, Checks],
    server: RegistryServer,
    *,
    log_level: str,
    line: str | None,
    warnings: Sequence[tuple[str, str]],
) -> Path | None:
    """Write the entry of this start (argv, ``os.environ``, the working directory) for ``server``
    (built from ``config``, read from ``config_file``), which wrote ``line`` and ``warnings``
    (logger, message) to stderr,
    when the checks taken before the config was read and before the build (``before``,
    ``checks_before``) still hold. Call it once the sandbox probe has chosen. Returns the file
    written, or None when this start is not cached. Never raises: a failure is logged (debug)."""
    environ = os.environ
    folder = cache_dir(environ)
    if folder is None or not enabled(environ):
        return None
    try:
        found = _answers_now(server, wait=0)
        now = checks_before(config_file, config)
        read, built = before
        if (
            found is None
            or (now.files, now.programs) != (read.files, read.programs)
            or now.roots != built.roots
        ):
            return None  # a notice to tell, or something changed while the server was built
        key = start_key(argv, environ, str(Path.cwd()))
        entry = {
            "format": _FORMAT,
            "key": key,
            "checks": now.__dict__,
            **found,
            "log_level": log_level,
            "line": line,
            "warnings": [list(warning) for warning in warnings],
        }
        make_folder(folder)
        if not private(folder):
            logger.warning("the start-up cache %s is not private to this user; it is not used", folder)
            return None
        _write(folder / f"{key}.json", json.dumps(entry))
        _prune(folder)
    except (OSError, ValueError, TypeError) as exc:
        logger.debug("the start-up cache was not written: %s", exc)
        return None
    return folder / f"{key}.json"


def _write(path: Path, text: str) -> None:
    """Write ``path`` atomically: a reader finds the old entry, the new one, or none."""
    import tempfile  # only a start that writes an entry needs it

    out = tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=path.parent, suffix=".tmp", delete=False)  # noqa: SIM115 - closed below, removed on failure
    try:
        with out:
            out.write(text)
        Path(out.name).replace(path)
    except BaseException:
        Path(out.name).unlink(missing_ok=True)
        raise


def _prune(folder: Path) -> None:
    """Keep the ``_KEEP`` most recently written entries of ``folder``, and no temporary file a
    server that ended mid-write left (older than a minute)."""
    entries = sorted(folder.glob("*.json"), key=lambda entry: entry.stat().st_mtime_ns, reverse=True)
    for old in entries[_KEEP:]:
        old.unlink(missing_ok=True)
    for left in folder.glob("*.tmp"):
        if left.stat().st_mtime < time.time() - 60:
            left.unlink(missing_ok=True)
