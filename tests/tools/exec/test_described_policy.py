"""A policy the model can read (issue 30, item 3): shellcommand's and runscript's descriptions say
what the active policy allows (Hector HC-10: the allowlist, that the user is asked first), where
commands may write and what network they have; ``[approval] prompt`` opens every question
(Hector's ApprovalPrompt); a host widens or narrows the command policy from Python
(jeevesagent's ``allow_pattern``). Commands touch only ``tmp_path``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from mcp_localtools.config import Config
from mcp_localtools.server import build_server
from mcp_localtools.tools import build_registry
from tests.helpers import config_for, connect, text_of
from tests.test_approval import Person

pytestmark = pytest.mark.anyio


async def _descriptions(config: Config) -> dict[str, str]:
    async with connect(config) as client:
        return {tool.name: tool.description or "" for tool in (await client.list_tools()).tools}


async def test_under_deny_by_default_the_descriptions_list_the_commands_that_run(tmp_path: Path) -> None:
    allowed = {"deny_by_default": True, "allowed_commands": ["git", "make", "pytest -q"]}
    described = await _descriptions(config_for(tmp_path, exec=allowed))
    for tool in ("shellcommand", "runscript"):
        assert "Only these commands run: git, make, pytest -q (and shell builtins)" in described[tool]
    assert "Blocked: rm" not in described["shellcommand"]
    default = await _descriptions(config_for(tmp_path))
    assert "Only these commands run" not in default["shellcommand"]
    assert "Blocked: rm (use deletefile)" in default["shellcommand"]


async def test_when_approval_applies_the_descriptions_say_the_user_is_asked_first(tmp_path: Path) -> None:
    asked = await _descriptions(
        config_for(tmp_path, approval={"require": ["exec"], "trusted_commands": ["git"]})
    )
    for tool in ("shellcommand", "runscript", "startprocess"):
        assert "Asks the user first" in asked[tool], tool
    assert "unless every program it runs is git" in asked["shellcommand"]
    only_shell = await _descriptions(config_for(tmp_path, approval={"require": ["shellcommand"]}))
    assert "Asks the user first" in only_shell["shellcommand"]
    assert "Asks the user first" not in only_shell["runscript"]
    assert "Asks the user first" not in (await _descriptions(config_for(tmp_path)))["shellcommand"]


async def test_the_descriptions_name_the_extra_writable_places_and_the_network(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    sandbox = {"write_paths": [str(tmp_path / "out")], "network": True}
    described = await _descriptions(config_for(tmp_path, exec={"sandbox": sandbox}))
    shell = described["shellcommand"]
    assert f"writes only to the roots, {tmp_path / 'out'} and a per-session $TMPDIR" in shell, shell
    assert "network allowed" in shell
    off = await _descriptions(config_for(tmp_path, exec={"sandbox": "off"}))
    assert "not sandboxed" in off["shellcommand"]


async def test_the_approval_prompt_opens_every_question(tmp_path: Path) -> None:
    person = Person("approve")
    prompt = "Company rule: commands change only this project."
    config = config_for(tmp_path, approval={"require": ["exec"], "prompt": prompt}, exec={"sandbox": "off"})
    async with Client(build_server(config), mode="legacy", elicitation_callback=person) as client:
        result = await client.call_tool("shellcommand", {"commands": ["echo hi"]})
    assert not result.is_error, text_of(result)
    assert person.messages[0].startswith(prompt + "\n"), person.messages[0]
    assert "$ echo hi" in person.messages[0]


def _host_rule(command: str) -> bool | None:
    """A host's rule: lets ``rm`` of files under ``junk/`` through, refuses ``cat``, else defers."""
    if command.startswith("rm junk/"):
        return True
    if command.startswith("cat "):
        return False
    return None


async def test_a_host_rule_widens_past_the_blocklist_and_narrows_the_rest_from_python(tmp_path: Path) -> None:
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk" / "x.txt").write_text("x\n", encoding="utf-8")
    (tmp_path / "keep.txt").write_text("keep\n", encoding="utf-8")
    config = config_for(tmp_path, exec={"sandbox": "off"})
    async with Client(build_server(config, command_rule=_host_rule), mode="legacy") as client:
        widened = await client.call_tool("shellcommand", {"commands": ["rm junk/x.txt"]})
        assert not widened.is_error and widened.structured_content["results"][0]["exitCode"] == 0
        still = await client.call_tool("shellcommand", {"commands": ["rm keep.txt"]})
        assert "blocked command: rm" in text_of(still)
        narrowed = await client.call_tool("shellcommand", {"commands": ["cat keep.txt"]})
        assert "refused by the host's command rule" in text_of(narrowed), text_of(narrowed)
        deferred = await client.call_tool("shellcommand", {"commands": ["echo ok"]})
        assert deferred.structured_content["results"][0]["stdout"] == "ok\n"
    assert not (tmp_path / "junk" / "x.txt").exists() and (tmp_path / "keep.txt").exists()
    registry = build_registry(config, command_rule=_host_rule)  # the Python API, no MCP
    refused: Any = await registry.call("shellcommand", {"commands": ["cat keep.txt"]})
    assert refused.is_error and refused.error is not None and refused.error.code == "command_refused"


def test_every_exec_result_states_the_sandboxes_it_can_name(tmp_path: Path) -> None:
    """``sandbox`` is an enum in the output schema of every command tool that reports it (a
    plain install answers ``landlock``; the description once said "bwrap, seatbelt, or off"), and
    every backend's name is one of it."""
    from mcp_localtools.sandbox.backend import OffBackend
    from mcp_localtools.sandbox.bwrap import BwrapBackend
    from mcp_localtools.sandbox.landlock import LandlockBackend
    from mcp_localtools.sandbox.seatbelt import SeatbeltBackend

    custom = {"hello": {"description": "Say hello.", "command": ["echo", "hello"]}}
    registry = build_registry(config_for(tmp_path, tools={"custom": custom}))
    names = {backend.name for backend in (BwrapBackend, LandlockBackend, SeatbeltBackend, OffBackend)}
    reporting = {
        name: registry.manifest(name)["outputSchema"]["properties"]["sandbox"]
        for name in registry.names()
        if "sandbox" in registry.manifest(name).get("outputSchema", {}).get("properties", {})
    }
    assert {"shellcommand", "runscript", "hello"} <= set(reporting)
    for name, field in reporting.items():
        assert set(field.get("enum", [])) == names, (name, field)
        described = registry.get(name).result_model.model_fields["sandbox"].description or ""
        assert all(backend in described for backend in names), (name, described)  # the model's docs
