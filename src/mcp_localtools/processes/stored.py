"""Full command output kept for the MCP session, readable in pages as MCP resources.

A command's result shows the head and the tail of each stream within the result budget; when
that cut anything, the whole stream (up to ``per_stream_bytes``; beyond, its head and tail with a
marker) is kept here and the result links to it (``resource_link``). The client reads it with
``resources/read`` one page at a time: ``mcp-localtools://output/{run}/{stream}/{page}``, pages
of at most ``page_bytes`` bytes cut at UTF-8 character boundaries (text when a page is UTF-8, a
base64 blob otherwise), so the pages put together are the kept bytes exactly.

The store is bounded: ``max_bytes`` in all and ``max_runs`` kept streams, oldest evicted first;
a session's outputs are dropped when it ends, and are visible to that session only.
"""

from __future__ import annotations

import secrets
import threading
from collections import OrderedDict
from dataclasses import dataclass

from mcp_localtools.errors import NotFound
from mcp_localtools.processes.output import HeadTail
from mcp_localtools.processes.runner import OutputFn
from mcp_localtools.results import LinkContent, ResourcePage

__all__ = ["KeptOutput", "OutputStore", "Recorder"]

PREFIX = "mcp-localtools://output/"


class _Keep(HeadTail):
    """A ``HeadTail`` that gives back the kept bytes themselves (marker line between head and
    tail when the stream was longer than its limit)."""

    def data(self) -> bytes:
        head, tail = bytes(self._head), bytes(self._tail)
        elided = self.total - len(head) - len(tail)
        if elided <= 0:
            return head + tail
        return head + f"\n[... {elided} bytes elided; {self.total} bytes in all ...]\n".encode() + tail


class Recorder:
    """Records both streams of one run (up to ``limit`` bytes each), passing every chunk on to
    ``forward``; hand ``feed`` to the process runner as its ``on_output``."""

    def __init__(self, limit: int, forward: OutputFn | None) -> None:
        self.streams = {"stdout": _Keep(limit), "stderr": _Keep(limit)}
        self._forward = forward

    def feed(self, stream: str, data: bytes) -> None:
        self.streams[stream].write(data)
        if self._forward is not None:
            self._forward(stream, data)

    def data(self, stream: str) -> bytes:
        """The recorded bytes of ``stream`` (``stdout`` or ``stderr``)."""
        return self.streams[stream].data()


@dataclass(frozen=True, slots=True)
class KeptOutput:
    """One stored stream: its id, session, bytes and page boundaries (byte offsets)."""

    run: str
    stream: str
    session_id: str
    data: bytes
    starts: tuple[int, ...]

    @property
    def pages(self) -> int:
        return len(self.starts)

    def uri(self, page: int = 1) -> str:
        return f"{PREFIX}{self.run}/{self.stream}/{page}"

    def link(self, command: str) -> LinkContent:
        """The ``resource_link`` a result carries to this output."""
        shown = command if len(command) <= 80 else command[:77] + "..."
        return LinkContent(
            uri=self.uri(1),
            name=f"{self.stream} of {shown}",
            description=(
                f"full {self.stream}: {len(self.data)} bytes in {self.pages} page(s); "
                f"page N is {self.uri(1)[:-1]}N"
            ),
            mime_type="text/plain",
            size=len(self.data),
        )


def _page_starts(data: bytes, page_bytes: int) -> tuple[int, ...]:
    """Byte offsets where pages start: every ``page_bytes``, moved back to a UTF-8 lead byte."""
    starts = [0]
    while starts[-1] + page_bytes < len(data):
        cut = starts[-1] + page_bytes
        back = 0
        while back < 3 and data[cut - back] & 0xC0 == 0x80:
            back += 1
        starts.append(cut - back if back < 3 or data[cut - back] & 0xC0 != 0x80 else cut)
    return tuple(starts)


class OutputStore:
    """The kept outputs of every session (a ``registry.ResourceSource``).

    Args:
        max_bytes: most bytes kept in all; 0 keeps nothing (results then link to nothing).
        max_runs: most streams kept.
        page_bytes: most bytes of one page.
    """

    prefix = PREFIX
    uri_template = PREFIX + "{run}/{stream}/{page}"
    description = (
        "The full output of a shellcommand or runscript run, in pages (1-based); the results "
        "link to page 1 and say how many pages there are. Kept for the session, oldest evicted."
    )

    def __init__(self, *, max_bytes: int, max_runs: int, page_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.max_runs = max_runs
        self.page_bytes = max(page_bytes, 1024)
        self.per_stream_bytes = max_bytes // 4
        self._kept: OrderedDict[tuple[str, str], KeptOutput] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()

    def recorder(self, forward: OutputFn | None) -> Recorder | None:
        """A recorder for one run, or None when the store keeps nothing."""
        return Recorder(self.per_stream_bytes, forward) if self.max_bytes else None

    def keep(self, session_id: str, stream: str, data: bytes) -> KeptOutput | None:
        """Store ``data`` as ``stream`` of a new run of ``session_id``, evicting the oldest
        outputs to stay within the bounds; None when it cannot be kept at all."""
        if not self.max_bytes or len(data) > self.max_bytes:
            return None
        kept = KeptOutput(
            run=secrets.token_urlsafe(12),
            stream=stream,
            session_id=session_id,
            data=data,
            starts=_page_starts(data, self.page_bytes),
        )
        with self._lock:
            self._kept[(kept.run, stream)] = kept
            self._size += len(data)
            while self._size > self.max_bytes or len(self._kept) > self.max_runs:
                _, old = self._kept.popitem(last=False)
                self._size -= len(old.data)
        return kept

    def read(self, uri: str, session_id: str) -> ResourcePage:
        """Page ``N`` of a kept stream, as ``session_id`` may see it.

        Raises:
            NotFound: a malformed URI, an unknown, evicted or other session's output, or a page
                past the last.
        """
        parts = uri[len(PREFIX) :].split("/") if uri.startswith(PREFIX) else []
        with self._lock:
            kept = self._kept.get((parts[0], parts[1])) if len(parts) == 3 else None
        if kept is None or kept.session_id != session_id:
            raise NotFound(f"no kept output at {uri} (evicted, or its session ended); run the command again")
        if not parts[2].isdigit() or not 1 <= int(parts[2]) <= kept.pages:
            raise NotFound(f"{uri}: no such page; pages are 1 to {kept.pages}")
        page = int(parts[2])
        end = kept.starts[page] if page < kept.pages else len(kept.data)
        chunk = kept.data[kept.starts[page - 1] : end]
        try:
            return ResourcePage(uri=uri, mime_type="text/plain", text=chunk.decode("utf-8"))
        except UnicodeDecodeError:
            return ResourcePage(uri=uri, mime_type="application/octet-stream", data=chunk)

    async def end_session(self, session_id: str) -> None:
        """Drop every output kept for ``session_id``."""
        with self._lock:
            for key in [key for key, kept in self._kept.items() if kept.session_id == session_id]:
                self._size -= len(self._kept.pop(key).data)
