"""The registry: registration-time checks, validation, error results, timeouts, progress."""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path
from typing import Any

import anyio
import pytest
from pydantic import Field

from mcp_localtools.errors import ConfigError, OutsideAllowedRoots, SpecError, ToolError, UnknownToolError
from mcp_localtools.registry import Registry
from mcp_localtools.results import ToolResult, wire_chars
from mcp_localtools.spec import READ_ONLY, CallContext, ToolArgs, ToolOutput, ToolSpec
from mcp_localtools.tools import build_registry
from tests.helpers import config_for

pytestmark = pytest.mark.anyio


class EchoArgs(ToolArgs):
    text: str = Field("hi", description="What to echo.")
    sleep_seconds: float = Field(0, description="Seconds to wait first.")


class EchoResult(ToolOutput):
    text: str = Field(description="The text.")


def spec(name: str = "echo", handler=None, args_model: type[ToolArgs] = EchoArgs) -> ToolSpec:  # type: ignore[no-untyped-def, type-arg]
    async def echo(args: EchoArgs, ctx: CallContext) -> ToolResult:
        await anyio.sleep(args.sleep_seconds)
        return ToolResult.of(EchoResult(text=args.text))

    return ToolSpec(
        name=name,
        group="test",
        title="Echo",
        description="Echo text.",
        args_model=args_model,
        result_model=EchoResult,
        handler=handler or echo,
        annotations=READ_ONLY,
    )


def test_registering_a_name_twice_fails() -> None:
    registry = Registry()
    registry.register(spec())
    with pytest.raises(SpecError, match="registered twice"):
        registry.register(spec())


def test_a_field_without_a_description_fails_at_registration() -> None:
    class Undocumented(ToolArgs):
        path: str

    with pytest.raises(SpecError, match="without a description: path"):
        Registry().register(spec(args_model=Undocumented))


def test_an_uppercase_tool_name_fails_at_registration() -> None:
    with pytest.raises(SpecError, match="lowercase"):
        Registry().register(spec(name="ReadFile"))


def test_names_and_specs_are_sorted() -> None:
    registry = Registry()
    for name in ["zeta", "alpha", "mid"]:
        registry.register(spec(name))
    assert registry.names() == ["alpha", "mid", "zeta"]
    assert [s.name for s in registry.specs()] == ["alpha", "mid", "zeta"]


async def test_an_unknown_tool_raises_listing_the_known_ones() -> None:
    registry = Registry()
    registry.register(spec())
    with pytest.raises(UnknownToolError, match="known tools: echo"):
        await registry.call("nope", {})


async def test_blank_arguments_mean_all_defaults() -> None:
    registry = Registry()
    registry.register(spec())
    assert (await registry.call("echo")).structured == {"text": "hi"}


async def test_invalid_arguments_become_an_error_result_without_the_input_value() -> None:
    registry = Registry()
    registry.register(spec())
    result = await registry.call("echo", {"text": 42, "extra": "s3cret-value"})
    assert result.error is not None and result.error.code == "invalid_arguments"
    assert "unknown argument 'extra'" in result.error.message
    assert "s3cret-value" not in result.error.message


async def test_a_lone_surrogate_anywhere_in_the_arguments_is_invalid_arguments(tmp_path: Path) -> None:
    registry = build_registry(config_for(tmp_path))
    cases: list[tuple[str, dict[str, Any], str]] = [
        ("writefile", {"path": "a.txt", "content": "bad \ud800"}, "content"),
        ("shellcommand", {"commands": ["echo ok", "echo \udfff"]}, "commands[1]"),
        ("shellcommand", {"commands": ["env"], "env": {"X": "\ud800"}}, "env.X"),
        ("editfile", {"path": "a.txt", "edits": [{"oldText": "a", "newText": "\ud800"}]}, "edits[0].newText"),
    ]
    for tool, args, where in cases:
        result = await registry.call(tool, args)
        assert result.error is not None and result.error.code == "invalid_arguments", (tool, result)
        assert f"invalid arguments for {tool}: {where}: holds a lone surrogate" in result.error.message
    assert list(tmp_path.iterdir()) == []
    ok = await registry.call("writefile", {"path": "a.txt", "content": "ünïcødé \U0001f600"})
    assert ok.error is None and (tmp_path / "a.txt").read_text(encoding="utf-8") == "ünïcødé \U0001f600"


async def test_a_tool_error_becomes_an_error_result_with_its_code_and_message() -> None:
    async def refuse(args: EchoArgs, ctx: CallContext) -> ToolResult:
        raise OutsideAllowedRoots("path is outside allowed roots: /x")

    registry = Registry()
    registry.register(spec(handler=refuse))
    result = await registry.call("echo", {})
    assert result.error is not None
    assert (result.error.code, result.error.policy) == ("outside_roots", True)
    assert result.content[0].text == "path is outside allowed roots: /x"  # type: ignore[union-attr]


