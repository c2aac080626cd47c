"""``mcp-localtools [serve]``: serve MCP over stdio, SSE or Streamable HTTP (the default command)."""

from __future__ import annotations

import argparse
import logging
import os
from typing import TYPE_CHECKING, Any

from mcp_localtools.cli.options import (
    EXIT_OK,
    LOG_LEVEL_ENV,
    add_config_options,
    add_log_option,
    add_profile_option,
    config_from,
    log_level,
    no_roots_message,
    own_files,
)
from mcp_localtools.cli.startcache import CachedStart, Checks, cacheable, checks_before, record
from mcp_localtools.config import Config

if TYPE_CHECKING:  # imported when a server is built, not when the CLI starts
    from mcp_localtools.checks import Network
    from mcp_localtools.server.adapter import RegistryServer

__all__ = ["add_options", "add_parser", "build_stdio", "run"]

logger = logging.getLogger(__name__)


def add_options(parser: argparse.ArgumentParser, *, suppress: bool) -> None:
    """serve's options (also the top-level parser's, since serving is the default)."""
    default = argparse.SUPPRESS if suppress else None
    add_config_options(parser, suppress=suppress)
    parser.add_argument(
        "--transport", choices=["stdio", "sse", "streamable-http"], default=default, help="default: stdio"
    )
    parser.add_argument("--host", default=default, help="network transports: address to bind (127.0.0.1)")
    parser.add_argument("--port", type=int, default=default, help="network transports: port (8765)")
    parser.add_argument(
        "--auth-token-file",
        metavar="PATH",
        default=default,
        help="network transports: file holding the bearer token, mode 0600 (sets [server] auth_token_file)",
    )
    parser.add_argument(
        "--allowed-host",
        metavar="HOST",
        action="append",
        default=default,
        help="network transports: a Host name clients use, added to [server] allowed_hosts (repeatable)",
    )
    add_profile_option(
        parser,
        suppress=suppress,
        help="serve only the tools of [profiles.NAME] to clients without a profile token (stdio: to all)",
    )
    parser.add_argument(
        "--allow-unauthenticated-loopback",
        action="store_true",
        default=argparse.SUPPRESS if suppress else False,
        help="network transports on a loopback address only: serve without a token (for local test clients)",
    )
    parser.add_argument(
        "--ignore-client-roots",
        action="store_true",
        default=argparse.SUPPRESS if suppress else False,
        help="keep the roots given here: do not narrow them to the folders the client shares (MCP roots)",
    )
    add_log_option(parser, suppress=suppress)


def add_parser(commands: Any) -> None:
    """Register ``serve``."""
    parser = commands.add_parser("serve", help="run the MCP server (default)")
    add_options(parser, suppress=True)
    parser.set_defaults(run=run)


def run(ns: argparse.Namespace) -> int:
    """Serve until interrupted.

    Raises:
        ConfigError: the config, a token or the bind address cannot be used.
    """
    read = checks_before(ns.config)  # before the config is read: see startcache.record
    config = _config(ns)
    warning = _no_roots_warning(ns, config)
    if warning is not None:
        logger.warning("%s", warning)
    if config.server.transport == "stdio":
        return _serve_stdio(ns, config, [] if warning is None else [(logger.name, warning)], read)
    return _serve_network(ns, config)


def _config(ns: argparse.Namespace) -> Config:
    """The config of ``ns`` (``config_from``), client roots off with ``--ignore-client-roots``."""
    config = config_from(ns)
    if getattr(ns, "ignore_client_roots", False):
        config = config.model_copy(update={"paths": config.paths.model_copy(update={"client_roots": False})})
    return config


def _no_roots_warning(ns: argparse.Namespace, config: Config) -> str | None:
    """The start-up warning of a server without roots of its own, or None."""
    if config.paths.allowed_roots:
        return None
    return "{}; {}".format(
        no_roots_message(ns, "no root of its own"),
        "it works only in the folders a client shares (MCP roots): a client that shares none is "
        "refused every file and command tool"
        if config.paths.client_roots
        else "every file and command tool is refused (--ignore-client-roots)",
    )


