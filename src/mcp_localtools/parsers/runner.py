"""ParserRunner: parse untrusted images and PDFs in short-lived, confined worker processes.

Decoders are the riskiest code the server runs on hostile input:
a decompression bomb, a malformed PDF that sends a parser into a loop, a crash in C code. So no
decoder runs in the server process. Each parse starts ``worker.py`` in a fresh interpreter that
limits its own memory, CPU time, file writes and descriptors before it reads the file's bytes
from a pipe (the server opened and checked the file; the worker never sees a path), and the
runner waits for its answer without blocking the event loop. A parse that runs past
``timeout_seconds``, or whose call is cancelled or times out, has its process killed and its
result discarded, so neither its time nor its memory outlives the call. At most ``max_workers``
run at once, so the memory parsers can take is bounded by ``max_workers * memory_bytes``.

The price is a process start per parse: about 20 ms for the interpreter plus the import of the
one library the operation needs (Pillow about 40 ms, pypdf about 150 ms), measured on the
2-core development machine.
"""

from __future__ import annotations

import json
import math
import signal
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import anyio

from mcp_localtools.errors import InvalidArguments, TooLarge, ToolError, ToolTimeout, UnsupportedContent

__all__ = [
    "DEFAULT_MAX_WORKERS",
    "DEFAULT_MEMORY_BYTES",
    "DEFAULT_TIMEOUT_SECONDS",
    "Operation",
    "Parsed",
    "ParserRunner",
]

MiB = 1024 * 1024

DEFAULT_TIMEOUT_SECONDS = 120.0
"""Wall-clock time one parse may take (seconds); well under the registry's call timeout."""
DEFAULT_MEMORY_BYTES = 1024 * MiB
"""Address space of one worker: the largest image it accepts (2**27 pixels at 4 bytes, 512 MiB)
decoded, plus the interpreter and the library; that worst case was measured to fit in 640 MiB."""
DEFAULT_MAX_WORKERS = 2
"""Parses running at once; more calls wait their turn (within their own timeout)."""

_WORKER = Path(__file__).with_name("worker.py")
_MAX_RESPONSE = 80 * MiB  # the largest answer: 16 Mi characters of PDF text in UTF-8, plus headroom
_ENV = {"MALLOC_ARENA_MAX": "2"}  # nothing of the server's environment; few malloc arenas under RLIMIT_AS
_ERRORS: dict[str, type[ToolError]] = {
    "unsupported": UnsupportedContent,
    "too_large": TooLarge,
    "invalid_arguments": InvalidArguments,
}

Operation = Literal["image", "svg", "pdf"]


@dataclass(frozen=True, slots=True)
class Parsed:
    """A worker's answer: the operation's result and its payload (re-encoded image, UTF-8 text)."""

    result: dict[str, Any]
    payload: bytes


class ParserRunner:
    """Runs parser operations in confined worker processes; one instance per server.

    Args:
        timeout_seconds: wall-clock limit of one parse.
        memory_bytes: address-space limit of one worker (``RLIMIT_AS``; not enforced on macOS).
        max_workers: parses running at once.
    """

    def __init__(
        self,
        *,
        timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
        memory_bytes: int = DEFAULT_MEMORY_BYTES,
        max_workers: int = DEFAULT_MAX_WORKERS,
    ) -> None:
        self.timeout_seconds = timeout_seconds
        self.memory_bytes = memory_bytes
        self.max_workers = max_workers
        self._slots = anyio.CapacityLimiter(max_workers)

    async def run(
        self, op: Operation, data: bytes, request: Mapping[str, Any], *, failure: str, hint: str = ""
    ) -> Parsed:
        """Parse ``data`` with operation ``op`` of ``worker.py``.

        Args:
            op: ``image``, ``svg`` or ``pdf``.
            data: the file's bytes.
            request: the operation's parameters (see ``worker.py``).
            failure: the start of every error message, e.g. ``cannot read image /abs/a.png``.
            hint: appended to error messages (what the caller can do instead).

        Raises:
            UnsupportedContent: the file is corrupt, encrypted, or not of the expected kind, or
                the worker died.
            TooLarge: the file is over a parser limit (pixels, memory, PDF stream sizes), or the
                answer is over the runner's limit (80 MiB).
            InvalidArguments: the request does not fit the file (a page beyond the last one), or
                its parameters are over the worker's 64 KiB.
            ToolTimeout: the parse took longer than ``timeout_seconds`` and was stopped.
        """
        cpu_seconds = math.ceil(self.timeout_seconds) + 10  # a backstop if the server itself goes away
        command = [sys.executable, "-I", "-B", str(_WORKER), op, str(self.memory_bytes), str(cpu_seconds)]
        header = json.dumps({**request, "size": len(data)}).encode() + b"\n"
        async with self._slots:
            with anyio.move_on_after(self.timeout_seconds) as deadline:
                output, returncode = await _exchange(command, header, data)
        if deadline.cancelled_caught:
            raise ToolTimeout(
                f"{failure}: parsing took longer than {self.timeout_seconds:g} s and was stopped; the file "
                f"is too complex or hostile{hint}"
            )
        if output is None:
            raise TooLarge(
                f"{failure}: the parser's answer is over {_MAX_RESPONSE} bytes and was refused{hint}"
            )
        return _decode(output, returncode, failure=failure, hint=hint)


async def _exchange(command: list[str], header: bytes, data: bytes) -> tuple[bytes | None, int]:
    """Start the worker, send the request (``header``, then ``data`` without joining them: the data
    is a whole file, up to the read cap), read the whole response, wait for the exit.

    Returns:
        ``(response, exit status)``; the response is None when it passed ``_MAX_RESPONSE`` bytes
        (the worker is then killed).
    """
    process = await anyio.open_process(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd="/",
        env=_ENV,
        # In the server's session, like rg: the exec tools collect exited children of the server
        # that have a session of their own (escaped commands), and must never take a worker's
        # exit status from its owner here. A worker never forks; it is killed by its pid.
        start_new_session=False,
    )
    # Leaving this block closes the pipes and waits; if the call was cancelled or timed out,
    # anyio kills the worker first. Either way no worker outlives its call.
    async with process:
        assert process.stdin is not None and process.stdout is not None
        try:
            await process.stdin.send(header)
            await process.stdin.send(data)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass  # the worker stopped reading early; its response or exit status says why
        await process.stdin.aclose()
        chunks: list[bytes] = []
        size = 0
        async for chunk in process.stdout:
            size += len(chunk)
            if size > _MAX_RESPONSE:
                process.kill()
                return None, await process.wait()
            chunks.append(chunk)
        returncode = await process.wait()
    return b"".join(chunks), returncode


def _decode(output: bytes, returncode: int, *, failure: str, hint: str) -> Parsed:
    line, newline, payload = output.partition(b"\n")
    try:
        header = json.loads(line) if newline else None
    except ValueError:
        header = None
    if not isinstance(header, dict) or header.get("payloadSize") != len(payload):
        raise UnsupportedContent(f"{failure}: {_death(returncode)}; the file may be corrupt or hostile{hint}")
    if header.get("ok"):
        return Parsed(result=header["result"], payload=payload)
    error = _ERRORS.get(header.get("kind", ""), UnsupportedContent)
    raise error(f"{failure}: {header.get('message', 'the parser failed')}{hint}")


def _death(returncode: int) -> str:
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        if name == "SIGXCPU":
            return "the parser ran out of CPU time"
        return f"the parser process died ({name})"
    if returncode > 0:
        return f"the parser process failed (exit status {returncode})"
    return "the parser gave no usable answer"
