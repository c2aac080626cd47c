"""processoutput: pages with offsets, stdout and stderr apart, UTF-8 never cut in a character."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tools.exec.conftest import exec_client
from tests.tools.exec.test_startprocess import call

pytestmark = pytest.mark.anyio


async def test_streams_are_apart_and_offsets_resume_where_a_read_ended(tmp_path: Path) -> None:
    async with exec_client(tmp_path) as client:
        process = (await call(client, "startprocess", command="echo out; echo err >&2; echo more"))[
            "processID"
        ]
        await call(client, "waitprocess", processID=process, timeoutSeconds=10)
        first = await call(client, "processoutput", processID=process, stdoutOffset=0, stderrOffset=0)
        assert (first["stdout"], first["stderr"]) == ("out\nmore\n", "err\n")
        assert (first["stdoutOffset"], first["stderrOffset"]) == (9, 4)
        after = await call(client, "processoutput", processID=process)
        assert (after["stdout"], after["stderr"], after["more"]) == ("", "", False)
        tail = await call(client, "processoutput", processID=process, stdoutOffset=4)
        assert tail["stdout"] == "more\n"


async def test_pages_of_multibyte_output_put_together_are_the_output(tmp_path: Path) -> None:
    script = "import sys\nsys.stdout.write('é€😀' * 30000)\n"
    (tmp_path / "wide.py").write_text(script, encoding="utf-8")
    async with exec_client(tmp_path, limits={"max_result_chars": 10_000}) as client:
        started = await call(client, "startprocess", command="python3 wide.py")
        process = started["processID"]
        waited = await call(client, "waitprocess", processID=process, timeoutSeconds=20)
        text, page = started["stdout"] + waited["stdout"], {"more": True}
        while page["more"]:
            page = await call(client, "processoutput", processID=process)
            text += page["stdout"]
        assert text == "é€😀" * 30000
