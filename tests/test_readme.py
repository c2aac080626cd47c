"""The README's quick start is what CI runs, and what it promises exists."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def quick_start_commands() -> list[str]:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    heading = re.search(r"^#{2,3} Quick start\n", readme, re.MULTILINE)
    assert heading is not None, "the README has no quick start"
    section = re.split(r"^#{1,3} ", readme[heading.end() :], maxsplit=1, flags=re.MULTILINE)[0]
    block = re.search(r"```sh\n(.*?)```", section, re.DOTALL)
    assert block is not None, "the quick start has no sh block"
    return [line for line in block.group(1).splitlines() if line.strip()]


def test_the_quick_start_has_exactly_two_commands_a_server_and_the_tests() -> None:
    serve, test = quick_start_commands()
    assert serve.endswith(".venv/bin/mcp-localtools")
    assert "pytest" in test


def test_ci_runs_the_readme_test_command_verbatim() -> None:
    _, test = quick_start_commands()
    assert f'TEST_COMMAND="{test}"' in (REPO / ".ci" / "run").read_text(encoding="utf-8")


def test_the_files_the_readme_points_to_exist() -> None:
    for name in ["config.example.toml", "Dockerfile", "LICENSE", ".ci/run", "src/mcp_localtools/py.typed"]:
        assert (REPO / name).exists(), name


def test_the_architecture_map_names_every_tool_with_its_module_and_test_file() -> None:
    from mcp_localtools.tools import GROUPS

    doc = (REPO / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    rows = dict(re.findall(r"^\| (\w+) \| `[^`]*?tools/(\w+/\w+)\.py` \|", doc, re.MULTILINE))
    tools = {name: group for group, names in GROUPS.items() for name in names}
    assert {name: f"{group}/{name}" for name, group in tools.items()} == rows
    for name, group in tools.items():
        assert (REPO / "src" / "mcp_localtools" / "tools" / group / f"{name}.py").is_file()
        assert f"`tests/tools/{group}/test_{name}.py`" in doc
        assert (REPO / "tests" / "tools" / group / f"test_{name}.py").is_file(), name


def test_the_readme_is_for_users_first_and_development_last() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    sections = re.findall(r"^## (.+)$", readme, re.MULTILINE)
    order = ["Install", "Connect a client", "What it can do", "Security", "Configuration"]
    assert [name for name in sections if name in order] == order, sections
    assert sections[-1] == "Development", sections


def _python_blocks() -> list[str]:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    return re.findall(r"^```python\n(.*?)^```", readme, re.MULTILINE | re.DOTALL)


def test_the_readme_has_python_blocks() -> None:
    assert _python_blocks(), "the README's Python API example is gone"


@pytest.mark.parametrize("block", _python_blocks(), ids=lambda block: block.splitlines()[0][:40])
def test_every_python_block_of_the_readme_runs(block: str, tmp_path: Path) -> None:
    """Each block as a script of its own, in a folder with a README.md (what the examples read)."""
    (tmp_path / "README.md").write_text("".join(f"line {n}\n" for n in range(1, 31)), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-c", block], cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "line 20" in done.stdout


def test_every_client_json_of_the_readme_parses_and_holds_only_literal_values() -> None:
    """A client's JSON is not a shell: ``$(id -u)``, ``$PWD``, ``$HOME`` and ``~`` reach the
    server as written. (VS Code's ``${workspaceFolder}`` and mcp-remote's ``${AUTH_HEADER}`` are
    expanded by those programs.)"""
    import json

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^```json\n(.*?)^```", readme, re.MULTILINE | re.DOTALL)
    assert len(blocks) >= 4
    for block in blocks:
        json.loads(block)
        assert not re.search(r"\$\(|\$PWD|\$\{?HOME|\"~", block), block


def _toml_blocks() -> list[str]:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    return re.findall(r"^```toml\n(.*?)^```", readme, re.MULTILINE | re.DOTALL)


def test_every_toml_block_of_the_readme_parses() -> None:
    import tomllib

    for block in _toml_blocks():
        tomllib.loads(block)


def test_the_declared_tools_of_the_readme_are_served(tmp_path: Path) -> None:
    import tomllib

    from mcp_localtools.config import parse_config
    from mcp_localtools.tools import build_registry

    (block,) = [block for block in _toml_blocks() if "[tools.custom." in block]
    data = tomllib.loads(block)
    registry = build_registry(parse_config({**data, "paths": {"allowed_roots": [str(tmp_path)]}}))
    assert {"tests", "release"} <= set(registry.names())
    release = registry.manifest("release")
    assert release["inputSchema"]["required"] == ["outdir"]
    assert "stopping at the first that fails" in release["description"]


_INSTALL = re.compile(
    r"""(?:uvx --from |pipx install (?:--force )?|uv tool install |pip install -e |"--from", )"""
    r"""(['"]?)(.+?)\1(?=[\s,`)]|$)"""
)


def _install_specs() -> list[str]:
    """What each install line of the README installs (``uvx --from``, ``pipx install``, ``uv tool
    install``, ``pip install -e``, and the ``--from`` of the clients' JSON)."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    return [found.group(2) for found in _INSTALL.finditer(readme.replace("\n", " "))]


def test_every_install_line_of_the_readme_brings_bwrap() -> None:
    """Without the ``bwrap`` extra, a Linux machine without a system bwrap runs every command
    under Landlock; the start-up line says so on stderr, which Claude Code never shows."""
    specs = _install_specs()
    assert len(specs) >= 8, specs
    assert [spec for spec in specs if "[bwrap]" not in spec and "[test]" not in spec] == []


def test_the_client_configs_run_the_installed_command() -> None:
    """``uvx`` resolves the package on every start (4.2 s against 1.0-1.5 s installed), and a
    client that does not wait loses the server's tools (issue 35): the client JSON runs
    ``mcp-localtools``, and Claude Code's first line does too (``uvx`` comes after, as the
    alternative)."""
    import json

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Connect a client") : readme.index("### Clients and model providers")]
    configs = [
        json.loads(block) for block in re.findall(r"^```json\n(.*?)^```", section, re.MULTILINE | re.DOTALL)
    ]
    servers = [
        entry for config in configs for entry in (config.get("mcpServers") or config["servers"]).values()
    ]
    assert len(servers) >= 2 and all(entry["command"] == "mcp-localtools" for entry in servers), servers
    first = re.search(r"^claude mcp add .*$", section, re.MULTILINE)
    assert first is not None and first.group(0).startswith("claude mcp add localtools -- mcp-localtools ")