async def test_an_unexpected_exception_is_logged_and_reported_generically(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def crash(args: EchoArgs, ctx: CallContext) -> ToolResult:
        raise RuntimeError("internal detail /home/secret")

    registry = Registry()
    registry.register(spec(handler=crash))
    with caplog.at_level(logging.ERROR):
        result = await registry.call("echo", {})
    assert result.error is not None and result.error.code == "internal_error"
    assert "internal detail" not in result.error.message and "Traceback" not in result.error.message
    assert "internal detail /home/secret" in caplog.text


async def test_a_call_that_outlives_its_timeout_becomes_a_timeout_error() -> None:
    registry = Registry(default_timeout=0.05)
    registry.register(spec())
    with anyio.fail_after(5):
        result = await registry.call("echo", {"sleepSeconds": 10})
    assert result.error is not None and result.error.code == "timeout"
    assert "did not finish within 0.05 s" in result.error.message


async def test_progress_reaches_the_caller_in_order() -> None:
    async def steps(args: EchoArgs, ctx: CallContext) -> ToolResult:
        for n in range(1, 4):
            await ctx.report_progress(n, 3, f"step {n}")
        return ToolResult.of(EchoResult(text="done"))

    seen: list[tuple[float, float | None, str | None]] = []

    async def record(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    registry = Registry()
    registry.register(spec(handler=steps))
    await registry.call("echo", {}, progress=record)
    assert seen == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]


async def test_the_registry_serves_the_python_api_without_mcp(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hello\n", encoding="utf-8")
    registry = build_registry(config_for(tmp_path))
    result = await registry.call("readfile", {"path": "a.txt"})
    assert result.structured is not None and result.structured["content"] == "hello\n"


def test_a_tools_entry_that_matches_nothing_fails_at_start_up(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"tools.disabled: 'redfile' matches no tool"):
        build_registry(config_for(tmp_path, tools={"disabled": ["redfile"]}))


def test_tool_error_is_the_base_of_every_call_failure() -> None:
    assert issubclass(OutsideAllowedRoots, ToolError)


async def test_null_for_an_optional_argument_means_its_default(tmp_path: Path) -> None:
    # mcp-use sends null for every property without a value: each tool must take that as
    # "use the default", and say so for its list arguments in the schema.
    (tmp_path / "a.py").write_text("needle\n", encoding="utf-8")
    registry = build_registry(config_for(tmp_path))
    nulls = {
        "readfile": {"path": "a.py"},
        "searchfiles": {"pattern": "needle"},
        "globfiles": {"pattern": "*.py"},
        "directorytree": {},
        "listdirectory": {},
        "statpath": {"path": "a.py"},
    }
    for name, required in nulls.items():
        properties = registry.schemas(name)[0]["properties"]
        arguments = {key: None for key in properties if key not in required} | required
        result = await registry.call(name, arguments)
        assert result.error is None, (name, result.error)
        for key, schema in properties.items():
            if schema.get("type") == "array" and key not in required:
                assert schema.get("default") == [], (name, key)


async def test_null_for_a_required_argument_is_still_refused(tmp_path: Path) -> None:
    registry = build_registry(config_for(tmp_path))
    result = await registry.call("readfile", {"path": None})
    assert result.error is not None and result.error.code == "invalid_arguments"


def test_no_output_schema_has_defs_or_refs(tmp_path: Path) -> None:
    registry = build_registry(config_for(tmp_path))
    for name in registry.names():
        text = json.dumps(registry.schemas(name)[1])
        assert "$defs" not in text and "$ref" not in text, name


def test_a_result_over_the_registry_budget_is_cut_with_its_truncated_flag_set() -> None:
    class Big(ToolOutput):
        items: list[str] = Field(description="Many strings.")
        truncated: bool = Field(description="Cut.")

    async def handler(args: ToolArgs, ctx: CallContext) -> ToolResult:
        return ToolResult.of(Big(items=["x" * 100] * 500, truncated=False), text="y" * 50_000)

    registry = Registry(max_result_chars=5000)
    registry.register(
        ToolSpec(
            name="big",
            group="fs",
            title="Big",
            description="A big result.",
            args_model=ToolArgs,
            result_model=Big,
            handler=handler,
            annotations=READ_ONLY,
        )
    )
    result = anyio.run(registry.call, "big")
    assert result.structured is not None and result.structured["truncated"] is True
    assert wire_chars(result) <= 5000 and 0 < len(result.structured["items"]) < 500
    assert "cut to the 5000-character budget" in result.content[-1].text  # type: ignore[union-attr]


async def test_replace_puts_a_new_tool_in_place_of_a_built_in_one_on_purpose(tmp_path: Path) -> None:
    registry = build_registry(config_for(tmp_path))
    with pytest.raises(SpecError, match="registered twice"):
        registry.register(spec("readfile"))

    async def shout(args: EchoArgs, ctx: CallContext) -> ToolResult:
        return ToolResult.of(EchoResult(text=args.text.upper()))

    old = registry.replace(spec("readfile", handler=shout))
    assert old.group == "fs"
    result = await registry.call("readfile", {"text": "x"})
    assert result.structured == {"text": "X"}


def test_replace_of_an_unknown_name_fails_and_a_bad_replacement_keeps_the_old_tool() -> None:
    registry = Registry()
    with pytest.raises(SpecError, match="no tool has that name"):
        registry.replace(spec("echo"))
    registry.register(spec("echo"))

    class Undocumented(ToolArgs):
        text: str = "x"

    with pytest.raises(SpecError, match="without a description"):
        registry.replace(spec("echo", args_model=Undocumented))
    assert registry.get("echo").args_model is EchoArgs


async def test_tools_rename_serves_a_tool_under_another_name(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hello\n", encoding="utf-8")
    config = config_for(tmp_path, tools={"rename": {"readfile": "read", "shellcommand": "bash"}})
    registry = build_registry(config)
    assert {"read", "bash"} <= set(registry.names())
    assert "readfile" not in registry.names() and "shellcommand" not in registry.names()
    result = await registry.call("read", {"path": "a.txt"})
    assert not result.is_error


@pytest.mark.parametrize(
    ("rename", "message"),
    [
        ({"nosuchtool": "x"}, "no tool named nosuchtool"),
        ({"readfile": "writefile"}, "would serve two tools as writefile"),
    ],
)
def test_a_rename_of_an_unknown_tool_or_onto_a_taken_name_fails_at_start_up(
    tmp_path: Path, rename: dict[str, str], message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        build_registry(config_for(tmp_path, tools={"rename": rename}))


async def test_a_tools_result_models_are_built_on_the_event_loop_before_its_first_body_runs() -> None:
    """Tool models are built on first use; a body that constructs results in worker threads
    must find them built (two threads building one model at once race in older pydantic)."""

    class Item(ToolOutput):
        name: str = Field(description="Name.")

    class Listing(ToolOutput):
        items: list[Item] = Field(description="Items.")

    Listing.model_rebuild(_types_namespace={"Item": Item})  # resolve the local name only
    assert not Item.__pydantic_complete__
    seen: list[bool] = []

    def body() -> ToolResult:
        seen.append(Item.__pydantic_complete__ and Listing.__pydantic_complete__)
        return ToolResult.of(Listing(items=[Item(name="a")]))

    async def handler(args: EchoArgs, ctx: CallContext) -> ToolResult:
        return await anyio.to_thread.run_sync(body)

    registry = Registry()
    registry.register(
        ToolSpec(
            name="listing",
            group="test",
            title="Listing",
            description="List.",
            args_model=EchoArgs,
            result_model=Listing,
            handler=handler,
            annotations=READ_ONLY,
        )
    )
    result = await registry.call("listing", {})
    assert not result.is_error and seen == [True]


PRE_CHECK_EXEMPT: dict[str, str] = {}
"""Tools that change something or reach outside the machine yet declare no ``ToolSpec.check``, each
with the reason nobody can be asked about a call of it that the policy would then refuse."""


def test_every_tool_that_changes_something_or_reaches_out_declares_its_pre_check(tmp_path: Path) -> None:
    """``[approval]`` asks only about calls that can run: the pipeline puts a call to its tool's
    pre-check (``Registry.check``: policy, paths, URL rules) before asking, and a tool without
    one is asked about calls its policy then refuses. Declared tools included."""
    custom = {"hello": {"description": "Say hello.", "command": ["echo", "hello"]}}
    registry = build_registry(config_for(tmp_path, tools={"custom": custom}))
    assert "hello" in registry.names()
    needing = [
        spec.name
        for spec in registry.specs()
        if not spec.annotations.read_only or spec.annotations.open_world
    ]
    assert {"writefile", "editfile", "replaceinfiles", "httpget", "shellcommand", "hello"} <= set(needing)
    missing = [name for name in needing if registry.get(name).check is None and name not in PRE_CHECK_EXEMPT]
    assert missing == [], (
        f"declare a ToolSpec.check, or list the tool in PRE_CHECK_EXEMPT with why: {missing}"
    )
    assert all(reason.strip() for reason in PRE_CHECK_EXEMPT.values())


def test_the_tool_specs_group_docstring_names_every_group(tmp_path: Path) -> None:
    from mcp_localtools.tools import GROUPS

    entry = re.search(r"^ +group: (.*?)^ +\w+: ", ToolSpec.__doc__ or "", re.MULTILINE | re.DOTALL)
    assert entry is not None
    named = set(re.findall(r"``(\w+)``", entry.group(1))) - {"_meta"}
    assert named == set(GROUPS)
    assert {spec.group for spec in build_registry(config_for(tmp_path)).specs()} <= named
