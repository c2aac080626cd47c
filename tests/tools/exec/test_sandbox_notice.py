"""Where people look: a server whose commands run under Landlock (or uncontained, or not at all)
says so in its initialize instructions and in the first command result of each connection
(``sandboxNote``), with how to get bubblewrap. The start-up line on stderr says it too, but a
client such as Claude Code never shows stderr."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.helpers import error_code, text_of
from tests.tools.exec.conftest import NEEDS_BWRAP, exec_client, run_commands

pytestmark = [pytest.mark.anyio, NEEDS_BWRAP]

HOW = "mcp-localtools[bwrap]"


def notes(data: dict[str, Any]) -> list[str | None]:
    return [entry.get("sandboxNote") for entry in data["results"]]


async def test_under_landlock_the_instructions_and_the_first_command_say_so_and_how_to_get_bwrap(
    tmp_path: Path,
) -> None:
    async with exec_client(tmp_path, exec={"sandbox": {"mode": "landlock"}}) as client:
        instructions = client.instructions or ""
        first = await run_commands(client, "true", "true")
        later = await run_commands(client, "true")
        (tmp_path / "s.sh").write_text("true\n", encoding="utf-8")
        ran = await client.call_tool("runscript", {"path": "s.sh"})
    assert "Landlock" in instructions and HOW in instructions and "apt install bubblewrap" in instructions
    assert first["sandbox"] == "landlock"
    (note, second) = notes(first)
    assert note is not None and "Landlock" in note and HOW in note
    assert second is None and notes(later) == [None], "said once per connection"
    assert "sandboxNote" not in (ran.structured_content or {}), text_of(ran)


async def test_the_first_runscript_of_a_connection_says_it_too(tmp_path: Path) -> None:
    (tmp_path / "s.sh").write_text("echo hi\n", encoding="utf-8")
    async with exec_client(tmp_path, exec={"sandbox": {"mode": "landlock"}}) as client:
        ran = await client.call_tool("runscript", {"path": "s.sh"})
    note = (ran.structured_content or {}).get("sandboxNote") or ""
    assert HOW in note and f"[{note}]" in text_of(ran)


async def test_every_connection_is_told_at_its_first_command(tmp_path: Path) -> None:
    config = {"sandbox": {"mode": "landlock"}}
    async with exec_client(tmp_path, exec=config) as client:
        first = await run_commands(client, "true")
    async with exec_client(tmp_path, exec=config) as client:
        again = await run_commands(client, "true")
    assert HOW in (notes(first)[0] or "") and HOW in (notes(again)[0] or "")


async def test_the_note_joins_a_refusal_note_of_the_same_command(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    outside = tmp_path_factory.mktemp("outside")
    async with exec_client(tmp_path, exec={"sandbox": {"mode": "landlock"}}) as client:
        data = await run_commands(client, f"echo x > {outside}/f")
    (note,) = notes(data)
    assert note is not None and "may have refused this" in note and HOW in note


async def test_under_bwrap_nothing_is_said(tmp_path: Path) -> None:
    async with exec_client(tmp_path) as client:
        instructions = client.instructions or ""
        data = await run_commands(client, "true")
    assert data["sandbox"] == "bwrap"
    assert "Landlock" not in instructions and "bubblewrap" not in instructions
    assert notes(data) == [None]


async def test_with_the_sandbox_off_the_instructions_and_the_first_command_say_commands_are_uncontained(
    tmp_path: Path,
) -> None:
    async with exec_client(tmp_path, exec={"sandbox": {"mode": "off"}}) as client:
        instructions = client.instructions or ""
        data = await run_commands(client, "true", "true")
    assert "uncontained" in instructions and 'mode = "auto"' in instructions
    (note, second) = notes(data)
    assert note is not None and "uncontained" in note and second is None


async def test_with_no_sandbox_the_instructions_say_commands_are_refused_and_why(tmp_path: Path) -> None:
    sandbox = {"mode": "bwrap", "bwrap_path": str(tmp_path / "no-such-bwrap")}
    async with exec_client(tmp_path, exec={"sandbox": sandbox}) as client:
        instructions = client.instructions or ""
        result = await client.call_tool("shellcommand", {"commands": ["true"]})
    assert error_code(result) == "sandbox_unavailable"
    assert "refuse every command" in instructions and "bubblewrap" in instructions


async def test_a_server_without_command_tools_says_nothing_of_a_sandbox(tmp_path: Path) -> None:
    async with exec_client(
        tmp_path, exec={"sandbox": {"mode": "landlock"}}, tools={"disabled": ["exec"]}
    ) as client:
        instructions = client.instructions or ""
    assert "Landlock" not in instructions
