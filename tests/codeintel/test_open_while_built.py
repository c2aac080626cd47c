"""Opening a code index while another connection holds it for a first build (its secondary
indexes not made yet, its write lock taken): the open answers at once, without the indexes
(the build makes them at its end), instead of waiting 30 s for the lock and failing."""

from __future__ import annotations

import time
from pathlib import Path

from mcp_localtools.codeintel.database import connect


def test_an_index_being_built_elsewhere_opens_at_once(tmp_path: Path) -> None:
    path = tmp_path / "index.sqlite3"
    building = connect(path)
    try:
        building.execute("DROP INDEX symbols_folded")
        building.execute("BEGIN IMMEDIATE")  # a first build's transaction
        began = time.monotonic()
        reader = connect(path)
        assert time.monotonic() - began < 5
        assert reader.execute("SELECT count(*) FROM files").fetchone() == (0,)
        reader.close()
        building.rollback()
    finally:
        building.close()
    again = connect(path)  # once the lock is free, the missing index is made
    try:
        names = {row[0] for row in again.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
        assert "symbols_folded" in names
    finally:
        again.close()
