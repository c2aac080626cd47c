"""The Claude Desktop bundle (``bundle/``): its manifest, its entry point's settings, and the bundle
started the way a host starts it, over stdio with the SDK client.

The packed ``.mcpb`` (``bundle/build.py`` with the official ``mcpb`` CLI) is tested when
``MCP_LOCALTOOLS_BUNDLE`` names one (``.ci/package`` builds it); without it that test is skipped,
and with ``MCP_LOCALTOOLS_REQUIRE_BUNDLE=1`` (CI) the skip is a failure.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import tomllib
import zipfile
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from mcp_localtools._version import __version__
from tests.helpers import text_of

REPO = Path(__file__).resolve().parent.parent
BUNDLE = REPO / "bundle"
PACKED = os.environ.get("MCP_LOCALTOOLS_BUNDLE", "")
REQUIRE_PACKED = os.environ.get("MCP_LOCALTOOLS_REQUIRE_BUNDLE") == "1"


def _load(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"bundle_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _manifest() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((BUNDLE / "manifest.json").read_text(encoding="utf-8"))
    return data


def test_the_manifest_matches_the_package() -> None:
    manifest = _manifest()
    with (REPO / "pyproject.toml").open("rb") as handle:
        project = tomllib.load(handle)["project"]
    repository = project["urls"]["Repository"]
    assert manifest["manifest_version"] == "0.4"  # the first with server.type "uv"
    assert manifest["name"] == project["name"]
    assert manifest["version"] == __version__
    assert manifest["license"] == project["license"]
    assert manifest["repository"]["url"] == repository
    for key in ("homepage", "documentation", "support"):
        assert manifest[key].startswith(repository), key
    assert manifest["compatibility"]["runtimes"]["python"] == project["requires-python"]


def test_the_manifest_asks_for_folders_read_only_and_the_sandbox() -> None:
    manifest = _manifest()
    settings = manifest["user_config"]
    assert settings["roots"]["type"] == "directory"
    assert settings["roots"]["multiple"] is True and settings["roots"]["required"] is True
    assert settings["read_only"] == {**settings["read_only"], "type": "boolean", "default": False}
    assert settings["sandbox"] == {**settings["sandbox"], "type": "boolean", "default": True}
    server = manifest["server"]
    assert server["type"] == "uv" and (BUNDLE / server["entry_point"]).is_file()
    args = server["mcp_config"]["args"]
    assert f"${{__dirname}}/{server['entry_point']}" in args
    assert "--read-only=${user_config.read_only}" in args
    assert "--sandbox=${user_config.sandbox}" in args
    assert args[-1] == "${user_config.roots}"  # a multiple setting expands into one argument each


def _host_config(manifest: dict[str, Any], platform: str, variables: dict[str, str]) -> dict[str, Any]:
    """``server.mcp_config`` as an MCPB host resolves it on ``platform`` (``@anthropic-ai/mcpb``'s
    ``getMcpConfigForManifest``): a platform override replaces ``command``, ``args`` or ``env``
    whole, then every ``${NAME}`` in a string is replaced."""
    base = manifest["server"]["mcp_config"]
    override = base.get("platform_overrides", {}).get(platform, {})
    config = {key: override.get(key) or base.get(key) for key in ("command", "args", "env")}

    def replace(value: Any) -> Any:
        if isinstance(value, str):
            for name, text in variables.items():
                value = value.replace("${" + name + "}", text)
            return value
        if isinstance(value, list):
            return [replace(item) for item in value]
        if isinstance(value, dict):
            return {key: replace(item) for key, item in value.items()}
        return value

    resolved: dict[str, Any] = replace(config)
    return resolved


@pytest.mark.parametrize(
    ("platform", "home", "separator", "cache"),
    [
        ("linux", "/home/ann", "/", "/home/ann/.cache/"),
        ("darwin", "/Users/ann", "/", "/Users/ann/Library/Caches/"),
        ("win32", "C:\\Users\\ann", "\\", "C:\\Users\\ann\\AppData\\Local\\"),
    ],
)
def test_uv_keeps_the_bundles_environment_in_the_users_cache_not_in_the_unpacked_folder(
    platform: str, home: str, separator: str, cache: str
) -> None:
    """``uv run --project BUNDLE`` made its 254 MB ``.venv`` inside the unpacked bundle (issue 35):
    ``UV_PROJECT_ENVIRONMENT`` puts it in the user's cache directory of each platform, where it
    survives an update of the bundle and is not counted as the bundle's size."""
    manifest = _manifest()
    assert set(manifest["compatibility"]["platforms"]) == {"linux", "darwin", "win32"}
    unpacked = separator.join([home, "Claude", "Extensions", "mcp-localtools"])
    variables = {"__dirname": unpacked, "HOME": home, "/": separator, "pathSeparator": separator}
    config = _host_config(manifest, platform, variables)
    environment = config["env"]["UV_PROJECT_ENVIRONMENT"]
    assert environment.startswith(cache) and not environment.startswith(unpacked), environment
    assert "${" not in environment
    assert config["env"]["PYTHONIOENCODING"] == "utf-8"  # an override replaces the whole env
    assert config["command"] == "uv" and config["args"][:3] == ["run", "--project", unpacked]


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--read-only=false", "--sandbox=true", "/a", "/b"], ["--root", "/a", "--root", "/b"]),
        (["--read-only=true", "--sandbox=true", "/a"], ["--root", "/a", "--read-only"]),
        (["--version"], ["--version"]),
        (
            ["--read-only=false", "--sandbox=true", "/a", "tools", "--json"],
            ["--root", "/a", "tools", "--json"],
        ),
    ],
)
def test_the_entry_point_turns_the_settings_into_the_command_line(
    argv: list[str], expected: list[str]
) -> None:
    entry = _load(BUNDLE / "server" / "main.py")
    assert entry.command_line(argv) == expected


