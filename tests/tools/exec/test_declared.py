"""Declared tools (``[tools.custom.NAME]``, ``Registry.register_map``) through the SDK's client:
arguments as words of their own (shell and option injection stay literal or are refused), recipes
stopping at the failed step, the execution policy, the sandbox, approval, audit and ``[tools]``.

Every command is harmless (python3 printing its argv, ``true``/``false``) and runs in ``tmp_path``;
an injection attempt names a canary there that must not appear.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from mcp_localtools.config import Config
from mcp_localtools.errors import ConfigError
from mcp_localtools.registry import Registry
from mcp_localtools.server import build_server
from mcp_localtools.tools import build_registry
from tests.helpers import config_for, error_code, text_of
from tests.tools.exec.conftest import NEEDS_BWRAP, exec_client

pytestmark = pytest.mark.anyio

ARGV = "import json, sys; print(json.dumps(sys.argv[1:]))"
"""python3 -c ARGV prints the words it was given, as JSON."""

ECHO: dict[str, Any] = {
    "description": "Print the words it is given.",
    "input_schema": {
        "type": "object",
        "properties": {
            "words": {"type": "array", "items": {"type": "string"}, "description": "Words to print."},
            "label": {"type": "string", "description": "A label, passed as --label=LABEL."},
            "loud": {"type": "boolean", "description": "Pass --loud."},
            "count": {"type": "integer", "minimum": 0, "maximum": 9, "description": "Passed after -n."},
        },
        "required": ["words"],
    },
    "command": [
        "python3",
        "-c",
        ARGV,
        ["--loud", "{loud}"],
        ["-n", "{count}"],
        ["--label={label}"],
        "{words}",
    ],
}


def only(*names: str) -> dict[str, Any]:
    """ECHO's schema with only the properties ``names``."""
    schema = ECHO["input_schema"]
    return {**schema, "properties": {name: schema["properties"][name] for name in names}}


INJECTIONS = [
    "; touch {canary}",
    "$(touch {canary})",
    "`touch {canary}`",
    "a && touch {canary}",
    "| touch {canary}",
    "x\ntouch {canary}",
    "' ; touch {canary} ; '",
]


def declared(**tables: dict[str, Any]) -> dict[str, Any]:
    return {"custom": tables}


async def words_of(client: Client, tool: str, arguments: dict[str, Any]) -> list[str]:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, text_of(result)
    data: dict[str, Any] = result.structured_content or {}
    assert data["results"][0]["exitCode"] == 0, data
    printed: list[str] = json.loads(data["results"][0]["stdout"])
    return printed


async def test_a_declared_tool_is_listed_with_its_schema_and_runs_with_its_words(tmp_path: Path) -> None:
    async with exec_client(tmp_path, tools=declared(echo=ECHO)) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert "echo" in listed and "shellcommand" in listed
        schema = listed["echo"].input_schema
        assert schema["required"] == ["words"] and set(schema["properties"]) == {
            "words",
            "label",
            "loud",
            "count",
        }
        assert "Print the words it is given." in (listed["echo"].description or "")
        assert "[-n <count>]" in (listed["echo"].description or "")
        assert await words_of(client, "echo", {"words": ["a b", "c"]}) == ["a b", "c"]
        full = {"words": ["x"], "label": "two words", "loud": True, "count": 3}
        assert await words_of(client, "echo", full) == ["--loud", "-n", "3", "--label=two words", "x"]
        off = {"words": [], "loud": False, "label": None, "count": None}
        assert await words_of(client, "echo", off) == []


@pytest.mark.parametrize("attempt", INJECTIONS)
async def test_a_shell_word_in_an_argument_stays_one_literal_argument(tmp_path: Path, attempt: str) -> None:
    canary = tmp_path / "pwned"
    value = attempt.format(canary=canary)
    async with exec_client(tmp_path, tools=declared(echo=ECHO)) as client:
        assert await words_of(client, "echo", {"words": [value], "label": value}) == [
            f"--label={value}",
            value,
        ]
    assert not canary.exists()


