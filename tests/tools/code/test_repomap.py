"""repomap: the ranked map of a repository, within its budget, personalised by focus."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import config_for, connect, text_of

pytestmark = pytest.mark.anyio


def _project(root: Path) -> None:
    (root / "core.py").write_text(
        "class Database:\n    def connect(self):\n        pass\n\n\n"
        "def open_database():\n    return Database()\n",
        encoding="utf-8",
    )
    for n in range(6):
        (root / f"view{n}.py").write_text(
            f"from core import open_database\n\n\ndef render_page_{n}():\n    return open_database()\n",
            encoding="utf-8",
        )
    (root / "lonely.py").write_text("def lonely_helper_function():\n    return 1\n", encoding="utf-8")


def _extras(root: Path) -> None:
    """40 files of 10 unused functions each: enough to push anything unranked out of a small map."""
    for n in range(40):
        (root / f"extra{n}.py").write_text(
            "".join(f"def extra_function_{n}_{k}(value):\n    return value\n\n" for k in range(10)),
            encoding="utf-8",
        )


async def test_the_most_used_definitions_come_first(tmp_path: Path) -> None:
    _project(tmp_path)
    async with connect(config_for(tmp_path)) as client:
        result = await client.call_tool("repomap", {})
    assert not result.is_error, text_of(result)
    data = result.structured_content
    assert data is not None
    assert data["files"][0]["path"] == "core.py"
    assert "open_database" in [s["qualifiedName"] for s in data["files"][0]["symbols"]]
    assert text_of(result).startswith("core.py:\n")


async def test_the_map_keeps_to_max_chars(tmp_path: Path) -> None:
    _project(tmp_path)
    _extras(tmp_path)
    async with connect(config_for(tmp_path)) as client:
        result = await client.call_tool("repomap", {"maxChars": 600})
    assert result.structured_content is not None
    assert result.structured_content["truncated"] is True
    body = text_of(result).rsplit("\n[map cut", 1)[0]
    assert len(body) <= 700


async def test_focus_on_a_file_brings_its_neighbours_forward(tmp_path: Path) -> None:
    _project(tmp_path)
    (tmp_path / "report.py").write_text(
        "from lonely import lonely_helper_function\n\n\n"
        "def make_report():\n    return lonely_helper_function()\n",
        encoding="utf-8",
    )
    async with connect(config_for(tmp_path)) as client:
        plain = await client.call_tool("repomap", {})
        focused = await client.call_tool("repomap", {"focus": ["report.py"]})
    assert plain.structured_content is not None and focused.structured_content is not None
    plain_files = [f["path"] for f in plain.structured_content["files"]]
    focused_files = [f["path"] for f in focused.structured_content["files"]]
    assert plain_files[0] == "core.py"
    assert focused_files[0] == "lonely.py"


async def test_focus_on_a_name_puts_its_definition_in_a_small_map(tmp_path: Path) -> None:
    _project(tmp_path)
    _extras(tmp_path)
    async with connect(config_for(tmp_path)) as client:
        plain = await client.call_tool("repomap", {"maxChars": 400})
        focused = await client.call_tool("repomap", {"maxChars": 400, "focus": ["lonely_helper_function"]})
    assert plain.structured_content is not None and focused.structured_content is not None
    assert plain.structured_content["files"][0]["path"] == "core.py"
    first = focused.structured_content["files"][0]
    assert first["path"] == "lonely.py" and first["symbols"][0]["qualifiedName"] == "lonely_helper_function"
