"""The ``mcp-localtools`` command: serve over MCP, list the tools, or call one as JSON.

This is the only module that reads argv, the environment and (through ``load_config``) files.

Exit codes: 0 success, 1 a usage error, bad input or a tool error, 2 (``call`` only) a path-policy or
command-policy refusal.
"""

from __future__ import annotations

import argparse
import base64
import json
import logging
import os
import sys
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from mcp_localtools import compat
from mcp_localtools._version import __version__
from mcp_localtools.config import Config, load_config, parse_config
from mcp_localtools.errors import ConfigError, PolicyViolation, ToolError, UnknownToolError
from mcp_localtools.policy.implicit_root import implicit_root_refusal
from mcp_localtools.results import FileContent, ImageContent, LinkContent, TextContent, ToolResult

if TYPE_CHECKING:
    from mcp_localtools.registry import Registry

__all__ = ["main"]

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_POLICY = 2
LOG_LEVEL_ENV = "MCP_LOCALTOOLS_LOG_LEVEL"
TOKEN_ENV = "MCP_LOCALTOOLS_TOKEN"  # noqa: S105 - a variable name, not a secret
ROOTS_ENV = "MCP_LOCALTOOLS_ROOTS"
EXAMPLE_CONFIG = "config.example.toml"  # package data: every key with its default and a comment

_DESCRIPTION = """\
An MCP server that gives LLM clients safe, fast local tools: read, write, search and edit files,
inspect images and PDFs, run commands. Every path must resolve inside the allowed roots.

Without a command it serves MCP over stdio (what Claude Desktop, Cursor and other clients start);
--transport sse or streamable-http serves it over HTTP, which needs a bearer token.
With no --config and no --root, the current directory is the only root (but never /, the home
directory or above it, or a system directory: there no root is served); MCP_LOCALTOOLS_ROOTS
(directories separated by the path separator) gives the roots when neither the config file nor
--root does.
"""

_EPILOG = """\
commands:
  serve                 run the MCP server (the default)
  tools [--json]        list the tools; --json prints their manifests (schemas, annotations);
                        --format mcp|openai|anthropic prints definitions in that provider's format
  call TOOL [ARGS]      call one tool with ARGS, a JSON object (omitted or '-': read from stdin), and
                        print the result as JSON: {"success": ..., "structuredContent": ...,
                        "content": [...]} or {"success": false, "error": {"code", "message"}}.
                        Exit status: 0 success, 1 bad input, usage or tool error, 2 refused by policy.
  token --file PATH     write a new random bearer token (256 bits) to PATH with mode 0600
  config --example      print the example config file (every key, its default and a comment)
  audit [filters]       read the [audit] log: --since/--until (ISO time or 15m, 2h, 1d), --tool,
                        --session, --decision allowed|refused; --follow; --json for one JSON
                        object per line (default: a compact table)

network transports:
  Every request needs "Authorization: Bearer <token>"; the token comes from [server]
  auth_token_file (a file only its owner can read) or MCP_LOCALTOOLS_TOKEN. Host and Origin are
  checked (loopback names plus [server] allowed_hosts / allowed_origins); binding a non-loopback
  address requires allowed_hosts. GET /healthz answers without a token.

examples:
  mcp-localtools --root ~/projects
  mcp-localtools --config config.toml --read-only
  mcp-localtools tools --json
  mcp-localtools --root . call readfile '{"path": "README.md", "limit": 20}'
  echo '{"path": "."}' | mcp-localtools call listdirectory
  mcp-localtools token --file ~/.config/mcp-localtools/token
  mcp-localtools --config config.toml audit --since 1h --decision refused
  mcp-localtools --transport streamable-http --auth-token-file ~/.config/mcp-localtools/token

environment:
  MCP_LOCALTOOLS_LOG_LEVEL   DEBUG, INFO, WARNING (default) or ERROR; logs go to stderr only
  MCP_LOCALTOOLS_TOKEN       bearer token for the network transports (when no auth_token_file)
"""


