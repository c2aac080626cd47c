"""Shell sessions: a working directory and environment that later shellcommand calls reuse.

A session holds only ``workDir`` and ``env``, never a live process. Ids are ``sess_`` and 32
random hex digits, so they cannot be guessed. Entries expire ``ttl`` seconds after their last use
(sliding) and the least recently used one is evicted when a new one would exceed the cap; expiry
is lazy, on each access.
"""

from __future__ import annotations

import secrets
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Session", "SessionStore"]


@dataclass(slots=True)
class Session:
    """What a session remembers.

    Attributes:
        id: ``sess_`` + 32 hex digits.
        work_dir: the stored working directory (absolute), or None for the default.
        env: environment overrides merged from every call.
    """

    id: str
    owner: str = "local"
    """The MCP session (``CallContext.session_id``) that created it; no other may use it."""
    work_dir: Path | None = None
    env: dict[str, str | None] = field(default_factory=dict)
    """Overrides merged from every call; a None value unsets the variable for later calls."""
    last_used: float = 0.0


class SessionStore:
    """Sessions by id, with a sliding TTL and an LRU cap.

    Args:
        ttl_seconds: idle time after which a session is forgotten.
        max_sessions: most sessions kept.
        clock: monotonic seconds (tests pass a fake one).
        on_forget: called with a session's id when it expires, is evicted or deleted (the sandbox
            removes the session's temp dir).
    """

    def __init__(
        self,
        *,
        ttl_seconds: float,
        max_sessions: int,
        clock: Callable[[], float] = time.monotonic,
        on_forget: Callable[[str], None] = lambda session_id: None,
    ) -> None:
        self.ttl_seconds = ttl_seconds
        self.max_sessions = max_sessions
        self._clock = clock
        self._on_forget = on_forget
        self._sessions: OrderedDict[str, Session] = OrderedDict()

    def __len__(self) -> int:
        self._expire()
        return len(self._sessions)

    def _expire(self) -> None:
        cutoff = self._clock() - self.ttl_seconds
        while self._sessions:
            oldest = next(iter(self._sessions.values()))
            if oldest.last_used > cutoff:
                break
            del self._sessions[oldest.id]
            self._on_forget(oldest.id)

    def create(self, owner: str = "local") -> Session:
        """A new empty session of MCP session ``owner``; evicts the least recently used one when
        the store is full."""
        self._expire()
        while len(self._sessions) >= self.max_sessions:
            evicted, _ = self._sessions.popitem(last=False)
            self._on_forget(evicted)
        session = Session(id="sess_" + secrets.token_hex(16), owner=owner, last_used=self._clock())
        self._sessions[session.id] = session
        return session

    def get(self, session_id: str, owner: str = "local") -> Session | None:
        """The live session ``session_id`` of MCP session ``owner`` (its use refreshed), or None
        when unknown, expired, or another MCP session's (the same answer, so ids cannot be
        probed from another session)."""
        self._expire()
        session = self._sessions.get(session_id)
        if session is not None and session.owner != owner:
            return None
        if session is not None:
            session.last_used = self._clock()
            self._sessions.move_to_end(session_id)
        return session

    def update(self, session: Session, *, work_dir: Path | None, env: Mapping[str, str | None]) -> None:
        """Store ``work_dir`` (when given) and merge ``env`` into ``session``, for later calls."""
        if work_dir is not None:
            session.work_dir = work_dir
        session.env.update(env)

    def end_owner(self, owner: str) -> None:
        """Forget every session of MCP session ``owner`` (it ended)."""
        for session_id in [key for key, session in self._sessions.items() if session.owner == owner]:
            del self._sessions[session_id]
            self._on_forget(session_id)

    def delete(self, session_id: str) -> None:
        """Forget ``session_id`` (a session created by a call that failed)."""
        if self._sessions.pop(session_id, None) is not None:
            self._on_forget(session_id)
