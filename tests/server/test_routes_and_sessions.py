"""Routes (which tools a request sees) and sessions (who a request is)."""

from __future__ import annotations

import pytest

from mcp_localtools.registry import Registry
from mcp_localtools.server.routes import Route, Routes
from mcp_localtools.server.sessions import STATELESS_SESSION, Session, Sessions
from tests.test_registry import spec


def _registry(*names: str) -> Registry:
    registry = Registry()
    for name in names:
        registry.register(spec(name=name))
    return registry


def test_a_route_lists_and_serves_only_its_visible_tools_sorted() -> None:
    route = Route.of(_registry("zeta", "alpha", "mid"), base_dir="/b", visible=["zeta", "alpha", "nosuch"])
    assert [tool.name for tool in route.tools] == ["alpha", "zeta"]
    assert route.serves("alpha") and not route.serves("mid") and not route.serves("nosuch")
    every = Route.of(_registry("alpha", "mid"), base_dir="/b")
    assert every.visible is None and every.serves("mid")


def test_without_a_profile_token_the_default_route_is_taken() -> None:
    default = Route.of(_registry("alpha"), base_dir="/b")
    routes = Routes(default, {"p": Route.of(_registry("beta"), base_dir="/p", profile="p")})
    assert routes.current() is default
    assert routes.for_profile("p").profile == "p"


def test_an_unknown_profile_sees_no_tool() -> None:
    routes = Routes(Route.of(_registry("alpha"), base_dir="/b"))
    route = routes.for_profile("ghost")
    assert route.tools == () and not route.serves("alpha")


def test_each_registry_of_the_routes_is_listed_once() -> None:
    server, own = _registry("alpha"), _registry("beta")
    routes = Routes(
        Route.of(server, base_dir="/b"),
        {
            "a": Route.of(server, base_dir="/b", profile="a", visible=["alpha"]),
            "b": Route.of(own, base_dir="/o", profile="b"),
        },
    )
    assert routes.registries() == [server, own]


@pytest.mark.anyio
async def test_a_request_without_a_context_is_stateless_and_sessions_mint_their_own_ids() -> None:
    session = Sessions().of(None)
    assert session.id == f"{STATELESS_SESSION}/stdio/-" and session.stateless and session.client_name is None
    assert not Session("mcp-1").stateless
    # no module-level counter: each server's sessions are numbered from 1 (checked through a
    # real in-memory connection in tests/test_server.py)
    assert Sessions()._minted == Sessions()._minted == 0