def _add_common(parser: argparse.ArgumentParser, *, suppress: bool) -> None:
    default = argparse.SUPPRESS if suppress else None
    parser.add_argument(
        "--config",
        metavar="PATH",
        default=default,
        help="TOML config file (mcp-localtools config --example prints every key)",
    )
    parser.add_argument(
        "--root",
        metavar="DIR",
        action="append",
        default=default,
        help="allowed root directory; repeat for several (replaces [paths] allowed_roots)",
    )
    parser.add_argument(
        "--read-only",
        action="store_true",
        default=argparse.SUPPRESS if suppress else False,
        help="register only the tools that change nothing",
    )
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
    parser.add_argument(
        "--profile",
        metavar="NAME",
        default=default,
        help="serve only the tools of [profiles.NAME] to clients without a profile token (stdio: to all)",
    )
    parser.add_argument(
        "--allow-unauthenticated-loopback",
        action="store_true",
        default=argparse.SUPPRESS if suppress else False,
        help="network transports on a loopback address only: serve without a token (for local test clients)",
    )
    parser.add_argument("--log-level", choices=["DEBUG", "INFO", "WARNING", "ERROR"], default=default)


class _Parser(argparse.ArgumentParser):
    """argparse with usage errors exiting 1 (bad input), since 2 means a policy refusal here."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_ERROR, f"{self.prog}: error: {message}\n")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="mcp-localtools",
        description=_DESCRIPTION,
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"mcp-localtools {__version__}")
    _add_common(parser, suppress=False)
    commands = parser.add_subparsers(dest="command", metavar="{serve,tools,call,token,audit,config,index}")
    serve = commands.add_parser("serve", help="run the MCP server (default)")
    _add_common(serve, suppress=True)
    tools = commands.add_parser("tools", help="list the tools")
    _add_common(tools, suppress=True)
    tools.add_argument("--json", action="store_true", help="print the manifests as JSON")
    tools.add_argument(
        "--format",
        choices=("mcp", "openai", "anthropic"),
        help="print the tool definitions as JSON in this provider's format",
    )
    call = commands.add_parser("call", help="call one tool and print the result as JSON")
    _add_common(call, suppress=True)
    call.add_argument("tool", help="tool name, e.g. readfile")
    call.add_argument(
        "arguments", nargs="?", help="a JSON object of arguments; omitted or - reads it from stdin"
    )
    token = commands.add_parser("token", help="write a new bearer token file (mode 0600)")
    _add_common(token, suppress=True)
    token.add_argument("--file", metavar="PATH", help="where to write it (default: [server] auth_token_file)")
    token.add_argument("--force", action="store_true", help="replace an existing file")
    audit = commands.add_parser("audit", help="read the audit log")
    _add_common(audit, suppress=True)
    audit.add_argument("--file", metavar="PATH", help="the log (default: [audit] path or its default)")
    audit.add_argument(
        "--since", metavar="TIME", help="from this time: ISO 8601 (UTC) or a span back (15m, 2h, 1d)"
    )
    audit.add_argument("--until", metavar="TIME", help="up to this time; same forms")
    audit.add_argument("--tool", action="append", default=[], help="only this tool (repeatable)")
    audit.add_argument("--session", action="append", default=[], help="only this session (repeatable)")
    audit.add_argument("--decision", choices=["allowed", "refused"], help="only allowed or refused calls")
    audit.add_argument("--follow", "-f", action="store_true", help="keep printing new records")
    audit.add_argument("--json", action="store_true", help="print each record as one JSON line")
    index = commands.add_parser("index", help="build the code index of a directory ahead of time")
    _add_common(index, suppress=True)
    index.add_argument("directory", help="the project to index (its git work tree, else the directory)")
    config = commands.add_parser("config", help="print the example config file")
    config.add_argument(
        "--example",
        action="store_true",
        required=True,
        help="print the example config: every key with its default and a comment",
    )
    return parser


def _config(ns: argparse.Namespace) -> Config:
    """The config file (or the embedded default) with the command-line overrides applied and
    validated by the same models, so a bad flag fails like a bad key (``server.port: ...``)."""
    config = load_config(ns.config) if ns.config else Config()
    data = config.model_dump()
    if ns.root:
        data["paths"].update(allowed_roots=list(ns.root), work_base_dir=None)
    elif not (ns.config and _file_sets_roots(ns.config)):
        env_roots = [root for root in os.environ.get(ROOTS_ENV, "").split(os.pathsep) if root.strip()]
        if env_roots:
            data["paths"].update(allowed_roots=env_roots, work_base_dir=None)
        elif _cwd_refusal() is not None:
            data["paths"].update(allowed_roots=[], work_base_dir=None)
    if ns.read_only:
        data["tools"]["read_only"] = True
    for key in ("transport", "host", "port", "auth_token_file"):
        if getattr(ns, key) is not None:
            data["server"][key] = getattr(ns, key)
    if ns.allowed_host:
        data["server"]["allowed_hosts"] += ns.allowed_host
    return parse_config(data, source="command line")


def _cwd_refusal() -> str | None:
    """Why the working directory may not be the default root (the filesystem root, the home
    directory or above it, a system directory), or None."""
    home = os.environ.get("HOME") or os.environ.get("USERPROFILE")
    return implicit_root_refusal(Path.cwd(), Path(home) if home else None)


def _no_roots_message(ns: argparse.Namespace) -> str:
    """Why a server built from ``ns`` has no roots, and what to do."""
    reason = None if ns.root or os.environ.get(ROOTS_ENV, "").strip() else _cwd_refusal()
    why = (
        f"the working directory is {reason}, which is never served by default"
        if reason is not None and not (ns.config and _file_sets_roots(ns.config))
        else "[paths] allowed_roots is empty"
    )
    return f"no root to work in: {why}; pass --root DIR (or set [paths] allowed_roots or {ROOTS_ENV})"


def _file_sets_roots(path: str) -> bool:
    """True when the config file at ``path`` (already loaded once) sets ``[paths] allowed_roots``."""
    with Path(path).expanduser().open("rb") as handle:
        paths = tomllib.load(handle).get("paths")
    return isinstance(paths, dict) and "allowed_roots" in paths


def _definitions(registry: Registry, provider: str) -> list[dict[str, Any]]:
    """The registered tools as one provider's tool definitions: ``mcp`` (the ``tools/list``
    entries), ``openai`` (Chat Completions ``{"type": "function", "function": {...}}``) or
    ``anthropic`` (Messages API ``{"name", "description", "input_schema"}``)."""
    out: list[dict[str, Any]] = []
    for spec in registry.specs():
        manifest = registry.manifest(spec.name)
        if provider == "openai":
            function = {
                "name": spec.name,
                "description": spec.description,
                "parameters": manifest["inputSchema"],
            }
            out.append({"type": "function", "function": function})
        elif provider == "anthropic":
            out.append(
                {"name": spec.name, "description": spec.description, "input_schema": manifest["inputSchema"]}
            )
        else:
            out.append(manifest)
    return out


def _configure_logging(level: str) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)


def _content_json(item: TextContent | ImageContent | FileContent | LinkContent) -> dict[str, Any]:
    if isinstance(item, TextContent):
        return {"type": "text", "text": item.text}
    if isinstance(item, LinkContent):
        return {"type": "resource_link", "uri": item.uri, "name": item.name, "size": item.size}
    if isinstance(item, ImageContent):
        return {
            "type": "image",
            "mimeType": item.mime_type,
            "data": base64.b64encode(item.data).decode("ascii"),
        }
    return {
        "type": "resource",
        "uri": item.uri,
        "mimeType": item.mime_type,
        "blob": base64.b64encode(item.data).decode("ascii"),
    }


def _print_json(data: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")


def _fail(tool: str, code: str, message: str, exit_code: int = EXIT_ERROR) -> int:
    _print_json({"success": False, "tool": tool, "error": {"code": code, "message": message}})
    return exit_code


def _call(ns: argparse.Namespace) -> int:
    import anyio

    from mcp_localtools.tools import build_registry
    from mcp_localtools.workspace import Workspace

    raw = sys.stdin.read() if ns.arguments in (None, "-") else ns.arguments
    try:
        arguments = json.loads(raw) if raw.strip() else {}
    except json.JSONDecodeError as exc:
        return _fail(ns.tool, "invalid_json", f"arguments are not valid JSON: {exc}")
    if not isinstance(arguments, dict):
        return _fail(ns.tool, "invalid_json", 'arguments must be a JSON object such as \'{"path": "."}\'')
    try:
        config = _config(ns)
    except ConfigError as exc:
        return _fail(ns.tool, exc.code, exc.message)
    if not config.paths.allowed_roots:  # no client to send roots here: one line on stderr, exit 1
        raise ConfigError(_no_roots_message(ns))
    try:
        workspace = Workspace.from_config(config, environ=os.environ, own_files=_own_files(ns))
        registry = build_registry(config, workspace=workspace)
        result: ToolResult = anyio.run(lambda: registry.call(ns.tool, arguments))
    except (ConfigError, UnknownToolError) as exc:
        return _fail(ns.tool, exc.code, exc.message)
    if result.error is not None:
        return _fail(
            ns.tool,
            result.error.code,
            result.error.message,
            EXIT_POLICY if result.error.policy else EXIT_ERROR,
        )
    _print_json(
        {
            "success": True,
            "tool": ns.tool,
            "structuredContent": result.structured,
            "content": [_content_json(item) for item in result.content],
        }
    )
    return EXIT_OK


def _tools(ns: argparse.Namespace) -> int:
    from mcp_localtools.tools import build_registry

    registry = build_registry(_config(ns))
    if ns.format:
        sys.stdout.write(json.dumps(_definitions(registry, ns.format), indent=2) + "\n")
        return EXIT_OK
    if ns.json:
        manifests = [{**registry.manifest(spec.name), "group": spec.group} for spec in registry.specs()]
        sys.stdout.write(json.dumps(manifests, indent=2) + "\n")
        return EXIT_OK
    width = max((len(spec.name) for spec in registry.specs()), default=4)
    for spec in registry.specs():
        kind = (
            "read-only"
            if spec.annotations.read_only
            else ("destructive" if spec.annotations.destructive else "writes")
        )
        sys.stdout.write(f"{spec.name:<{width}}  {spec.group:<5}  {kind:<11}  {spec.title}\n")
    return EXIT_OK


def _bearer_token(config: Config) -> str | None:
    """The network token: ``[server] auth_token_file`` if set, else ``MCP_LOCALTOOLS_TOKEN``."""
    from mcp_localtools.transports import check_token, read_token_file

    if config.server.auth_token_file:
        return read_token_file(config.server.auth_token_file)
    env = os.environ.get(TOKEN_ENV)
    return check_token(env.strip(), TOKEN_ENV) if env else None


def _profile_tokens(config: Config) -> dict[str, str]:
    """Each ``[profiles.NAME] token_file``'s token → NAME.

    Raises:
        ConfigError: a token file is unreadable, readable by others, too short, or holds the
            token of another profile.
    """
    from mcp_localtools.transports import read_token_file

    tokens: dict[str, str] = {}
    for name, profile in config.profiles.items():
        if not profile.token_file:
            continue
        token = read_token_file(profile.token_file)
        if token in tokens:
            raise ConfigError(
                f"profiles {tokens[token]!r} and {name!r} have the same token; give each its own"
            )
        tokens[token] = name
    return tokens


def _own_files(ns: argparse.Namespace) -> list[str]:
    """The server's own files, protected from tools and commands when they lie in a root: the
    config file and the profiles' token files (``[server] auth_token_file`` the workspace adds)."""
    files = [ns.config] if ns.config else []
    if ns.config:
        files += [p.token_file for p in load_config(ns.config).profiles.values() if p.token_file]
    return files


