"""semanticsearch: code found by meaning, with callers and callees, offline."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import config_for, connect, text_of

pytestmark = pytest.mark.anyio

FILES = {
    "mail.py": '''\
import smtplib


def send_welcome_email(address):
    """Send the greeting message to a new member."""
    server = smtplib.SMTP("localhost")
    server.sendmail("noreply@example.org", [address], "Welcome!")
''',
    "geometry.py": """\
import math


def circle_area(radius):
    return math.pi * radius ** 2


def hypotenuse(a, b):
    return math.sqrt(a * a + b * b)
""",
    "accounts.py": """\
from mail import send_welcome_email


def register_member(address):
    members.append(address)
    send_welcome_email(address)


members = []
""",
    "README.md": "# Shop\n\nThe shop sells hats and scarves to customers around the world.\n",
}


def _project(root: Path) -> None:
    for name, text in FILES.items():
        (root / name).write_text(text, encoding="utf-8")


async def test_a_paraphrased_query_finds_its_function(tmp_path: Path) -> None:
    _project(tmp_path)
    async with connect(config_for(tmp_path)) as client:
        result = await client.call_tool(
            "semanticsearch", {"query": "notify a newly signed up user by mail", "limit": 3}
        )
    assert not result.is_error, text_of(result)
    data = result.structured_content
    assert data is not None
    first = data["results"][0]
    assert (first["path"], first["symbol"], first["kind"]) == ("mail.py", "send_welcome_email", "function")
    assert (first["startLine"], first["endLine"]) == (4, 7)
    assert first["callers"] == ["accounts.py:6 register_member"]
    assert "sendmail" in first["callees"]
    assert data.get("lexicalOnly") is None


async def test_include_content_returns_the_lines(tmp_path: Path) -> None:
    _project(tmp_path)
    async with connect(config_for(tmp_path)) as client:
        result = await client.call_tool(
            "semanticsearch", {"query": "area of a circle", "limit": 1, "includeContent": True}
        )
    assert result.structured_content is not None
    [hit] = result.structured_content["results"]
    assert hit["symbol"] == "circle_area"
    assert hit["content"] == "def circle_area(radius):\n    return math.pi * radius ** 2"


async def test_text_files_are_searched_as_windows(tmp_path: Path) -> None:
    _project(tmp_path)
    async with connect(config_for(tmp_path)) as client:
        result = await client.call_tool("semanticsearch", {"query": "what does the shop sell", "limit": 2})
    assert result.structured_content is not None
    assert ("README.md", "text") in [(h["path"], h["kind"]) for h in result.structured_content["results"]]


async def test_a_much_called_function_shows_five_callers_and_not_its_own_recursion(tmp_path: Path) -> None:
    (tmp_path / "walk.py").write_text(
        "def walk_tree(node):\n    for child in node:\n        walk_tree(child)\n", encoding="utf-8"
    )
    for number in range(30):
        source = f"from walk import walk_tree\n\n\ndef visit_{number}(root):\n    walk_tree(root)\n"
        (tmp_path / f"user{number:02}.py").write_text(source, encoding="utf-8")
    async with connect(config_for(tmp_path)) as client:
        result = await client.call_tool("semanticsearch", {"query": "walk_tree", "limit": 50})
    assert not result.is_error, text_of(result)
    assert result.structured_content is not None
    hits = {hit["symbol"]: hit for hit in result.structured_content["results"]}
    walk = hits["walk_tree"]
    assert walk["callers"] == [f"user{number:02}.py:5 visit_{number}" for number in range(5)]
    assert walk["callees"] == ["walk_tree"]  # what it calls, itself included
    assert hits["visit_7"]["callees"] == ["walk_tree"]
    assert hits["visit_7"]["callers"] == []


async def test_max_results_counts_results_as_in_the_other_search_tools_and_limit_stays_an_alias(
    tmp_path: Path,
) -> None:
    """``maxResults`` in searchfiles, globfiles and findsymbol, ``limit`` here (where readfile's
    ``limit`` counts lines): semanticsearch takes ``maxResults``; ``limit`` still works."""
    _project(tmp_path)
    async with connect(config_for(tmp_path)) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        properties = listed["semanticsearch"].input_schema["properties"]
        assert "maxResults" in properties and "limit" not in properties
        for arguments in ({"maxResults": 1}, {"limit": 1}, {"limit": None, "maxResults": 1}):
            result = await client.call_tool("semanticsearch", {"query": "area of a circle", **arguments})
            assert not result.is_error, text_of(result)
            assert result.structured_content is not None and result.structured_content["count"] == 1
        too_many = await client.call_tool("semanticsearch", {"query": "x", "maxResults": 51})
        assert too_many.is_error and "maxResults" in text_of(too_many), text_of(too_many)
