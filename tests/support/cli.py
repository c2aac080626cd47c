"""The command line run in this process: ``main(args)`` as the installed entry point runs it,
without the 1-2 s of a new interpreter importing the SDK. The entry point itself is tested as a
real process elsewhere (``tests/test_cli.py``'s environment tests, ``tests/test_transports.py``)."""

from __future__ import annotations

import io
import logging
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from unittest import mock


def run_main(
    *args: str, cwd: Path, stdin: str = "", env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``mcp_localtools.cli.main(args)`` in ``cwd`` with ``stdin`` as standard input and ``env``
    added to the environment; returns what ``subprocess.run(..., capture_output=True, text=True)``
    of the installed command would: the exit status and the text written to stdout and stderr.
    The working directory, environment, standard streams and the root logger's handlers are
    restored afterwards."""
    from mcp_localtools.cli import main

    stdout, stderr = _stream(), _stream()
    streams = mock.patch.multiple(sys, stdin=io.StringIO(stdin), stdout=stdout, stderr=stderr)
    with _kept_logging(), _in(cwd), mock.patch.dict(os.environ, dict(env or {})), streams:
        try:
            status = main(list(args))
        except SystemExit as exc:  # argparse: --help, usage errors
            status = exc.code if isinstance(exc.code, int) else 1
    return subprocess.CompletedProcess(["mcp-localtools", *args], status, _text(stdout), _text(stderr))


def _stream() -> io.TextIOWrapper:
    return io.TextIOWrapper(io.BytesIO(), encoding="utf-8", newline="")


def _text(stream: io.TextIOWrapper) -> str:
    stream.flush()
    buffer = stream.buffer
    assert isinstance(buffer, io.BytesIO)
    return buffer.getvalue().decode("utf-8", errors="replace")


@contextmanager
def _in(directory: Path) -> Iterator[None]:
    before = Path.cwd()
    os.chdir(directory)
    try:
        yield
    finally:
        os.chdir(before)


@contextmanager
def _kept_logging() -> Iterator[None]:
    """The CLI sets the root logger's handlers and level (``configure_logging``): put them back."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    try:
        yield
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)
