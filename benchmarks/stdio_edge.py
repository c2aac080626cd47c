"""The stdio edge under bad input: what each case answers, how long it takes, what it costs.

Starts the installed server (``mcp-localtools --root TMP``) once per case, writes raw bytes to its
stdin and reports the answer (JSON-RPC error code and message, or "no answer"), the seconds until
it came and the server's peak resident memory (``VmHWM`` from ``/proc/<pid>/status``, Linux).
Run: ``python benchmarks/stdio_edge.py [--big-mib 200]``.
"""

from __future__ import annotations

import argparse
import json
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "b", "version": "0"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def _line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


def _call(request_id: int, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments},
    }


def _vmhwm_kib(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return -1


def run_case(
    root: Path, payload: list[bytes], *, wait_ids: set[Any], close: bool, timeout: float
) -> dict[str, Any]:
    """Send ``payload`` chunks after the handshake; collect replies until ``wait_ids`` answered."""
    command = shutil.which("mcp-localtools") or str(Path(sys.executable).parent / "mcp-localtools")
    proc = subprocess.Popen(
        [command, "--root", str(root)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdin is not None and proc.stdout is not None
    lines: queue.Queue[bytes] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in proc.stdout], daemon=True).start()  # type: ignore[union-attr]
    proc.stdin.write(_line(INIT) + _line(INITIALIZED))
    proc.stdin.flush()
    json.loads(lines.get(timeout=60))
    base = _vmhwm_kib(proc.pid)
    began = time.perf_counter()
    replies: list[dict[str, Any]] = []
    hwm = base

    def writer() -> None:
        try:
            for chunk in payload:
                proc.stdin.write(chunk)  # type: ignore[union-attr]
            proc.stdin.flush()  # type: ignore[union-attr]
            if close:
                proc.stdin.close()  # type: ignore[union-attr]
        except OSError:
            pass

    threading.Thread(target=writer, daemon=True).start()
    deadline = began + timeout
    while wait_ids - {reply.get("id") for reply in replies} and time.perf_counter() < deadline:
        hwm = max(hwm, _vmhwm_kib(proc.pid))
        try:
            replies.append(json.loads(lines.get(timeout=0.05)))
        except queue.Empty:
            continue
    seconds = time.perf_counter() - began
    hwm = max(hwm, _vmhwm_kib(proc.pid))
    proc.kill()
    proc.wait()
    answers = []
    for reply in replies:
        if "error" in reply:
            answers.append(
                f"id={reply.get('id')!r} {reply['error']['code']} {reply['error']['message'][:90]}"
            )
        else:
            result = reply.get("result", {})
            answers.append(f"id={reply.get('id')!r} result isError={result.get('isError')}")
    return {
        "answers": answers or ["no answer"],
        "seconds": round(seconds, 2),
        "peak_extra_mib": round((hwm - base) / 1024, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--big-mib", type=int, default=200)
    ns = parser.parse_args()
    big = ns.big_mib * 1024 * 1024
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        cases: dict[str, tuple[list[bytes], set[Any], bool]] = {
            "truncated JSON": ([b'{"jsonrpc": "2.0", "id": 7, "method": "tools/li\n'], {7}, False),
            "[]": ([b"[]\n"], {None}, False),
            "42": ([b"42\n"], {None}, False),
            '"x"': ([b'"x"\n'], {None}, False),
            "lone surrogate": (
                [
                    b'{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"writefile",'
                    b'"arguments":{"path":"s.txt","content":"\\ud800"}}}\n'
                ],
                {9},
                False,
            ),
            "pipelined 5 then EOF": (
                [b"".join(_line(_call(n, "statpath", {"path": "."})) for n in range(10, 15))],
                set(range(10, 15)),
                True,
            ),
            f"{ns.big_mib} MiB line": (
                [
                    b'{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"writefile",'
                    b'"arguments":{"path":"big.txt","content":"'
                ]
                + [b"a" * (1024 * 1024)] * (big // (1024 * 1024))
                + [b'"}}}\n', _line(_call(21, "statpath", {"path": "."}))],
                {20, 21},
                False,
            ),
            f"{ns.big_mib} MiB without newline, then EOF": (
                [b"a" * (1024 * 1024)] * (big // (1024 * 1024)),
                {None},
                True,
            ),
        }
        for name, (payload, ids, close) in cases.items():
            result = run_case(root, payload, wait_ids=ids, close=close, timeout=60)
            print(f"{name}: {result['seconds']} s, +{result['peak_extra_mib']} MiB")
            for answer in result["answers"]:
                print(f"    {answer}")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
