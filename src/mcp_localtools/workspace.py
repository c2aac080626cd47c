"""The Workspace: everything the tools share, built once from the config.

One object holds what used to travel through a factory per tool group: the path policy, the
limits, the server's environment (for commands), the per-file locks (read-modify-write calls on
one file take turns), the parser runner (it bounds how many parser processes run at once) and
the search engine (ripgrep or the Python engine, picked at the first search). Every tool
module's ``spec(workspace)`` takes what it needs from it. State that belongs to one tool group
(the exec group's sessions and process runner) is built on first request through ``shared`` and
kept here, so the group's tools share one instance without a module-level singleton.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from mcp_localtools.changes import ChangeFeed
from mcp_localtools.config import Config, ExecConfig, LimitsConfig
from mcp_localtools.files.lineindexes import LineIndexes
from mcp_localtools.files.locks import FileLocks
from mcp_localtools.parsers.runner import ParserRunner
from mcp_localtools.policy.paths import PathPolicy
from mcp_localtools.policy.protected import below_any, protected_paths, unprotected_paths
from mcp_localtools.search import DeferredEngine

if TYPE_CHECKING:  # the rule is only passed on: its policy module is imported by the exec tools
    from mcp_localtools.policy.execution import CommandRule
    from mcp_localtools.search.engine import Engine

__all__ = ["ServedRoots", "Workspace"]

T = TypeVar("T")

MAX_SERVED_ROOTS = 4096
"""Distinct roots ``ServedRoots`` remembers; past it, every path counts as in a root."""


class ServedRoots:
    """Every root the server has served to any session: its own, each profile's and each set a
    client shared (MCP roots), shared by a workspace and its siblings and never forgotten while
    the server runs. The file tools of some session could have written anywhere under them, so
    the exec tools distrust programs and ``PATH`` entries there (``[approval] trusted_commands``,
    ``ExecutionPolicy.check_env``) even in a session whose own roots are narrower. Thread-safe.

    Args:
        roots: the first roots (absolute, resolved).
    """

    def __init__(self, roots: Iterable[Path] = ()) -> None:
        self._roots: dict[Path, None] = {}
        self._lock = threading.Lock()
        self.add(roots)

    def add(self, roots: Iterable[Path]) -> None:
        """Remember ``roots`` as served (beyond ``MAX_SERVED_ROOTS`` distinct ones, ``all`` gives
        their anchors, ``/``: everything is suspect, which fails closed)."""
        with self._lock:
            for root in roots:
                self._roots[root] = None

    def all(self) -> tuple[Path, ...]:
        """The roots served so far, in the order first served."""
        with self._lock:
            if len(self._roots) > MAX_SERVED_ROOTS:
                return tuple(dict.fromkeys(Path(root.anchor) for root in self._roots))
            return tuple(self._roots)


@dataclass(frozen=True, eq=False)
class Workspace:
    """What the tools work with; build it with ``Workspace.from_config``.

    Attributes:
        config: the whole configuration.
        paths: the path policy of ``[paths]``.
        environ: the server's environment; the exec tools pass an allowlisted part of it to
            commands (empty: nothing).
        foreign_roots: in a profile's workspace (``sibling``), the server's roots outside the
            profile's own: hidden from its commands' sandbox, so they see only the profile's roots.
        locks: one lock per file for read-modify-write calls (writefile's appends, the text edits).
        parsers: runs image and PDF parsing in confined worker processes.
        search: the engine behind searchfiles and globfiles.
        changes: notices of files that tools changed (the code index listens).
        line_indexes: the line indexes of recently read file versions (readfile's windows).
        own_files: the server's own files (config, tokens, audit log), protected where they lie
            in a root; a sibling protects them too.
        command_rule: a host's rule for commands, asked before the execution policy
            (``ExecutionPolicy.host_rule``); only the Python API sets it; a sibling keeps it.
        served_roots: every root this workspace and its siblings serve (``ServedRoots``).
    """

    config: Config
    paths: PathPolicy
    environ: Mapping[str, str] = field(default_factory=dict)
    foreign_roots: tuple[Path, ...] = ()
    locks: FileLocks = field(default_factory=FileLocks)
    parsers: ParserRunner = field(default_factory=ParserRunner)
    search: Engine = field(default_factory=DeferredEngine)
    changes: ChangeFeed = field(default_factory=ChangeFeed)
    line_indexes: LineIndexes = field(default_factory=LineIndexes)
    own_files: tuple[Path, ...] = ()
    command_rule: CommandRule | None = None
    served_roots: ServedRoots = field(default_factory=ServedRoots)
    _shared: dict[Callable[..., Any], Any] = field(default_factory=dict, init=False, repr=False)
    _guard: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    @classmethod
    def from_config(
        cls,
        config: Config,
        *,
        paths: PathPolicy | None = None,
        environ: Mapping[str, str] | None = None,
        search: Engine | None = None,
        own_files: Iterable[str | Path] = (),
        command_rule: CommandRule | None = None,
    ) -> Workspace:
        """Build the workspace of ``config``.

        Args:
            paths: an already-built policy for ``config.paths`` (built here when omitted).
            environ: the server's environment (None: empty).
            search: the search engine (default: ripgrep if installed, else Python, picked at the
                first search).
            own_files: the server's config and token files: protected (read-only to tools and
                commands) when they lie inside a root.
            command_rule: a host's rule for commands (``ExecutionPolicy.host_rule``).

        Raises:
            ConfigError: a root is missing or not a directory, or the base directory is outside
                the roots.
        """
        extra: dict[str, Any] = {} if search is None else {"search": search}
        policy = paths or PathPolicy.from_config(config.paths)
        files = [Path(name) for name in own_files if str(name)]
        if config.server.auth_token_file:
            files.append(Path(config.server.auth_token_file))
        protected = protected_paths(config.paths, policy.roots, own_files=files)
        return cls(
            config=config,
            paths=replace(
                policy,
                protected=tuple(dict.fromkeys([*policy.protected, *protected])),
                unprotected=unprotected_paths(config.paths, policy.roots),
            ),
            environ=dict(environ or {}),
            own_files=tuple(files),
            command_rule=command_rule,
            served_roots=ServedRoots(policy.roots),
            **extra,
        )

    def sibling(self, config: Config, *, own_files: Iterable[str | Path] | None = None) -> Workspace:
        """A workspace for ``config`` (a profile's, ``Config.for_profile``) with this one's
        environment, and sharing its per-file locks, line indexes, parser runner, search engine and
        served roots (to which it adds its own): calls under different profiles on one file still
        take turns, parser processes stay bounded for the whole server, a change made under one
        profile reaches every listener, and a program in any served root stays suspect. Group
        state (``shared``) is its own. ``own_files`` default to this workspace's.

        Raises:
            ConfigError: as ``from_config``.
        """
        files = self.own_files if own_files is None else own_files
        built = Workspace.from_config(config, environ=self.environ, search=self.search, own_files=files)
        mine = built.paths.roots
        # What this workspace protects inside the new roots stays protected there (a relative
        # ``protected_paths`` entry of a configured root would otherwise be re-anchored to them).
        inherited = [path for path in self.paths.protected if below_any(path, set(mine))]
        paths = replace(built.paths, protected=tuple(dict.fromkeys([*built.paths.protected, *inherited])))
        foreign = tuple(
            root
            for root in (*self.paths.roots, *self.foreign_roots)
            if not any(root == own or root.is_relative_to(own) for own in mine)
        )
        return replace(
            built,
            paths=paths,
            locks=self.locks,
            parsers=self.parsers,
            changes=self.changes,
            line_indexes=self.line_indexes,
            foreign_roots=foreign,
            command_rule=self.command_rule,
            served_roots=self._served_with(mine),
        )

    def _served_with(self, roots: Iterable[Path]) -> ServedRoots:
        self.served_roots.add(roots)
        return self.served_roots

    @property
    def limits(self) -> LimitsConfig:
        """``[limits]``: read, write and result budgets."""
        return self.config.limits

    @property
    def exec(self) -> ExecConfig:
        """``[exec]``: the execution policy's settings."""
        return self.config.exec

    def existing(self, factory: Callable[[Workspace], T]) -> T | None:
        """The instance ``shared(factory)`` built, or None when none was (the group is not served)."""
        with self._guard:
            found: T | None = self._shared.get(factory)
            return found

    def shared(self, factory: Callable[[Workspace], T]) -> T:
        """The one instance ``factory(self)`` builds for this workspace, built on the first call.

        A tool group keeps state its tools share this way (``workspace.shared(ExecGroup.create)``).

        Raises:
            whatever ``factory`` raises (it is called again on the next request).
        """
        with self._guard:
            if factory not in self._shared:
                self._shared[factory] = factory(self)
            instance: T = self._shared[factory]
            return instance
