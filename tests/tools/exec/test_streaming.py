"""OutputStreamer: lines in order, and at most the streaming budget whatever the output looks like."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from mcp_localtools.errors import SandboxUnavailable
from mcp_localtools.spec import CallContext
from mcp_localtools.tools.exec._streaming import OutputStreamer, streaming
from tests.helpers import text_of
from tests.tools.exec.conftest import exec_client

pytestmark = pytest.mark.anyio

STOPPED = "[output streaming stopped here; the result has the captured output]"


class Recorder:
    """A progress callback that keeps every message."""

    def __init__(self) -> None:
        self.messages: list[str] = []

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        self.messages.append(message or "")


async def test_partial_lines_are_joined_and_sent_in_order() -> None:
    recorder = Recorder()
    streamer = OutputStreamer(CallContext(progress=recorder), 1024)
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(streamer.send_all)
        streamer.command("cmd")
        streamer.feed("stdout", b"ab")
        streamer.feed("stdout", b"c\nde")
        streamer.feed("stderr", b"oops\n")
        await streamer.finish()
    assert "\n".join(recorder.messages).splitlines() == ["$ cmd", "abc", "[stderr] oops", "de"]


async def test_streaming_starts_nothing_unless_the_caller_asked_for_progress() -> None:
    # Issue 38: a short command costs no extra task or task group when nobody watches its output.
    async with streaming(CallContext(), 1024) as streamer:
        assert streamer is None
    recorder = Recorder()
    async with streaming(CallContext(progress=recorder), 1024) as streamer:
        assert streamer is not None
        streamer.command("cmd")
        streamer.feed("stdout", b"out\n")
    assert "\n".join(recorder.messages).splitlines() == ["$ cmd", "out"]


async def test_a_refusal_inside_streaming_reaches_the_caller_as_itself() -> None:
    # Inside the streamer's task group a ToolError was wrapped in an ExceptionGroup, which the
    # registry answers as internal_error: a watched command's sandbox error lost its code.
    with pytest.raises(SandboxUnavailable):
        async with streaming(CallContext(progress=Recorder()), 1024):
            raise SandboxUnavailable("the sandbox stopped")


async def test_output_without_newlines_is_streamed_up_to_the_budget_as_it_arrives() -> None:
    # 20 MB without a newline: once the unfinished line reaches the budget it goes out (cut),
    # while the command still runs, instead of being buffered (and rescanned) to the end.
    recorder = Recorder()
    streamer = OutputStreamer(CallContext(progress=recorder), 4096)
    chunk = b"Q" * 65536
    with anyio.fail_after(20):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(streamer.send_all)
            for _ in range(20_000_000 // len(chunk)):
                streamer.feed("stdout", chunk)
                streamer.feed("stderr", chunk)
            with anyio.fail_after(5):  # not finished yet: the cut line was sent already
                while not any(STOPPED in message for message in recorder.messages):
                    await anyio.sleep(0.01)
            await streamer.finish()
    streamed = "\n".join(recorder.messages)
    assert streamed.count("Q") == 4096 and streamed.count(STOPPED) == 1
    assert streamed == "Q" * 4096 + "\n" + STOPPED


async def test_a_command_writing_no_newline_gets_its_progress_while_it_runs(tmp_path: Path) -> None:
    # The command waits (up to 10 s) for the file the progress callback writes when streaming
    # stops: it is only written if the cut output is sent while the command still runs.
    flag = tmp_path / "streamed"
    messages: list[str] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        messages.append(message or "")
        if message and STOPPED in message:
            flag.touch()

    script = (
        "head -c 1000000 /dev/zero | tr '\\0' Q; i=0; "
        "while [ ! -e streamed ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done; "
        "[ -e streamed ] && echo && echo STREAMED-WHILE-RUNNING"
    )
    async with exec_client(tmp_path, exec={"max_output_bytes": 65536}) as client:
        with anyio.fail_after(60):
            result = await client.call_tool(
                "shellcommand", {"commands": [script]}, progress_callback=on_progress
            )
    assert not result.is_error, text_of(result)
    (entry,) = result.structured_content["results"]
    # 1,000,000 bytes: under OUTPUT_STOP_FACTOR x maxOutputBytes, where a command is stopped.
    assert entry["stdoutBytes"] == 1_000_000 + 1 + len("STREAMED-WHILE-RUNNING\n")
    assert entry["stdout"].endswith("Q\nSTREAMED-WHILE-RUNNING\n")
    # What piles up while a notification is sent is joined into the next one: the "$ command" line
    # and the first output may come as one message, whichever turn the sending task gets.
    header = f"$ {script}\n"
    streamed = "\n".join(messages)
    assert streamed.startswith(header), streamed[:300]
    body = streamed[len(header) :]
    assert body.count("Q") == 65536 and body.count(STOPPED) == 1
