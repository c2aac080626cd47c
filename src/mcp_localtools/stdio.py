"""The stdio transport: newline-delimited JSON-RPC on stdin/stdout, with bounded lines and an
answer for every request.

It replaces the SDK's ``stdio_server`` below the SDK's serving loop (``Server.run``), because that
reader buffers a line of any length, drops every line it cannot parse without a reply, and closes
the session at EOF while requests are still running. Here:

- a line longer than ``max_line_bytes`` is refused (``-32600``) without being buffered: the rest
  of it is read and discarded, and the request id is recovered from its first bytes when it can be;
- a line that is not UTF-8 or not JSON, or holds an integer too long to convert, gets ``-32700``;
  JSON that is not a JSON-RPC message (``[]``, ``42``, ``"x"``, a batch, a bad envelope, nesting
  past ``jsonrpc.MAX_NESTING``, a request id that is neither a string nor an integer) gets
  ``-32600``; a string holding a lone UTF-16 surrogate (``"\\ud800"``) gets ``-32602``
  (``-32600`` outside ``params``) naming where (``jsonrpc.py`` holds the checks HTTP shares);
- a second request with an id still in flight is refused (``-32600``); the first is still answered;
- at EOF the read side stays open until every request read has been answered (or cancelled by the
  client, or stdout is gone: a write failed, or its reader has closed it), then the session ends;
- a reply that cannot be encoded (a lone surrogate from a file name) becomes a ``-32603`` error
  for its id instead of ending the writer.

While serving, fd 0 reads the null device and fd 1 points at stderr, so children and stray prints
never touch the wire; both are restored on exit. A wire that is a pipe or a socket (as a client
starts a server) is read and written by the event loop itself, non-blocking
(``stdio_io.py``): a call costs no thread hand-off for its request or its reply.
"""

from __future__ import annotations

import logging
import os
import re
import select
import sys
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from mcp_localtools import jsonrpc
from mcp_localtools._sdk import create_context_streams
from mcp_localtools.errors import printable
from mcp_localtools.jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    PARSE_ERROR,
    Refusal,
    json_type,
    recover_id,
)
from mcp_localtools.stdio_io import Oversized, non_blocking, read_lines, restore, write

__all__ = ["PARSE_ERROR", "serve_stdio"]

logger = logging.getLogger(__name__)

