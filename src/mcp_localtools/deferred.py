"""A registry whose tools are built at their first use: what a cached start serves.

A start served from the start-up cache (``cli/startcache.py``) already knows every tool's
``tools/list`` entry; building every spec would import every tool module (~100 ms) before the
client's first call. ``DeferredRegistry`` holds each tool as its listed entry and a function that
builds its spec (``defer``). The tool counts as registered (``names``,
``in``, ``manifest`` answer from the entry); the first lookup that needs the spec (``get``, hence
``call``, ``check``, ``locate``, ``schemas``) builds and registers it, once, under a lock; what
needs every spec (``specs``, resources) builds them all. ``ready(name)`` builds one in a worker
thread, so the event loop does not import a tool module. A tool built after a session started
gets no ``on_session_start`` for that session: it is a warm-up (the exec tools' sandbox), and the
tool's first call does that work itself.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio.to_thread

from mcp_localtools.errors import SpecError
from mcp_localtools.registry import Registry
from mcp_localtools.results import ResourcePage
from mcp_localtools.spec import ResourceSource, ToolSpec

__all__ = ["BuiltFn", "DeferredRegistry"]

logger = logging.getLogger(__name__)

BuiltFn = Callable[[str, dict[str, Any] | None], None]
"""Told a deferred tool's name and its fresh manifest (``Registry.manifest``) once it is built,
or None when its build failed."""


@dataclass
class _Held:
    listed: dict[str, Any]
    build: Callable[[], ToolSpec[Any]]


@dataclass
class DeferredRegistry(Registry):
    """A ``Registry`` that may also hold tools unbuilt (``defer``); see the module docstring.

    Args:
        listed: the ``tools/list`` entries it was made from (``tools.deferred_registry``; a
            registry for a client's roots is made from them again).
        built: told each held tool's name and its fresh manifest (``Registry.manifest``) once
            it is built, or None when its build raised (then the tool stays held, and its next
            use tries again); it must not use this registry.
    """

    listed: tuple[Mapping[str, Any], ...] = ()
    built: BuiltFn | None = field(default=None, repr=False)
    _held: dict[str, _Held] = field(default_factory=dict, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def defer(self, listed: Mapping[str, Any], build: Callable[[], ToolSpec[Any]]) -> None:
        """Hold the tool whose ``tools/list`` entry (wire JSON, the registry's from now on: not
        copied) is ``listed``; ``build()`` returns its spec (named ``listed["name"]``) at its first
        use, then ``built(name, manifest)`` is called.

        Raises:
            SpecError: the name is taken.
        """
        name = str(listed["name"])
        if name in self:
            raise SpecError(f"tool {name!r} is registered twice")
        self._held[name] = _Held(dict(listed), build)

    async def ready(self, name: str | None = None) -> None:
        """Build the tool ``name`` (None: every held tool) now, in a worker thread, if it is still
        held (a no-op otherwise). Raises what its ``build`` raises."""
        if name is None:
            if self._held:
                await anyio.to_thread.run_sync(self._build_all)
        elif name in self._held:
            await anyio.to_thread.run_sync(self._build, name)

    def _build(self, name: str) -> None:
        with self._lock:
            held = self._held.get(name)
            if held is None:  # built meanwhile
                return
            try:
                spec = held.build()
                if spec.name != name:
                    raise SpecError(f"the deferred tool {name!r} was built as {spec.name!r}")
                # Registered before it stops being held: the event loop asks ``in`` and ``names``
                # without the lock, and the tool must be in the registry all the while.
                super().register(spec)
            except Exception:
                self._unregister(name)  # a register that failed half-way must not block a retry
                self._tell(name, None)  # under the lock: ``built`` must not use this registry
                raise
            del self._held[name]
        self._tell(name, super().manifest(name))

    def _unregister(self, name: str) -> None:
        """Drop what a ``register`` of ``name`` that raised half-way (its ``on_register``) kept."""
        self._specs.pop(name, None)
        self._schemas.pop(name, None)

    def _tell(self, name: str, manifest: dict[str, Any] | None) -> None:
        """``built(name, manifest)``, whose failure is logged, not the call's."""
        if self.built is None:
            return
        try:
            self.built(name, manifest)
        except Exception:
            logger.exception("telling that the tool %s was built failed", name)

    def _build_all(self) -> None:
        for name in list(self._held):
            self._build(name)

    def register(self, spec: ToolSpec[Any]) -> None:
        """``Registry.register``; a held tool's name is taken too."""
        if spec.name in self._held:
            raise SpecError(f"tool {spec.name!r} is registered twice")
        super().register(spec)

    def replace(self, spec: ToolSpec[Any]) -> ToolSpec[Any]:
        """``Registry.replace``, once the tool it replaces is built."""
        if spec.name in self._held:
            self._build(spec.name)
        return super().replace(spec)

    def get(self, name: str) -> ToolSpec[Any]:
        """``Registry.get``, the tool built first when it is held."""
        if name in self._held:
            self._build(name)
        return super().get(name)

    def manifest(self, name: str) -> dict[str, Any]:
        """``Registry.manifest``; a held tool's is its listed entry, unbuilt (its schemas are the
        registry's own, as a built tool's are: not to be changed)."""
        held = self._held.get(name)
        return dict(held.listed) if held is not None else super().manifest(name)

    def names(self) -> list[str]:
        """Registered and held tool names, sorted (a tool being built is both for a moment)."""
        return sorted({*self._held, *super().names()})  # held first: the writer drops it last

    def specs(self) -> list[ToolSpec[Any]]:
        """Every spec, the held ones built first."""
        self._build_all()
        return super().specs()

    def resource_sources(self) -> list[ResourceSource]:
        """Every tool's resource sources, the held tools built first."""
        self._build_all()
        return super().resource_sources()

    def read_resource(self, uri: str, session_id: str) -> ResourcePage:
        """``Registry.read_resource``, the held tools built first."""
        self._build_all()
        return super().read_resource(uri, session_id)

    def __len__(self) -> int:
        return len(self.names())

    def __contains__(self, name: object) -> bool:
        return name in self._held or super().__contains__(name)
