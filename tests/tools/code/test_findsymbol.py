"""findsymbol: definitions (exact, prefix, fuzzy) and uses with their callers."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import config_for, connect, text_of

pytestmark = pytest.mark.anyio

LOADER = '''\
from store import Store


class Loader:
    """Loads configuration files."""

    def load(self, path):
        text = read_text(path)
        return parse_config(text)


def read_text(path):
    return open(path).read()


def parse_config(text):
    return dict(line.split("=") for line in text.splitlines())
'''

APP = """\
from loader import Loader, parse_config


def main():
    settings = Loader().load("app.cfg")
    extra = parse_config("a=b")
    return settings, extra
"""


def _project(root: Path) -> None:
    (root / "loader.py").write_text(LOADER, encoding="utf-8")
    (root / "app.py").write_text(APP, encoding="utf-8")


async def test_finds_the_definition_and_every_caller(tmp_path: Path) -> None:
    _project(tmp_path)
    async with connect(config_for(tmp_path)) as client:
        result = await client.call_tool("findsymbol", {"name": "parse_config"})
    assert not result.is_error, text_of(result)
    data = result.structured_content
    assert data is not None
    [definition] = data["definitions"]
    assert (definition["path"], definition["kind"], definition["startLine"]) == ("loader.py", "function", 16)
    callers = {(use["path"], use["line"], use.get("caller")) for use in data["references"]}
    assert callers == {("loader.py", 9, "Loader.load"), ("app.py", 6, "main")}
    assert 'app.py:6 in main: extra = parse_config("a=b")' in text_of(result)


async def test_a_qualified_name_finds_the_method(tmp_path: Path) -> None:
    _project(tmp_path)
    async with connect(config_for(tmp_path)) as client:
        result = await client.call_tool("findsymbol", {"name": "Loader.load", "includeReferences": False})
    assert result.structured_content is not None
    [definition] = result.structured_content["definitions"]
    assert (definition["qualifiedName"], definition["kind"]) == ("Loader.load", "method")
    assert result.structured_content["references"] == []


async def test_prefix_and_fuzzy_matching(tmp_path: Path) -> None:
    _project(tmp_path)
    async with connect(config_for(tmp_path)) as client:
        prefix = await client.call_tool("findsymbol", {"name": "read", "match": "prefix"})
        fuzzy = await client.call_tool("findsymbol", {"name": "parse_confg", "match": "fuzzy"})
        missing = await client.call_tool("findsymbol", {"name": "parse_confg"})
    assert prefix.structured_content is not None and fuzzy.structured_content is not None
    assert [d["qualifiedName"] for d in prefix.structured_content["definitions"]] == ["read_text"]
    assert "parse_config" in [d["qualifiedName"] for d in fuzzy.structured_content["definitions"]]
    assert missing.structured_content is not None
    assert missing.structured_content["definitions"] == []
    assert "parse_config" in missing.structured_content["suggestions"]


async def test_path_limits_the_search_to_a_directory(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / ".git").mkdir()
    (tmp_path / "a" / "one.py").write_text("def shared():\n    pass\n", encoding="utf-8")
    (tmp_path / "b" / "two.py").write_text("def shared():\n    pass\n", encoding="utf-8")
    async with connect(config_for(tmp_path)) as client:
        result = await client.call_tool("findsymbol", {"name": "shared", "path": "b"})
    assert result.structured_content is not None
    assert [d["path"] for d in result.structured_content["definitions"]] == ["b/two.py"]


async def test_a_folder_a_tool_moves_is_seen_by_the_next_answer(tmp_path: Path) -> None:
    """movepath of a folder tells the index a directory: the files under it, old and new places,
    are looked at again before the next answer (a directory notice changed nothing before)."""
    (tmp_path / "pkg").mkdir()
    _project(tmp_path / "pkg")
    async with connect(config_for(tmp_path)) as client:
        before = await client.call_tool("findsymbol", {"name": "parse_config"})
        assert [d["path"] for d in before.structured_content["definitions"]] == ["pkg/loader.py"]
        moved = await client.call_tool("movepath", {"source": "pkg", "destination": "lib"})
        assert not moved.is_error, text_of(moved)
        after = await client.call_tool("findsymbol", {"name": "parse_config"})
    assert [d["path"] for d in after.structured_content["definitions"]] == ["lib/loader.py"], text_of(after)