_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def _lone_surrogate(value: Any, path: str) -> str | None:
    """The path of the first string (or key) in ``value`` holding a lone surrogate, or None."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return path
        return None
    if isinstance(value, dict):
        for key, item in value.items():
            where = f"{path}.{key}" if path else str(key)
            if _lone_surrogate(key, where) is not None:
                return where
            found = _lone_surrogate(item, where)
            if found is not None:
                return found
    if isinstance(value, list):
        for number, item in enumerate(value):
            found = _lone_surrogate(item, f"{path}[{number}]")
            if found is not None:
                return found
    return None


def _shown(where: str) -> str:
    """``where`` (a path from ``_lone_surrogate``, whose keys may hold the lone surrogate) as a
    reply can carry it: surrogates as ``\\udXXX``, controls escaped, cut when long."""
    return printable(where.encode("utf-8", "backslashreplace").decode("utf-8"))


def classify(line: bytes) -> types.JSONRPCMessage | Refusal | None:
    """One stdin line → the message to serve, the error to answer, or None to skip (a blank line,
    or an invalid reply from the client, which gets no reply back)."""
    if not line.strip():
        return None
    if not _SURROGATE_ESCAPE.search(line) and not jsonrpc.too_deep(line):
        try:
            message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
        except ValidationError:
            pass  # find out below what is wrong, with the slower standard parser
        else:
            if not isinstance(message, types.JSONRPCNotification) or b'"id"' not in line:
                return message
    data = jsonrpc.parse(line)
    if isinstance(data, Refusal):
        return data
    if isinstance(data, list):
        reason = (
            "an empty batch"
            if not data
            else "a batch (MCP sends one message per line; batches are not supported)"
        )
        return Refusal(None, INVALID_REQUEST, f"Invalid Request: {reason}")
    if not isinstance(data, dict):
        return Refusal(
            None,
            INVALID_REQUEST,
            f"Invalid Request: a JSON-RPC message is a JSON object, not {json_type(data)}",
        )
    refused = jsonrpc.id_refusal(data)
    if refused is not None:
        return refused
    found = data.get("id")
    request_id = (
        found if isinstance(found, str) or (isinstance(found, int) and not isinstance(found, bool)) else None
    )
    where = _lone_surrogate(data, "")
    if where is not None:
        code = INVALID_PARAMS if where.startswith("params") else INVALID_REQUEST
        kind = "Invalid params" if code == INVALID_PARAMS else "Invalid Request"
        return Refusal(
            request_id,
            code,
            f"{kind}: {_shown(where)} holds a lone UTF-16 surrogate (such as \\ud800), "
            "which is not Unicode text; send the text as UTF-8 or escape a complete surrogate pair",
        )
    try:
        return types.jsonrpc_message_adapter.validate_python(data, by_name=False)
    except ValidationError as exc:
        if "method" not in data and ("result" in data or "error" in data):
            logger.warning("dropped an invalid JSON-RPC reply from the client (id %r)", data.get("id"))
            return None
        if isinstance(data.get("method"), str) and "params" in data and not isinstance(data["params"], dict):
            return Refusal(
                request_id,
                INVALID_PARAMS,
                f"Invalid params: params must be an object, not {json_type(data['params'])}",
            )
        problems = "; ".join(
            f"{'.'.join(str(part) for part in error['loc'][1:]) or 'message'}: {error['msg']}"
            for error in exc.errors()[:3]
        )
        return Refusal(
            request_id, INVALID_REQUEST, f"Invalid Request: not a JSON-RPC 2.0 message ({problems})"
        )


def _id_key(request_id: int | str | None) -> tuple[str, int | str | None]:
    return (type(request_id).__name__, request_id)


def _encode(message: types.JSONRPCMessage) -> bytes:
    return (message.model_dump_json(by_alias=True, exclude_unset=True) + "\n").encode("utf-8")


def _error(request_id: int | str | None, code: int, message: str) -> types.JSONRPCError:
    return types.JSONRPCError(jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message))


class _Wire:
    """stdout: one writer at a time, and the ids of the requests still owed an answer."""

    def __init__(self, fd: int, *, polled: bool = False) -> None:
        self._fd = fd
        self._polled = polled
        self._lock = anyio.Lock()
        self.pending: dict[tuple[str, int | str | None], int] = {}
        self.changed = anyio.Event()
        self.broken = False

    def owe(self, request_id: int | str | None) -> None:
        self.pending[_id_key(request_id)] = self.pending.get(_id_key(request_id), 0) + 1

    def owes(self, request_id: int | str | None) -> bool:
        return _id_key(request_id) in self.pending

    def settle(self, request_id: int | str | None) -> None:
        key = _id_key(request_id)
        if key in self.pending:
            self.pending[key] -= 1
            if not self.pending[key]:
                del self.pending[key]
            self.changed.set()
            self.changed = anyio.Event()

    async def send(self, message: types.JSONRPCMessage) -> None:
        """Write one message (a reply that cannot be encoded becomes a -32603 error for its id)."""
        try:
            data = _encode(message)
        except Exception as exc:  # noqa: BLE001 - e.g. a lone surrogate from a file name
            if not isinstance(message, types.JSONRPCResponse | types.JSONRPCError):
                logger.error("dropped an outgoing notification or request that cannot be encoded: %s", exc)
                return
            logger.error("the reply to %r cannot be encoded: %s", message.id, exc)
            data = _encode(
                _error(
                    message.id,
                    INTERNAL_ERROR,
                    "the result holds text that is not valid Unicode (a lone surrogate, e.g. from a "
                    "file name that is not UTF-8) and cannot be sent as JSON",
                )
            )
        async with self._lock:
            if not self.broken:
                try:
                    await write(self._fd, data, polled=self._polled)
                except OSError as exc:
                    logger.warning("stdout is gone (%s); no more replies can be sent", exc)
                    self.broken = True
        if isinstance(message, types.JSONRPCResponse | types.JSONRPCError):
            self.settle(message.id)
        if self.broken:
            self.changed.set()


_PEER_CHECK_SECONDS = 0.5


if sys.platform == "win32":  # pragma: no cover - Windows has no poll()

    def _reader_gone(fd: int) -> bool:
        """Always False: Windows has no ``poll``; a write failing is what tells there."""
        return False

else:

    def _reader_gone(fd: int) -> bool:
        """Whether the other end of the pipe (or socket) ``fd`` writes to is closed: a client
        that died closes stdin and stdout together, and a request still running after EOF (a
        long waitprocess) must not keep the server, and what it started, alive for nobody."""
        poller = select.poll()
        poller.register(fd, select.POLLOUT)
        return any(events & (select.POLLERR | select.POLLHUP) for _, events in poller.poll(0))


def _claim(fd: int, diversion: int) -> tuple[int, int]:
    """Move ``fd`` to a private descriptor and point ``fd`` at ``diversion``; returns ``(private,
    saved)`` for ``_release``."""
    private = os.dup(fd)
    os.dup2(diversion, fd)
    return private, fd


def _release(private: int, fd: int) -> None:
    try:
        os.dup2(private, fd)
    except OSError:
        pass


async def serve_stdio(
    server: Server[Any], *, max_line_bytes: int, stdin_fd: int = 0, stdout_fd: int = 1
) -> None:
    """Serve ``server`` (the SDK's low-level server) over stdin/stdout until stdin ends and every
    request read has been answered.

    Args:
        server: the low-level server (``_sdk.lowlevel_server``).
        max_line_bytes: longest accepted message line in bytes; longer ones get -32600 unbuffered.
        stdin_fd, stdout_fd: the wire (claimed and diverted while serving when they are 0 and 1).
    """
    sys.stdout.flush()
    null = os.open(os.devnull, os.O_RDONLY)
    wire_in, _ = _claim(stdin_fd, null)
    os.close(null)
    wire_out, _ = _claim(stdout_fd, 2)
    (read_polled, read_changed), (write_polled, write_changed) = (
        non_blocking(wire_in),
        non_blocking(wire_out),
    )
    try:
        await _serve(server, max_line_bytes, wire_in, wire_out, polled=(read_polled, write_polled))
    finally:
        restore(wire_in, read_changed)
        restore(wire_out, write_changed)
        _release(wire_out, stdout_fd)
        _release(wire_in, stdin_fd)
        os.close(wire_out)
        os.close(wire_in)


async def _serve(
    server: Server[Any], max_line_bytes: int, wire_in: int, wire_out: int, *, polled: tuple[bool, bool]
) -> None:
    """Serve over ``wire_in``/``wire_out``; ``polled``: each is non-blocking, for the event loop."""
    wire = _Wire(wire_out, polled=polled[1])
    read_send, read_receive = create_context_streams[SessionMessage | Exception](0)
    write_send, write_receive = create_context_streams[SessionMessage](0)

    async def reader() -> None:
        async with read_send:
            async for line in read_lines(wire_in, max_line_bytes, polled=polled[0]):
                if isinstance(line, Oversized):
                    await wire.send(
                        _error(
                            recover_id(line.prefix),
                            INVALID_REQUEST,
                            f"Invalid Request: the message is {line.length} bytes, over the limit of "
                            f"{max_line_bytes} bytes ([server] max_stdio_line_bytes); it was discarded "
                            "unread. Send less per call (e.g. write a large file in parts)",
                        )
                    )
                    continue
                message = classify(line)
                if message is None:
                    continue
                if isinstance(message, Refusal):
                    await wire.send(_error(message.id, message.code, message.message))
                    continue
                if isinstance(message, types.JSONRPCRequest):
                    if wire.owes(message.id):
                        await wire.send(
                            _error(
                                message.id,
                                INVALID_REQUEST,
                                f"Invalid Request: id {message.id!r} is already used by a request still in "
                                "flight; give every request its own id",
                            )
                        )
                        continue
                    wire.owe(message.id)
                elif (
                    isinstance(message, types.JSONRPCNotification)
                    and message.method == "notifications/cancelled"
                ):
                    cancelled = (message.params or {}).get("requestId")
                    if cancelled is not None and wire.owes(cancelled):
                        wire.settle(cancelled)  # a cancelled request gets no reply
                await read_send.send(SessionMessage(message))
            while wire.pending and not wire.broken:
                with anyio.move_on_after(_PEER_CHECK_SECONDS):
                    await wire.changed.wait()
                if _reader_gone(wire_out):  # the client died: nobody is left to answer
                    logger.warning("stdin and stdout are closed; %d requests get no reply", len(wire.pending))
                    wire.broken = True

    async def writer() -> None:
        async with write_receive:
            async for outgoing in write_receive:
                await wire.send(outgoing.message)

    async with anyio.create_task_group() as group:
        group.start_soon(reader)
        group.start_soon(writer)
        await server.run(read_receive, write_send, server.create_initialization_options())
        group.cancel_scope.cancel()
