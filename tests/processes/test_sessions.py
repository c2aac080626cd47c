"""SessionStore: ids, sliding TTL and LRU eviction, with a fake clock."""

from __future__ import annotations

import re
from pathlib import Path

from mcp_localtools.processes.sessions import SessionStore


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_session_ids_are_sess_and_32_hex_digits_and_unique() -> None:
    store = SessionStore(ttl_seconds=60, max_sessions=10)
    ids = {store.create().id for _ in range(5)}
    assert len(ids) == 5 and all(re.fullmatch(r"sess_[0-9a-f]{32}", i) for i in ids)


def test_a_session_holds_a_work_dir_and_merged_env_only() -> None:
    store = SessionStore(ttl_seconds=60, max_sessions=10)
    session = store.create()
    store.update(session, work_dir=Path("/w"), env={"A": "1"})
    store.update(session, work_dir=None, env={"B": "2", "A": "3"})
    again = store.get(session.id)
    assert again is not None and again.work_dir == Path("/w") and again.env == {"A": "3", "B": "2"}


def test_sessions_expire_after_ttl_of_idle_time_and_use_refreshes_them() -> None:
    clock = Clock()
    store = SessionStore(ttl_seconds=60, max_sessions=10, clock=clock)
    kept, dropped = store.create(), store.create()
    clock.now += 50
    assert store.get(kept.id) is kept  # refreshed at t+50
    clock.now += 50
    assert store.get(kept.id) is kept
    assert store.get(dropped.id) is None  # idle for 100 s
    clock.now += 61
    assert store.get(kept.id) is None and len(store) == 0


def test_the_least_recently_used_session_is_evicted_at_the_cap() -> None:
    store = SessionStore(ttl_seconds=60, max_sessions=2)
    first, second = store.create(), store.create()
    store.get(first.id)  # second is now the least recently used
    third = store.create()
    assert store.get(second.id) is None
    assert store.get(first.id) is first and store.get(third.id) is third


def test_a_deleted_session_is_gone() -> None:
    store = SessionStore(ttl_seconds=60, max_sessions=2)
    session = store.create()
    store.delete(session.id)
    assert store.get(session.id) is None