def test_a_sandbox_turned_off_loads_the_config_beside_the_entry_point() -> None:
    entry = _load(BUNDLE / "server" / "main.py")
    args = entry.command_line(["--read-only=false", "--sandbox=false", "/a"])
    config = Path(args[args.index("--config") + 1])
    assert config == BUNDLE / "server" / "sandbox-off.toml"
    with config.open("rb") as handle:
        assert tomllib.load(handle) == {"exec": {"sandbox": {"mode": "off"}}}


async def _serve(entry: Path, root: Path, *settings: str) -> tuple[str, set[str]]:
    """Start ``entry`` as a host would, with ``settings`` and ``root``, and read a file through it;
    returns the server's version and its tools' names."""
    params = StdioServerParameters(
        command=sys.executable, args=[str(entry), *settings, str(root)], cwd=str(root)
    )
    with anyio.fail_after(120):
        async with Client(params) as client:
            tools = {tool.name for tool in (await client.list_tools()).tools}
            assert client.server_info is not None
            read = await client.call_tool("readfile", {"path": "hello.txt"})
            assert "hello from the bundle" in text_of(read)
            return client.server_info.version, tools


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "root"
    folder.mkdir()
    (folder / "hello.txt").write_text("hello from the bundle\n", encoding="utf-8")
    return folder


@pytest.mark.anyio
async def test_the_staged_bundle_runs_its_own_copy_of_the_package(tmp_path: Path, root: Path) -> None:
    staged = _load(BUNDLE / "build.py").stage(tmp_path / "staged")
    version_file = staged / "src" / "mcp_localtools" / "_version.py"
    version_file.write_text(f'__version__ = "{__version__}+staged"\n', encoding="utf-8")
    entry = staged / "server" / "main.py"

    version, tools = await _serve(entry, root, "--read-only=false", "--sandbox=true")
    assert version == f"{__version__}+staged"  # the bundle's src/, not the installed package
    assert {"readfile", "writefile", "shellcommand"} <= tools

    _, read_only_tools = await _serve(entry, root, "--read-only=true", "--sandbox=true")
    assert "readfile" in read_only_tools and not {"writefile", "shellcommand"} & read_only_tools


@pytest.mark.anyio
async def test_the_packed_bundle_serves_tools_list(tmp_path: Path, root: Path) -> None:
    if not PACKED:
        message = "no packed bundle: .ci/package builds one and sets MCP_LOCALTOOLS_BUNDLE"
        if REQUIRE_PACKED:
            pytest.fail(message)
        pytest.skip(message)
    unpacked = tmp_path / "unpacked"
    with zipfile.ZipFile(PACKED) as archive:
        archive.extractall(unpacked)
    staged = _load(BUNDLE / "build.py").stage(tmp_path / "staged")
    files = {path.relative_to(staged) for path in staged.rglob("*") if path.is_file()}
    assert {path.relative_to(unpacked) for path in unpacked.rglob("*") if path.is_file()} == files

    version, tools = await _serve(
        unpacked / "server" / "main.py", root, "--read-only=false", "--sandbox=true"
    )
    assert version == __version__
    assert {"readfile", "searchfiles", "editfile"} <= tools