@pytest.mark.parametrize("value", ["-rf", "--help", "-", "--"])
async def test_an_argument_that_would_be_read_as_an_option_is_refused(tmp_path: Path, value: str) -> None:
    canary = tmp_path / "ran"
    tool = {
        **ECHO,
        "input_schema": only("words"),
        "command": ["python3", "-c", f"open({str(canary)!r}, 'w')", "{words}"],
    }
    async with exec_client(tmp_path, tools=declared(echo=tool)) as client:
        result = await client.call_tool("echo", {"words": ["ok", value]})
    assert error_code(result) == "invalid_arguments"
    assert "starts with '-' and would be read as an option" in text_of(result)
    assert not canary.exists(), "nothing runs when an argument is refused"


async def test_after_a_literal_double_dash_or_inside_a_word_a_dash_is_data(tmp_path: Path) -> None:
    tool = {
        **ECHO,
        "input_schema": only("words", "label"),
        "command": ["python3", "-c", ARGV, ["--label={label}"], "--", "{words}"],
    }
    async with exec_client(tmp_path, tools=declared(echo=tool)) as client:
        got = await words_of(client, "echo", {"words": ["-rf", "--help"], "label": "-x"})
    assert got == ["--label=-x", "--", "-rf", "--help"]


async def test_an_enum_value_written_by_the_author_may_be_an_option(tmp_path: Path) -> None:
    schema = {
        "type": "object",
        "properties": {"level": {"type": "string", "enum": ["-q", "-v"], "description": "Verbosity."}},
        "required": ["level"],
    }
    tool = {"description": "d", "input_schema": schema, "command": ["python3", "-c", ARGV, "{level}"]}
    async with exec_client(tmp_path, tools=declared(verbosity=tool)) as client:
        assert await words_of(client, "verbosity", {"level": "-v"}) == ["-v"]
        wrong = await client.call_tool("verbosity", {"level": "-rf"})
    assert error_code(wrong) == "invalid_arguments" and "level" in text_of(wrong)


async def test_arguments_are_validated_by_the_schema(tmp_path: Path) -> None:
    async with exec_client(tmp_path, tools=declared(echo=ECHO)) as client:
        cases: list[tuple[dict[str, Any], str]] = [
            ({}, "words: required"),
            ({"words": "a"}, "words"),
            ({"words": [], "count": 10}, "count"),
            ({"words": [], "count": "3"}, "count"),
            ({"words": [], "other": 1}, "unknown argument 'other'"),
        ]
        for arguments, expected in cases:
            result = await client.call_tool("echo", arguments)
            assert error_code(result) == "invalid_arguments", arguments
            assert expected in text_of(result), (arguments, text_of(result))


RECIPE: dict[str, Any] = {
    "description": "Check, then build.",
    "input_schema": {
        "type": "object",
        "properties": {"target": {"type": "string", "description": "What to build."}},
        "required": ["target"],
    },
    "steps": [
        ["python3", "-c", "import sys; open('one', 'w'); print('step one', sys.argv[1])", "{target}"],
        ["python3", "-c", "import sys; print('step two'); sys.exit(int(sys.argv[1] == 'bad'))", "{target}"],
        ["python3", "-c", "open('three', 'w')"],
    ],
}


async def test_a_recipe_runs_its_steps_in_order_and_stops_at_the_failed_one(tmp_path: Path) -> None:
    async with exec_client(tmp_path, tools=declared(build=RECIPE)) as client:
        good = await client.call_tool("build", {"target": "app"})
        assert not good.is_error, text_of(good)
        data: dict[str, Any] = good.structured_content or {}
        assert [step["exitCode"] for step in data["results"]] == [0, 0, 0]
        assert "failedStep" not in data and data["skipped"] == 0
        assert data["results"][0]["stdout"] == "step one app\n"
        assert (tmp_path / "three").exists()
        (tmp_path / "three").unlink()
        bad = await client.call_tool("build", {"target": "bad"})
    assert not bad.is_error
    failed: dict[str, Any] = bad.structured_content or {}
    assert failed["failedStep"] == 2 and failed["skipped"] == 1
    assert [step["exitCode"] for step in failed["results"]] == [0, 1]
    assert "step 2 failed; 1 later step(s) not run" in text_of(bad)
    assert not (tmp_path / "three").exists()