def _serve(ns: argparse.Namespace, log_level: str) -> int:
    from mcp_localtools.server import build_server

    config = _config(ns)
    if not config.paths.allowed_roots:
        logging.getLogger(__name__).warning(
            "%s; until then every file and command tool is refused", _no_roots_message(ns)
        )
    server_config = config.server
    if server_config.transport == "stdio":
        server = build_server(
            config, log_level=log_level, environ=os.environ, own_files=_own_files(ns), profile=ns.profile
        )
        logging.getLogger(__name__).info("serving over stdio")
        try:
            server.run()
        except KeyboardInterrupt:
            pass
        return EXIT_OK

    from mcp_localtools.transports import NetworkSettings, serve_network

    token = _bearer_token(config)
    profile_tokens = _profile_tokens(config)
    if token is None and not profile_tokens and not ns.allow_unauthenticated_loopback:
        raise ConfigError(
            f"no auth token for the {server_config.transport} transport: make one with "
            "'mcp-localtools token --file PATH' and set [server] auth_token_file = PATH, "
            f"or set {TOKEN_ENV}"
        )
    settings = NetworkSettings(
        transport=server_config.transport,
        host=server_config.host,
        port=server_config.port,
        authenticated=token is not None or bool(profile_tokens),
        allowed_hosts=tuple(server_config.allowed_hosts),
        allowed_origins=tuple(server_config.allowed_origins),
        max_request_body_bytes=server_config.max_request_body_bytes,
        session_idle_timeout_seconds=server_config.session_idle_timeout_seconds,
        max_sessions=server_config.max_sessions,
    )
    settings.check()  # refuse unsafe binds before building anything
    server = build_server(
        config,
        log_level=log_level,
        bearer_token=token,
        environ=os.environ,
        own_files=_own_files(ns),
        profile_tokens=profile_tokens,
        profile=ns.profile,
    )
    serve_network(server, settings)
    return EXIT_OK