def build_stdio(ns: argparse.Namespace, start: CachedStart) -> RegistryServer:
    """The stdio server of ``ns`` as ``run`` builds it, for the cached ``start`` that serves it
    (``startcache.CachedStart``): the config is not checked again and each tool is built at its
    first call, told to ``start.tool_built``. When the config file, a program or a root no longer
    is what the entry was written for (saved since the start's checks, before this build read it),
    the entry is removed and the whole server built and checked from the config as it is now.

    Raises:
        ConfigError, ConfigProblems: the config cannot be used.
    """
    config = _config(ns)
    if checks_before(ns.config, config) != start.checks:
        start.remove("the config, a program or a root, changed since this start's checks")
        return _build(ns, config)
    return _build(ns, config, start=start)


def _build(
    ns: argparse.Namespace,
    config: Config,
    network: Network | None = None,
    start: CachedStart | None = None,
) -> RegistryServer:
    """The server of ``config`` as the command line asks for it (log level, own files, profile;
    ``network``: the tokens and bind rules, checked with the rest; ``start``: the cached start
    it serves, ``build_server``'s ``listed``); ``own_files`` holds the start-up cache's folder.
    Once built, ``ns.started`` (when ``main`` set it) ends the start-up's pause of the garbage
    collector (``collector.py``)."""
    from mcp_localtools.server import build_server

    try:
        return build_server(
            config,
            log_level=_log_level(ns),
            environ=os.environ,
            own_files=own_files(ns),
            profile=ns.profile,
            network=network,
            listed=start.tools.get("tools", []) if start is not None else None,
            built=start.tool_built if start is not None else None,
        )
    finally:
        started = getattr(ns, "started", None)
        if started is not None:
            started()  # main paused the garbage collector for the start-up (cli/collector.py)


def _serve_stdio(
    ns: argparse.Namespace, config: Config, warnings: list[tuple[str, str]], read: Checks
) -> int:
    """Serve stdio; ``warnings`` (logger, message) were logged before the build, ``read`` was
    checked before the config was read. Once the sandbox probe has chosen, the start is recorded
    in the start-up cache (``startcache``)."""
    from mcp_localtools.cli.startup import announce

    built = checks_before(ns.config, config)
    server = _build(ns, config)
    quiet = _quiet(ns)

    def remember(line: str, said: list[str]) -> None:
        if cacheable(config, ns.profile) and getattr(ns, "argv", None) is not None:
            record(
                ns.argv,
                config,
                ns.config,
                (read, built),
                server,
                log_level=_log_level(ns),
                line=None if quiet else line,
                warnings=[*warnings, *(("mcp_localtools", warning) for warning in said)],
            )

    announce(server, "stdio", quiet=quiet, then=remember)
    try:
        server.run()
    except KeyboardInterrupt:
        pass
    return EXIT_OK


def _serve_network(ns: argparse.Namespace, config: Config) -> int:
    from mcp_localtools._sdk import token_verifier
    from mcp_localtools.checks import Network
    from mcp_localtools.cli.startup import announce
    from mcp_localtools.transports import NetworkSettings, serve_network

    server_config = config.server
    transport = server_config.transport
    assert transport != "stdio", "stdio is served by _serve_stdio"
    # The tokens and the bind rules are part of the one start-up check (checks.check).
    server = _build(ns, config, Network(unauthenticated_loopback=ns.allow_unauthenticated_loopback))
    settings = NetworkSettings(
        transport=transport,
        host=server_config.host,
        port=server_config.port,
        authenticated=token_verifier(server) is not None,
        allowed_hosts=tuple(server_config.allowed_hosts),
        allowed_origins=tuple(server_config.allowed_origins),
        max_request_body_bytes=server_config.max_request_body_bytes,
        session_idle_timeout_seconds=server_config.session_idle_timeout_seconds,
        max_sessions=server_config.max_sessions,
    )
    path = "/sse" if transport == "sse" else "/mcp"
    host = f"[{settings.host}]" if ":" in settings.host else settings.host  # IPv6, as in a URL
    where = f"{transport} on http://{host}:{settings.port}{path}"
    serve_network(server, settings, on_listening=lambda: announce(server, where, quiet=_quiet(ns)))
    return EXIT_OK


def _log_level(ns: argparse.Namespace) -> str:
    return log_level(ns.log_level or os.environ.get(LOG_LEVEL_ENV))


def _quiet(ns: argparse.Namespace) -> bool:
    """True when the log level hides the start-up line (ERROR)."""
    return _log_level(ns) == "ERROR"
