"""Which tools a request sees: one ``Route`` per ``[profiles]`` entry, chosen by the bearer token.

A request whose bearer token is a profile's (``transports.StaticTokenVerifier`` gives its access
token the scope ``PROFILE_SCOPE + name``) takes that profile's route; any other request (stdio,
the server's own token, no auth) takes the default route: the profile chosen at start
(``--profile``), else every tool of the server's registry.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.types import Tool

from mcp_localtools.registry import Registry
from mcp_localtools.transports.auth import PROFILE_SCOPE
from mcp_localtools.workspace import Workspace

__all__ = ["Route", "Routes"]


@dataclass(frozen=True, eq=False)
class Route:
    """What one kind of client works with.

    Attributes:
        profile: the ``[profiles]`` name, or None (the server's whole tool set).
        registry: the tools: the profile's own registry when it has policy overrides (its roots,
            exec and web policies, ``Config.for_profile``), else the server's.
        visible: the tool names it may list and call; None: all of ``registry``.
        base_dir: where its relative paths resolve (shown in approval questions).
        tools: its ``tools/list`` entries, sorted by name, built once.
        workspace: the workspace ``registry`` was built on (a session's own roots are a sibling
            of it, ``roots.py``); None when unknown (a bare registry given to ``create_server``).
    """

    profile: str | None
    registry: Registry
    visible: frozenset[str] | None
    base_dir: str
    tools: tuple[Tool, ...]
    workspace: Workspace | None = None

    @classmethod
    def of(
        cls,
        registry: Registry,
        *,
        base_dir: str,
        profile: str | None = None,
        visible: Iterable[str] | None = None,
        workspace: Workspace | None = None,
    ) -> Route:
        """The route to ``registry``'s tools (only ``visible`` ones when given), built on
        ``workspace``."""
        shown = None if visible is None else frozenset(visible)
        tools = tuple(
            Tool.model_validate(registry.manifest(name))
            for name in registry.names()
            if shown is None or name in shown
        )
        return cls(profile, registry, shown, base_dir, tools, workspace)

    def serves(self, name: str) -> bool:
        """True when a client on this route may call the tool ``name``."""
        return name in self.registry and (self.visible is None or name in self.visible)


class Routes:
    """The server's routes: ``default`` for requests without a profile token, ``profiles`` by name.

    Args:
        default: the route of requests without a profile token.
        profiles: ``[profiles]`` name → its route.
    """

    def __init__(self, default: Route, profiles: Mapping[str, Route] | None = None) -> None:
        self.default = default
        self.profiles = dict(profiles or {})

    def current(self) -> Route:
        """The route of the request being served: its profile token's, else the default."""
        token = get_access_token()
        for scope in token.scopes if token is not None else ():
            if scope.startswith(PROFILE_SCOPE):
                return self.for_profile(scope[len(PROFILE_SCOPE) :])
        return self.default

    def for_profile(self, name: str) -> Route:
        """The route of profile ``name``; an unknown name sees no tool."""
        route = self.profiles.get(name)
        if route is None:
            return Route(name, self.default.registry, frozenset(), self.default.base_dir, ())
        return route

    def registries(self) -> list[Registry]:
        """Every registry a route uses, each once (the default's first)."""
        found: dict[int, Registry] = {}
        for route in [self.default, *self.profiles.values()]:
            found.setdefault(id(route.registry), route.registry)
        return list(found.values())