async def test_a_step_the_policy_refuses_means_no_step_runs(tmp_path: Path) -> None:
    recipe = {**RECIPE, "steps": [RECIPE["steps"][0], ["rm", "-r", "{target}"]]}
    async with exec_client(tmp_path, tools=declared(build=recipe)) as client:
        result = await client.call_tool("build", {"target": "app"})
    assert error_code(result) == "command_refused" and "step 2" in text_of(result)
    assert not (tmp_path / "one").exists()


async def test_work_dir_timeout_env_and_a_missing_program(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    tools = declared(
        where={
            "description": "d",
            "command": ["python3", "-c", "import os; print(os.getcwd(), os.environ['GREETING'])"],
            "work_dir": "sub",
            "env": {"GREETING": "hello"},
        },
        slow={"description": "d", "command": ["sleep", "5"], "timeout_seconds": 1},
        missing={"description": "d", "command": ["no-such-program-here"]},
        escape={"description": "d", "command": ["true"], "work_dir": "/etc"},
    )
    async with exec_client(tmp_path, tools=tools) as client:
        where = await client.call_tool("where", {})
        slow = await client.call_tool("slow", {})
        missing = await client.call_tool("missing", {})
        escape = await client.call_tool("escape", {})
    assert (where.structured_content or {})["results"][0]["stdout"] == f"{tmp_path / 'sub'} hello\n"
    timed: dict[str, Any] = slow.structured_content or {}
    assert timed["results"][0]["timedOut"] and timed["failedStep"] == 1
    assert error_code(missing) == "not_found" and "no-such-program-here not found on PATH" in text_of(missing)
    assert error_code(escape) == "outside_roots"


@NEEDS_BWRAP
async def test_a_declared_tool_runs_in_the_session_sandbox(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    outside = tmp_path / "outside.txt"
    tool = {
        "description": "Write a file.",
        "input_schema": {
            "type": "object",
            "properties": {"path": {"type": "string", "description": "Where."}},
            "required": ["path"],
        },
        "command": ["python3", "-c", "import sys; open(sys.argv[1], 'w').write('x')", "{path}"],
    }
    async with exec_client(root, tools=declared(touch=tool), exec={"sandbox": "bwrap"}) as client:
        inside = await client.call_tool("touch", {"path": str(root / "in.txt")})
        escaped = await client.call_tool("touch", {"path": str(outside)})
    assert (inside.structured_content or {})["sandbox"] == "bwrap"
    assert (root / "in.txt").read_text(encoding="utf-8") == "x"
    assert not escaped.is_error and not outside.exists()


def _registry(root: Path, **sections: dict[str, Any]) -> Registry:
    return build_registry(config_for(root, **sections), environ=dict(os.environ))


@pytest.mark.parametrize(
    ("table", "expected"),
    [
        ({"command": ["true"]}, "tools.custom.bad.description: Field required"),
        ({"description": "d"}, "tools.custom.bad: give either command"),
        ({"description": "d", "command": ["true"], "steps": [["true"]]}, "not both"),
        ({"description": "d", "command": ["true"], "shell": "bash"}, "tools.custom.bad.shell: unknown key"),
        ({"description": "d", "command": []}, "tools.custom.bad.command: a command is a non-empty list"),
        (
            {"description": "d", "command": ["{x}"]},
            "tools.custom.bad.command[0]: the program must be a literal",
        ),
        ({"description": "d", "command": ["echo", "{x}"]}, "command[1]: {x} is not an argument"),
        ({"description": "d", "command": ["echo", "{X-1}"]}, "command[1]: '{X-1}': a lone '{'"),
        ({"description": "d", "command": ["echo", 3]}, "command[1]: a word is a string"),
        (
            {
                "description": "d",
                "steps": [["true"], ["sh", "-c", "{code}"]],
                "input_schema": {"properties": {"code": {"type": "string", "description": "c"}}},
            },
            "tools.custom.bad.steps[1]: sh -c would run '<code>' as code",
        ),
        (
            {
                "description": "d",
                "command": ["python3", "-c", "x={code}"],
                "input_schema": {"properties": {"code": {"type": "string", "description": "c"}}},
            },
            "would run 'x=<code>' as code",
        ),
        (
            {
                "description": "d",
                "command": ["echo", "{on}"],
                "input_schema": {"properties": {"on": {"type": "boolean", "description": "c"}}},
            },
            "the boolean on switches a group",
        ),
        (
            {
                "description": "d",
                "command": ["echo", "--x={xs}"],
                "input_schema": {
                    "properties": {"xs": {"type": "array", "items": {"type": "string"}, "description": "c"}}
                },
            },
            "{xs} is an array: it must be a word of its own",
        ),
        (
            {
                "description": "d",
                "command": ["true"],
                "input_schema": {"properties": {"unused": {"type": "string", "description": "c"}}},
            },
            "input_schema.properties.unused: no command uses it",
        ),
    ],
)
def test_a_bad_table_is_refused_at_start_up_naming_its_key(
    tmp_path: Path, table: dict[str, Any], expected: str
) -> None:
    assert expected in _refusal(tmp_path, table)


CODE = {"properties": {"code": {"type": "string", "description": "c"}}}


@pytest.mark.parametrize(
    "command",
    [
        ["env", "sh", "-c", "{code}"],
        ["timeout", "5", "bash", "-ec", "{code}"],
        ["nice", "/usr/bin/python3", "-c", "{code}"],
        ["uv", "run", "node", "-e", "x; {code}"],
    ],
)
def test_an_interpreter_behind_a_wrapper_may_not_run_an_argument_as_code(
    tmp_path: Path, command: list[str]
) -> None:
    message = _refusal(tmp_path, {"description": "d", "command": command, "input_schema": CODE})
    assert "as code; pass the argument as a word of its own" in message, message


@pytest.mark.parametrize(
    "command",
    [
        ["python3", "-c{code}"],
        ["python3", "-Bc{code}"],
        ["bash", "-c", "-o", "errexit", "{code}"],
        ["sh", "+o", "xtrace", "-c", "-O", "x", "{code}"],
        ["awk", "{code}"],
        ["gawk", "-F", ":", "{code}", "file"],
        ["sed", "{code}"],
        ["sed", "-n", "-e", "{code}"],
        ["deno", "eval", "{code}"],
        ["powershell", "{code}"],
        ["sh", "-c", "--", "{code}"],
        ["bash", "-c", "-x", "{code}"],
        ["perl", "-E", "{code}"],
        ["perl", "-ne{code}"],
        ["node", "-p", "{code}"],
        ["node", "--eval={code}"],
        ["node", "--print", "{code}"],
        ["env", "-S", "{code}"],
        ["env", "--split-string={code}"],
        ["php", "-r", "{code}"],
        ["python3", "-", "{code}"],
        ["bash", "-x{code}", "script"],
        ["uv", "run", "--", "node", "-e", "{code}"],
    ],
)
def test_a_code_word_is_found_behind_options_attached_flags_and_more_interpreters(
    tmp_path: Path, command: list[str]
) -> None:
    """Each of these ran the argument as code (red-team probe p8); they stop the server at start."""
    message = _refusal(tmp_path, {"description": "d", "command": command, "input_schema": CODE})
    assert "as code" in message, message


def test_a_default_every_call_would_refuse_stops_the_server_at_start(tmp_path: Path) -> None:
    schema = {"properties": {"d": {"type": "string", "default": "-n", "description": "c"}}}
    message = _refusal(tmp_path, {"description": "d", "command": ["echo", "{d}"], "input_schema": schema})
    assert "input_schema.properties.d.default: '-n' starts with '-'" in message, message
    after = {"description": "d", "command": ["echo", "--", "{d}"], "input_schema": schema}
    assert "ok" in _registry(tmp_path, tools=declared(ok=after)).names()


async def test_a_number_that_is_not_finite_is_refused(tmp_path: Path) -> None:
    schema = {"properties": {"f": {"type": "number", "description": "c"}}}
    table = {"description": "d", "command": ["echo", "{f}"], "input_schema": schema}
    registry = _registry(tmp_path, tools=declared(num=table))
    for value in (float("inf"), float("-inf"), float("nan")):
        result = await registry.call("num", {"f": value})
        assert result.error is not None and result.error.code == "invalid_arguments", value


async def test_a_wrappers_double_dash_does_not_let_an_argument_be_an_option_of_the_program_it_runs(
    tmp_path: Path,
) -> None:
    schema = {"properties": {"file": {"type": "string", "description": "c"}}}
    table = {"description": "d", "command": ["nice", "--", "sort", "{file}"], "input_schema": schema}
    registry = _registry(tmp_path, tools=declared(sorted=table))
    (tmp_path / "in.txt").write_text("b\na\n", encoding="utf-8")
    result = await registry.call("sorted", {"file": "--output=written-by-option-injection"})
    assert result.error is not None and result.error.code == "invalid_arguments", result
    assert not (tmp_path / "--output=written-by-option-injection").exists()
    assert not (tmp_path / "written-by-option-injection").exists()
    fine = await registry.call("sorted", {"file": "in.txt"})
    assert fine.error is None and (fine.structured or {})["results"][0]["stdout"] == "a\nb\n"
    command = ["nice", "--", "python3", "-c", ARGV, "--", "{file}"]  # the program's own "--" holds
    registry.register_map("own", {"description": "d", "command": command, "input_schema": schema})
    words = await registry.call("own", {"file": "-x"})
    assert words.error is None and json.loads((words.structured or {})["results"][0]["stdout"]) == [
        "--",
        "-x",
    ]


ENVIRON = "import os, sys; print(os.environ.get(sys.argv[1], '-'))"
"""python3 -c ENVIRON NAME prints the variable NAME of its environment."""


@pytest.mark.parametrize(
    "command",
    [
        ["env", "{x}", "python3", "-c", ENVIRON, "LD_PRELOAD"],
        ["nice", "env", "-u", "TERM", "{x}", "python3", "-c", ENVIRON, "LD_PRELOAD"],
        ["timeout", "5", "env", "{x}", "python3", "-c", ENVIRON, "LD_PRELOAD"],
        ["env", "{x}={y}", "python3", "-c", ENVIRON, "LD_PRELOAD"],
    ],
)
async def test_an_argument_after_a_wrapper_may_not_set_a_refused_variable(
    tmp_path: Path, command: list[str]
) -> None:
    """``command = ["env", "{x}", "prog"]`` took ``x = "LD_PRELOAD=/x.so"`` as an assignment."""
    split = "{x}={y}" in command
    names = ("x", "y") if split else ("x",)
    schema = {"properties": {name: {"type": "string", "description": name} for name in names}}
    table = {"description": "d", "command": command, "input_schema": schema}
    registry = _registry(tmp_path, tools=declared(run=table))
    preload = (
        {"x": "LD_PRELOAD", "y": "/nonexistent-mcpl.so"}
        if split
        else {"x": "LD_PRELOAD=/nonexistent-mcpl.so"}
    )
    refused = await registry.call("run", preload)
    assert refused.error is not None and refused.error.code == "command_refused", refused
    assert "LD_PRELOAD" in refused.error.message and "allowed_env" in refused.error.message
    fine = await registry.call("run", {"x": "LANG", "y": "C"} if split else {"x": "LANG=C"})
    assert fine.error is None, fine


async def test_an_assignment_after_a_wrapper_names_a_variable_allowed_env_allows(tmp_path: Path) -> None:
    table: dict[str, Any] = {
        "description": "d",
        "command": ["env", "{x}", "python3", "-c", ENVIRON, "PYTHONSTARTUP"],
        "input_schema": {"properties": {"x": {"type": "string", "description": "x"}}},
    }
    refused = await _registry(tmp_path, tools=declared(run=table)).call("run", {"x": "PYTHONSTARTUP=s.py"})
    assert refused.error is not None and refused.error.code == "command_refused", refused
    allowed = _registry(tmp_path, tools=declared(run=table), exec={"allowed_env": ["PYTHONSTARTUP"]})
    ran = await allowed.call("run", {"x": "PYTHONSTARTUP=s.py"})
    assert ran.error is None and (ran.structured or {})["results"][0]["stdout"] == "s.py\n", ran


def test_a_code_flag_of_a_program_that_is_no_interpreter_takes_an_argument(tmp_path: Path) -> None:
    table = {"description": "d", "command": ["git", "-c", "{code}", "status"], "input_schema": CODE}
    assert "gitc" in _registry(tmp_path, tools=declared(gitc=table)).names()


def _refusal(root: Path, table: dict[str, Any]) -> str:
    """The message of the ConfigError that declaring ``table`` as tool ``bad`` raises."""
    with pytest.raises(ConfigError) as caught:
        _registry(root, tools=declared(bad=table))
    return caught.value.message


def _schema(**prop: Any) -> dict[str, Any]:
    return {"description": "d", "command": ["echo", "{x}"], "input_schema": {"properties": {"x": prop}}}


@pytest.mark.parametrize(
    ("table", "expected"),
    [
        (_schema(type="string"), "input_schema.properties.x.description: every argument needs one"),
        (_schema(type="object", description="d"), "input_schema.properties.x.type: one of string"),
        (_schema(type=["string", "null"], description="d"), "input_schema.properties.x.type"),
        (
            _schema(type="integer", description="d", exclusiveMinimum=0),
            "properties.x.exclusiveMinimum: not taken by every client's schema converter; use minimum",
        ),
        (_schema(type="string", description="d", anyOf=[]), "properties.x.anyOf: not taken"),
        (_schema(type="string", description="d", pattern="(unclosed"), "input_schema.properties.x"),
        (
            _schema(type="string", description="d", enum=[]),
            "input_schema.properties.x.enum: a non-empty list",
        ),
        (_schema(type="integer", description="d", enum=["a"]), "input_schema.properties.x.enum[0]: 'a'"),
        (_schema(type="integer", description="d", default="3"), "input_schema.properties.x.default: '3'"),
        (_schema(type="string", description="d", minLength=-1), "properties.x.minLength: at least 0"),
        (_schema(type="array", description="d", items={"type": "object"}), "properties.x.items: a string"),
        (
            {"description": "d", "command": ["echo", "{x}"], "input_schema": {"type": "array"}},
            "input_schema.type: the arguments are an object",
        ),
        (
            {
                "description": "d",
                "command": ["echo", "{x}"],
                "input_schema": {
                    "properties": {"x": {"type": "string", "description": "d"}},
                    "required": ["y"],
                },
            },
            "input_schema.required",
        ),
        (
            {
                "description": "d",
                "command": ["echo", "{x_y}"],
                "input_schema": {"properties": {"x_y": {"type": "string", "description": "d"}}},
            },
            "input_schema.properties.x_y: an argument name is camelCase",
        ),
        (
            {"description": "d", "command": ["echo"], "input_schema": {"$defs": {}}},
            "input_schema.$defs: not taken",
        ),
    ],
)
def test_a_schema_outside_what_every_provider_takes_is_refused(
    tmp_path: Path, table: dict[str, Any], expected: str
) -> None:
    message = _refusal(tmp_path, table)
    assert expected in message, message


@pytest.mark.parametrize("name", ["readfile", "shellcommand"])
def test_a_declared_name_that_a_built_in_tool_has_is_refused(tmp_path: Path, name: str) -> None:
    with pytest.raises(ConfigError) as caught:
        _registry(tmp_path, tools=declared(**{name: {"description": "d", "command": ["true"]}}))
    assert f"tools.custom.{name}: '{name}' is the name of a built-in tool" in caught.value.message


@pytest.mark.parametrize("name", ["RunTests", "run-tests", "run_tests", "2fast"])
def test_a_declared_name_follows_the_tool_name_rule(tmp_path: Path, name: str) -> None:
    with pytest.raises(ConfigError) as caught:
        _registry(tmp_path, tools=declared(**{name: {"description": "d", "command": ["true"]}}))
    assert "a tool name is lowercase letters and digits, no separators" in caught.value.message


def test_tools_enabled_disabled_rename_and_profiles_apply_to_declared_tools(tmp_path: Path) -> None:
    tools = {
        "one": {"description": "d", "command": ["true"]},
        "two": {"description": "d", "command": ["true"]},
    }
    assert {"one", "two"} <= set(_registry(tmp_path, tools={"custom": tools}).names())
    assert "one" not in _registry(tmp_path, tools={"custom": tools, "disabled": ["one"]}).names()
    assert _registry(tmp_path, tools={"custom": tools, "enabled": ["two"]}).names() == ["two"]
    assert "one" not in _registry(tmp_path, tools={"custom": tools, "disabled": ["exec"]}).names()
    renamed = _registry(tmp_path, tools={"custom": tools, "rename": {"one": "first"}})
    assert "first" in renamed.names() and "one" not in renamed.names()
    with pytest.raises(ConfigError, match="would serve two tools as two"):
        _registry(tmp_path, tools={"custom": tools, "rename": {"one": "two"}})
    read_only = _registry(tmp_path, tools={"custom": tools, "read_only": True})
    assert "one" not in read_only.names()
    assert "one" not in _registry(tmp_path, tools={"custom": tools}, exec={"enabled": False}).names()


async def test_a_profile_and_approval_name_a_declared_tool(tmp_path: Path) -> None:
    from mcp.client.session import ClientRequestContext
    from mcp.types import ElicitRequestParams, ElicitResult

    asked: list[str] = []

    async def deny(context: ClientRequestContext, params: ElicitRequestParams) -> ElicitResult:
        asked.append(str(getattr(params, "message", "")))
        return ElicitResult(action="accept", content={"decision": "deny"})

    canary = tmp_path / "ran"
    tools = declared(mark={"description": "d", "command": ["python3", "-c", f"open({str(canary)!r}, 'w')"]})
    config = config_for(tmp_path, tools=tools, approval={"require": ["mark"]}, exec={"sandbox": "off"})
    async with Client(build_server(config), elicitation_callback=deny, raise_exceptions=True) as client:
        (listed,) = [tool for tool in (await client.list_tools()).tools if tool.name == "mark"]
        result = await client.call_tool("mark", {})
    assert (listed.description or "").endswith("Asks the user first.")
    assert error_code(result) == "approval_denied" and asked and "(mark)" in asked[0]
    assert not canary.exists()
    profiles = {"reader": {"enabled": ["mark"]}}
    server = build_server(config_for(tmp_path, tools=tools, profiles=profiles), profile="reader")
    async with Client(server, raise_exceptions=True) as client:
        assert [tool.name for tool in (await client.list_tools()).tools] == ["mark"]


async def test_the_question_shows_the_command_lines_the_call_would_run(tmp_path: Path) -> None:
    from mcp.client.session import ClientRequestContext
    from mcp.types import ElicitRequestParams, ElicitResult

    asked: list[str] = []

    async def deny(context: ClientRequestContext, params: ElicitRequestParams) -> ElicitResult:
        asked.append(str(getattr(params, "message", "")))
        return ElicitResult(action="accept", content={"decision": "deny"})

    (tmp_path / "sub").mkdir()
    tools = declared(build=RECIPE, there={**RECIPE, "work_dir": "sub"})
    config = config_for(tmp_path, tools=tools, approval={"require": ["exec"]}, exec={"sandbox": "off"})
    async with Client(build_server(config), elicitation_callback=deny, raise_exceptions=True) as client:
        result = await client.call_tool("build", {"target": "web app; token=s3cr3t-value"})
        await client.call_tool("there", {"target": "x"})
    assert error_code(result) == "approval_denied" and len(asked) == 2
    assert f"In: {tmp_path / 'sub'}" in asked[1].splitlines()
    lines = asked[0].splitlines()
    steps = [line for line in lines if line.startswith("  $ ")]
    assert len(steps) == 3, asked[0]
    assert steps[0].startswith("  $ python3 -c ") and steps[0].endswith("'web app; token=s3cr3t-value'")
    assert steps[2] == "  $ python3 -c 'open('\"'\"'three'\"'\"', '\"'\"'w'\"'\"')'"
    assert not (tmp_path / "one").exists()


async def test_a_declared_call_is_audited_with_its_exit_codes(tmp_path: Path) -> None:
    root, log = tmp_path / "root", tmp_path / "audit.jsonl"
    root.mkdir()
    config = config_for(
        root,
        tools=declared(build=RECIPE),
        audit={"enabled": True, "path": str(log)},
        exec={"sandbox": "off"},
    )
    async with Client(build_server(config), raise_exceptions=True) as client:
        await client.call_tool("build", {"target": "bad"})
    (record,) = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert record["tool"] == "build" and record["exit_codes"] == [0, 1] and record["sandbox"] == "off"
    assert record["arguments"] == {"target": "bad"}
    assert [command.split()[-1] for command in record["commands"]] == ["bad", "bad"]


async def test_a_declared_argument_named_commands_does_not_hide_the_command_lines_that_ran(
    tmp_path: Path,
) -> None:
    root, log = tmp_path / "root", tmp_path / "audit.jsonl"
    root.mkdir()
    schema = {"properties": {"commands": {"type": "array", "items": {"type": "string"}, "description": "c"}}}
    command = ["python3", "-c", ARGV, "--", "{commands}"]
    tool = {"description": "d", "command": command, "input_schema": schema}
    audit = {"enabled": True, "path": str(log)}
    config = config_for(root, tools=declared(withcmds=tool), audit=audit, exec={"sandbox": "off"})
    async with Client(build_server(config), raise_exceptions=True) as client:
        await client.call_tool("withcmds", {"commands": ["git status"]})
    (record,) = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert record["arguments"] == {"commands": ["git status"]}
    (line,) = record["commands"]
    assert line.startswith("python3 -c ") and line.endswith("-- 'git status'"), line
    from mcp_localtools.audit_reader import summary

    assert summary(record) == line  # mcp-localtools audit shows what ran


async def test_register_map_declares_a_tool_from_python(tmp_path: Path) -> None:
    registry = _registry(tmp_path)
    spec = registry.register_map("echo", ECHO)
    assert spec.name == "echo" and spec.group == "exec"
    result = await registry.call("echo", {"words": ["; touch pwned"], "loud": True})
    assert not result.is_error
    assert json.loads((result.structured or {})["results"][0]["stdout"]) == ["--loud", "; touch pwned"]
    assert not (tmp_path / "pwned").exists()
    with pytest.raises(ConfigError, match="already registered"):
        registry.register_map("echo", ECHO)
    with pytest.raises(ConfigError, match="'readfile' is the name of a built-in tool"):
        registry.register_map("readfile", ECHO)
    with pytest.raises(ConfigError, match=r"register_map\('other'\)\.description"):
        registry.register_map("other", {"command": ["true"]})
    with pytest.raises(ConfigError, match="cannot run commands; build it with build_registry"):
        Registry().register_map("echo", ECHO)


def test_the_declared_keys_are_checked_like_the_rest_of_the_config() -> None:
    assert Config().tools.custom == {}
    assert sys.platform  # the tables themselves are checked when the registry is built (above)


def test_the_commented_example_of_the_example_config_is_a_valid_declared_tool(tmp_path: Path) -> None:
    import tomllib

    from mcp_localtools.config import parse_config

    example = Path(__file__).resolve().parents[3] / "src" / "mcp_localtools" / "config.example.toml"
    lines = example.read_text(encoding="utf-8").splitlines()
    start = lines.index("# [tools.custom.tests]")
    block = []
    for line in lines[start:]:
        if not line.startswith("#"):
            break
        block.append(line.removeprefix("#").removeprefix(" "))
    data = tomllib.loads("\n".join(block))
    registry = build_registry(parse_config({**data, "paths": {"allowed_roots": [str(tmp_path)]}}))
    assert {"tests", "release"} <= set(registry.names())
