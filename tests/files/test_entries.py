"""Entry times as RFC 3339 text."""

from __future__ import annotations

from datetime import UTC, datetime

from mcp_localtools.files.entries import rfc3339


def test_rfc3339_gives_the_second_the_timestamp_falls_in() -> None:
    for timestamp in (0.0, 1.9, -1.5, 1_764_265_560.999999, 4_102_444_800.25):
        expected = datetime.fromtimestamp(timestamp, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        assert rfc3339(timestamp) == expected, timestamp
        assert rfc3339(timestamp) == expected, "the remembered text is the same"
    assert rfc3339(1_764_265_560.5) == "2025-11-27T17:46:00Z"
