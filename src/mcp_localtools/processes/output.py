"""Capture one output stream within a byte budget, keeping its head and its tail.

The seed kept only the tail, so an error printed early (a compiler's first message) was
lost. ``HeadTail`` keeps the first half of the budget and a ring of the last half, counts every
byte, and renders the elided middle as one marker line that says how much is missing.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Captured", "HeadTail"]


@dataclass(frozen=True, slots=True)
class Captured:
    """A rendered stream.

    Attributes:
        text: the kept bytes decoded as UTF-8 (invalid sequences replaced with U+FFFD), with a
            marker line where the middle was elided.
        truncated: True when bytes were elided.
        total_bytes: how many bytes the process wrote in all.
    """

    text: str
    truncated: bool
    total_bytes: int


class HeadTail:
    """A byte sink that keeps at most ``limit`` bytes: the first half and the most recent half."""

    def __init__(self, limit: int) -> None:
        self._head_limit = limit - limit // 2
        self._tail_limit = limit // 2
        self._head = bytearray()
        self._tail = bytearray()
        self.total = 0

    def write(self, data: bytes) -> None:
        """Add ``data``; O(len(data)) whatever has been written before."""
        self.total += len(data)
        room = self._head_limit - len(self._head)
        if room > 0:
            self._head += data[:room]
            data = data[room:]
        if not data or not self._tail_limit:
            return
        if len(data) >= self._tail_limit:
            self._tail[:] = data[-self._tail_limit :]
        else:
            self._tail += data
            excess = len(self._tail) - self._tail_limit
            if excess > 0:
                del self._tail[:excess]

    def render(self) -> Captured:
        """The captured text, with ``[... N bytes elided ...]`` between head and tail when cut."""
        elided = self.total - len(self._head) - len(self._tail)
        if elided <= 0:
            return Captured(bytes(self._head + self._tail).decode("utf-8", "replace"), False, self.total)
        head = _cut_incomplete_end(bytes(self._head)).decode("utf-8", "replace")
        tail = _cut_incomplete_start(bytes(self._tail)).decode("utf-8", "replace")
        newline = "" if head.endswith("\n") else "\n"
        marker = f"{newline}[... {elided} bytes elided; {self.total} bytes in all ...]\n"
        return Captured(head + marker + tail, True, self.total)


def _cut_incomplete_end(data: bytes) -> bytes:
    """Drop a UTF-8 sequence cut off at the end (up to 3 bytes), so no stray U+FFFD appears."""
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte & 0xC0 == 0x80:  # continuation byte: keep looking for the lead byte
            continue
        needed = 2 if byte & 0xE0 == 0xC0 else 3 if byte & 0xF0 == 0xE0 else 4 if byte & 0xF8 == 0xF0 else 1
        return data[: len(data) - back] if needed > back else data
    return data


def _cut_incomplete_start(data: bytes) -> bytes:
    """Drop continuation bytes at the start (the rest of a sequence whose lead byte was elided)."""
    start = 0
    while start < min(3, len(data)) and data[start] & 0xC0 == 0x80:
        start += 1
    return data[start:]
