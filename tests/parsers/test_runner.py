"""ParserRunner: hostile parses are stopped, their processes killed, their memory bounded."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import anyio
import pytest
from PIL import Image

from mcp_localtools.errors import InvalidArguments, TooLarge, ToolTimeout, UnsupportedContent
from mcp_localtools.parsers import ParserRunner
from mcp_localtools.parsers import runner as runner_module
from mcp_localtools.parsers.pdf import extract_pdf_text
from mcp_localtools.registry import Registry
from mcp_localtools.tools import spec_of
from mcp_localtools.tools.image import readimage
from mcp_localtools.workspace import Workspace
from tests.helpers import config_for, make_large_png, make_pdf, make_png, parser_workers

pytestmark = pytest.mark.anyio

FIT = {"encode": True, "partial": False, "maxDimension": 1568, "maxBytes": 1 << 20, "format": "auto"}


@pytest.fixture(scope="module")
def huge_png() -> bytes:
    """10000 x 10000: about 3 s and 400 MB to decode on the 2-core development machine."""
    return make_large_png(10000, 10000)


async def test_a_parse_over_its_time_is_stopped_with_a_clear_error_and_its_worker_killed(
    huge_png: bytes,
) -> None:
    runner = ParserRunner(timeout_seconds=0.2)
    with anyio.fail_after(60), pytest.raises(ToolTimeout) as caught:
        await runner.run("image", huge_png, FIT, failure="cannot read image huge.png")
    assert (
        "cannot read image huge.png: parsing took longer than 0.2 s and was stopped" in caught.value.message
    )
    assert parser_workers() == []


async def test_a_call_that_times_out_leaves_no_worker_behind(tmp_path: Path, huge_png: bytes) -> None:
    (tmp_path / "huge.png").write_bytes(huge_png)
    registry = Registry()
    registry.register(spec_of(readimage, Workspace.from_config(config_for(tmp_path))))
    with anyio.fail_after(60):
        result = await registry.call(
            "readimage", {"path": "huge.png", "includeBase64Data": True}, timeout=0.5
        )
    assert result.error is not None and result.error.code == "timeout"
    assert parser_workers() == []


@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_AS is enforced on Linux only")
async def test_a_parse_needing_more_memory_than_the_limit_is_a_clear_error(huge_png: bytes) -> None:
    runner = ParserRunner(memory_bytes=256 * 1024 * 1024)  # the decode needs 400 MB
    with anyio.fail_after(120), pytest.raises(TooLarge) as caught:
        await runner.run("image", huge_png, FIT, failure="cannot read image huge.png")
    assert "needs more than the parser's memory limit of 256 MiB" in caught.value.message


async def test_a_worker_that_dies_mid_parse_is_a_clear_error(huge_png: bytes) -> None:
    runner = ParserRunner()
    outcome: list[BaseException] = []

    async def parse() -> None:
        try:
            await runner.run("image", huge_png, FIT, failure="cannot read image huge.png")
        except UnsupportedContent as exc:
            outcome.append(exc)

    with anyio.fail_after(120):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(parse)
            while not (workers := parser_workers()):
                await anyio.sleep(0.01)
            # In our session, as rg: the exec tools' orphan collection never takes a worker.
            assert os.getsid(workers[0]) == os.getsid(0)
            os.kill(workers[0], signal.SIGKILL)
    [error] = outcome
    assert "the parser process died (SIGKILL)" in str(error)


async def test_a_request_over_the_worker_header_limit_is_a_clear_error_not_a_crash() -> None:
    runner = ParserRunner()
    request = {"ranges": [[1, 1]] * 20_000, "maxChars": 1000}  # about 140 KB of JSON
    with anyio.fail_after(60), pytest.raises(InvalidArguments) as caught:
        await runner.run("pdf", make_pdf(["x"]), request, failure="cannot read PDF doc.pdf")
    assert caught.value.message == (
        "cannot read PDF doc.pdf: the request's parameters are over the parser's 65536 bytes"
    )


async def test_a_malformed_request_is_a_clear_error_not_a_crash() -> None:
    worker = Path(__file__).resolve().parents[2] / "src" / "mcp_localtools" / "parsers" / "worker.py"
    for request in (b"not json\n", b'{"size": -1}\n', b'{"size": 10}\nshort'):
        output = subprocess.run(
            [sys.executable, "-I", "-B", str(worker), "svg", str(2**30), "60"],
            input=request,
            capture_output=True,
            check=True,
            timeout=60,
        ).stdout
        answer = json.loads(output)
        assert answer["ok"] is False and answer["kind"] == "unsupported", answer


async def test_an_answer_over_the_response_limit_is_too_large_with_the_reason(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(runner_module, "_MAX_RESPONSE", 64)  # any answer is longer
    with anyio.fail_after(60), pytest.raises(TooLarge) as caught:
        await ParserRunner().run("image", make_png(), FIT, failure="cannot read image a.png")
    assert (
        caught.value.message
        == "cannot read image a.png: the parser's answer is over 64 bytes and was refused"
    )
    assert parser_workers() == []


async def test_no_more_than_max_workers_parse_at_once() -> None:
    runner = ParserRunner(max_workers=1)
    most = 0
    done = anyio.Event()

    async def watch() -> None:
        nonlocal most
        while not done.is_set():
            most = max(most, len(parser_workers()))
            await anyio.sleep(0.005)

    async def parse(n: int) -> None:
        await runner.run("image", make_png(10 + n, 10), FIT, failure="cannot read image")

    with anyio.fail_after(120):
        async with anyio.create_task_group() as watcher:
            watcher.start_soon(watch)
            async with anyio.create_task_group() as parses:
                for n in range(4):
                    parses.start_soon(parse, n)
            done.set()
    assert most == 1


async def test_the_response_is_the_only_thing_on_the_worker_stdout(tmp_path: Path) -> None:
    # A library that prints while decoding must not corrupt the answer: fd 1 is /dev/null in the worker.
    buffer = io.BytesIO()
    Image.new("RGB", (3, 2)).save(buffer, "PNG")
    worker = Path(__file__).resolve().parents[2] / "src" / "mcp_localtools" / "parsers" / "worker.py"
    request = json.dumps({**FIT, "size": len(buffer.getvalue())}).encode() + b"\n" + buffer.getvalue()
    script = textwrap.dedent(
        f"""
        import os, runpy, sys
        import PIL.Image
        original_open = PIL.Image.open
        def noisy_open(*args, **kwargs):
            print("noise from a library")
            os.write(1, b"raw noise\\n")
            return original_open(*args, **kwargs)
        PIL.Image.open = noisy_open
        sys.argv = [{str(worker)!r}, "image", str(2**30), "60"]
        runpy.run_path({str(worker)!r}, run_name="__main__")
        """
    )
    output = subprocess.run(
        [sys.executable, "-I", "-B", "-c", script], input=request, capture_output=True, check=True, timeout=60
    ).stdout
    header, _, payload = output.partition(b"\n")
    answer = json.loads(header)
    assert answer["ok"] is True and answer["payloadSize"] == len(payload)
    assert b"noise" not in output


def test_the_server_never_imports_pillow_or_pypdf(tmp_path: Path) -> None:
    Image.new("RGB", (4, 4)).save(tmp_path / "p.png")
    (tmp_path / "doc.pdf").write_bytes(make_pdf(["Hello"]))
    script = textwrap.dedent(
        f"""
        import sys, anyio
        from mcp_localtools import build_registry, parse_config
        registry = build_registry(parse_config({{"paths": {{"allowed_roots": [{str(tmp_path)!r}]}}}}))
        async def main():
            image = await registry.call("readimage", {{"path": "p.png", "includeBase64Data": True}})
            pdf = await registry.call("readfile", {{"path": "doc.pdf", "pages": "1"}})
            assert not image.is_error and not pdf.is_error, (image, pdf)
        anyio.run(main)
        print(sorted(name for name in sys.modules if name.split(".")[0] in ("PIL", "pypdf")))
        """
    )
    output = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120, cwd=tmp_path
    )
    assert output.stdout.strip() == "[]"


def _flate_bomb_pdf(inflated_mib: int) -> bytes:
    """A one-page PDF whose content stream is ``inflated_mib`` MiB of spaces, FlateDecoded to a
    few hundred KB."""
    import zlib

    from pypdf import PdfWriter
    from pypdf.generic import NameObject, StreamObject

    compressor = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS, 9, zlib.Z_RLE)
    chunk = b" " * (1 << 20)
    packed = b"".join([*(compressor.compress(chunk) for _ in range(inflated_mib)), compressor.flush()])
    writer = PdfWriter()
    page = writer.add_blank_page(612, 792)
    stream = StreamObject()
    stream._data = packed
    stream[NameObject("/Filter")] = NameObject("/FlateDecode")
    page[NameObject("/Contents")] = writer._add_object(stream)
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


async def test_a_pdf_stream_that_inflates_past_pypdfs_limit_is_not_read_and_says_so() -> None:
    """pypdf stops a stream at 75 MB decoded (``ZLIB_MAX_OUTPUT_LENGTH``) inside the worker, whose
    address space is capped besides: the server never holds the inflated stream, and the page
    says why it has no text."""
    data = _flate_bomb_pdf(200)
    assert len(data) < 1024 * 1024
    with anyio.fail_after(120):
        text = await extract_pdf_text(ParserRunner(), data, pages=None, name="bomb.pdf")
    assert "exceeds the PDF parser's safety limit" in text.data.decode()
    assert parser_workers() == []


async def test_a_png_text_chunk_that_inflates_past_pillows_limit_is_refused_undecoded() -> None:
    """A zTXt chunk of 200 MiB: Pillow decompresses a text chunk to 1 MiB at most
    (``PngImagePlugin.MAX_TEXT_CHUNK``) and refuses the rest."""
    import struct
    import zlib

    png = make_png(4, 3)
    text = b"Comment\x00\x00" + zlib.compress(b"a" * (200 << 20), 9)
    chunk = struct.pack(">I", len(text)) + b"zTXt" + text + struct.pack(">I", zlib.crc32(b"zTXt" + text))
    bomb = png[:33] + chunk + png[33:]  # after the signature and IHDR
    with anyio.fail_after(120), pytest.raises(UnsupportedContent) as caught:
        await ParserRunner().run("image", bomb, FIT, failure="bomb.png")
    assert "MAX_TEXT_CHUNK" in caught.value.message
    assert parser_workers() == []