def _token(ns: argparse.Namespace) -> int:
    import secrets
    from pathlib import Path

    config = _config(ns)
    target = ns.file or config.server.auth_token_file
    if not target:
        raise ConfigError("say where to write the token: mcp-localtools token --file PATH")
    path = Path(target).expanduser().absolute()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    flags = os.O_WRONLY | os.O_CREAT | compat.O_NOFOLLOW | (os.O_TRUNC if ns.force else os.O_EXCL)
    try:
        fd = os.open(path, flags, 0o600)
    except FileExistsError:
        raise ConfigError(f"{path} exists; pass --force to replace it") from None
    except OSError as exc:
        raise ConfigError(f"cannot write {path}: {exc.strerror}") from exc
    compat.fchmod(fd, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(secrets.token_urlsafe(32) + "\n")  # 32 random bytes: 256 bits
    sys.stderr.write(
        f'wrote a new token to {path} (mode 0600). Serve with [server] auth_token_file = "{path}" or '
        f"{TOKEN_ENV}; clients send it as the header 'Authorization: Bearer <token>'.\n"
    )
    return EXIT_OK


def _audit(ns: argparse.Namespace) -> int:
    from pathlib import Path

    from mcp_localtools import audit_reader as audit
    from mcp_localtools.audit import default_audit_path

    config = _config(ns)
    path = Path(ns.file or config.audit.path or default_audit_path(os.environ)).expanduser()
    try:
        keep = audit.RecordFilter(
            since=audit.parse_time(ns.since) if ns.since else None,
            until=audit.parse_time(ns.until) if ns.until else None,
            tools=tuple(ns.tool),
            sessions=tuple(ns.session),
            decision=ns.decision,
        )
    except ValueError as exc:
        raise ConfigError(
            f"--since/--until: {exc}; give an ISO time (2026-11-23T22:00) or a span (15m, 2h, 1d)"
        ) from exc
    if not path.exists() and not ns.follow:
        raise ConfigError(f"no audit log at {path}: turn it on with [audit] enabled = true, or pass --file")

    def show(record: dict[str, Any]) -> None:
        if keep(record):
            line = json.dumps(record, ensure_ascii=False) if ns.json else audit.table_row(record)
            sys.stdout.write(line + "\n")
            sys.stdout.flush()

    if not ns.json:
        sys.stdout.write(audit.TABLE_HEADER + "\n")
    try:
        for record in audit.read_records(path, include_current=not ns.follow):
            show(record)
        if ns.follow:
            for record in audit.follow_records(path):
                show(record)
    except OSError as exc:
        raise ConfigError(f"cannot read the audit log {path}: {exc.strerror or exc}") from exc
    except KeyboardInterrupt:
        pass
    return EXIT_OK


def _index(ns: argparse.Namespace) -> int:
    """``mcp-localtools index DIR``: the code tools' index of DIR built now, with a progress bar
    on stderr; DIR is added to the roots when the config's roots do not hold it."""
    import time

    import anyio

    from mcp_localtools.tools.code import build_index
    from mcp_localtools.workspace import Workspace

    directory = str(Path(ns.directory).expanduser().resolve())
    config = _config(ns)
    roots = [Path(root).expanduser().resolve() for root in config.paths.allowed_roots]
    if not any(Path(directory).is_relative_to(root) for root in roots):
        data = config.model_dump()
        data["paths"].update(allowed_roots=[directory], work_base_dir=None)
        config = parse_config(data, source="command line")
    if not config.index.enabled:
        raise ConfigError("index.enabled is false: the code index is off")
    workspace = Workspace.from_config(config, environ=os.environ, own_files=_own_files(ns))
    began = time.monotonic()

    async def bar(done: float, total: float | None, message: str | None) -> None:
        if total:
            filled = int(30 * done / total)
            sys.stderr.write(f"\r[{'#' * filled}{'.' * (30 - filled)}] {int(done)}/{int(total)} files")
            sys.stderr.flush()

    try:
        summary = anyio.run(build_index, workspace, directory, bar)
    except ToolError as exc:
        sys.stderr.write(f"\nmcp-localtools: {exc.message}\n")
        return EXIT_POLICY if isinstance(exc, PolicyViolation) else EXIT_ERROR
    where = summary.database or "memory (no cache directory)"
    sys.stderr.write("\n")
    sys.stdout.write(
        f"indexed {summary.directory}: {summary.files} files, {summary.symbols} symbols, {summary.chunks} "
        f"chunks in {time.monotonic() - began:.1f} s; kept in {where}\n"
    )
    return EXIT_OK


def _example_config() -> int:
    """Print the example config shipped in the package (``config.example.toml``) to stdout."""
    from importlib.resources import files

    sys.stdout.write((files("mcp_localtools") / EXAMPLE_CONFIG).read_text(encoding="utf-8"))
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    ns = _parser().parse_args(argv)
    log_level = ns.log_level or os.environ.get(LOG_LEVEL_ENV, "WARNING").upper()
    if log_level not in ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"):
        log_level = "WARNING"
    _configure_logging(log_level)
    try:
        if ns.command == "call":
            return _call(ns)
        if ns.command == "tools":
            return _tools(ns)
        if ns.command == "token":
            return _token(ns)
        if ns.command == "audit":
            return _audit(ns)
        if ns.command == "config":
            return _example_config()
        if ns.command == "index":
            return _index(ns)
        return _serve(ns, log_level)
    except ConfigError as exc:
        sys.stderr.write(f"mcp-localtools: {exc.message}\n")
        return EXIT_ERROR
