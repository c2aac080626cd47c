"""Config loading: unknown keys and bad values fail naming the key; the example covers every key."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from mcp_localtools.config import Config, load_config, parse_config
from mcp_localtools.errors import ConfigError

REPO = Path(__file__).resolve().parent.parent


def test_the_embedded_default_has_the_current_directory_as_the_only_root() -> None:
    config = Config()
    assert config.paths.allowed_roots == ["."]
    assert config.tools.enabled == ["*"] and config.server.transport == "stdio"
    assert config.limits.read_max_lines == 2000 and config.limits.max_result_chars == 45_000
    assert config.exec.timeout_seconds == 60 and config.exec.max_output_bytes == 262_144


def test_an_unknown_key_fails_naming_its_key_path() -> None:
    with pytest.raises(ConfigError, match=r"paths\.alowed_roots: unknown key"):
        parse_config({"paths": {"alowed_roots": ["."]}})


def test_an_unknown_section_fails_naming_it() -> None:
    with pytest.raises(ConfigError, match="pathz: unknown key"):
        parse_config({"pathz": {}})


@pytest.mark.parametrize(
    ("data", "where"),
    [
        ({"limits": {"max_read_bytes": 0}}, r"limits\.max_read_bytes"),
        ({"limits": {"read_max_lines": "many"}}, r"limits\.read_max_lines"),
        ({"server": {"transport": "websocket"}}, r"server\.transport"),
        (
            {"exec": {"timeout_seconds": 700, "max_timeout_seconds": 600}},
            r"exec: .*exceeds max_timeout_seconds",
        ),
        ({"exec": {"blocked_commands": ["rm -rf"]}}, r"exec\.blocked_commands"),
        ({"paths": {"allowed_roots": [""]}}, r"paths\.allowed_roots"),
    ],
)
def test_a_bad_value_fails_naming_the_key_and_the_reason(data: dict[str, Any], where: str) -> None:
    with pytest.raises(ConfigError, match=where):
        parse_config(data)


def test_relative_roots_in_a_file_are_taken_against_the_file_directory(tmp_path: Path) -> None:
    (tmp_path / "project").mkdir()
    config_file = tmp_path / "conf" / "c.toml"
    config_file.parent.mkdir()
    config_file.write_text('[paths]\nallowed_roots = ["../project"]\n', encoding="utf-8")
    config = load_config(config_file)
    assert Path(config.paths.allowed_roots[0]).resolve() == tmp_path / "project"


def test_a_profile_overrides_policy_keys_and_keeps_the_rest_of_the_servers_config() -> None:
    config = parse_config(
        {
            "exec": {"sandbox": "off", "timeout_seconds": 30, "allowed_commands": ["git"]},
            "limits": {"read_max_lines": 500},
            "profiles": {
                "dev": {
                    "exec": {"sandbox": {"network": True}, "allowed_commands": ["make"]},
                    "web": {"allowed_hosts": ["docs.python.org"]},
                },
                "plain": {"enabled": ["fs"]},
            },
        }
    )
    dev = config.for_profile("dev")
    assert dev.exec.sandbox.mode == "off" and dev.exec.sandbox.network  # tables merge key by key
    assert dev.exec.allowed_commands == ["make"]  # lists are replaced, not appended to
    assert dev.exec.timeout_seconds == 30 and dev.limits.read_max_lines == 500  # inherited
    assert dev.web.allowed_hosts == ["docs.python.org"] and config.web.allowed_hosts == []
    assert config.for_profile("plain") is config


def test_a_profiles_sandbox_shorthand_sets_only_the_mode_and_new_roots_reset_the_base_directory() -> None:
    config = parse_config(
        {
            "paths": {"allowed_roots": ["/srv/a"], "work_base_dir": "/srv/a/sub"},
            "exec": {"sandbox": {"protected_paths": ["secrets"], "hide_paths": ["/opt/keys"]}},
            "profiles": {"p": {"exec": {"sandbox": "off"}, "paths": {"allowed_roots": ["/srv/b"]}}},
        }
    )
    p = config.for_profile("p")
    assert p.exec.sandbox.mode == "off"
    assert p.paths.protected_paths == ["secrets"] and p.exec.sandbox.hide_paths == ["/opt/keys"]
    assert p.paths.allowed_roots == ["/srv/b"] and p.paths.work_base_dir is None


@pytest.mark.parametrize("key", ["protected_paths", "unprotected_paths"])
def test_protected_paths_live_in_paths_and_the_old_sandbox_keys_still_work(key: str) -> None:
    new = parse_config({"paths": {key: [".envrc"]}})
    old = parse_config({"exec": {"sandbox": {key: [".envrc"], "network": True}}})
    assert getattr(new.paths, key) == getattr(old.paths, key) == [".envrc"]
    assert old.exec.sandbox.network, "the other sandbox keys stay where they are"
    profile = parse_config({"profiles": {"p": {"exec": {"sandbox": {key: ["x"]}}}}}).for_profile("p")
    assert getattr(profile.paths, key) == ["x"]


@pytest.mark.parametrize("where", [(), ("profiles", "p")])
def test_setting_a_protected_key_in_both_places_is_an_error_naming_both(where: tuple[str, ...]) -> None:
    table: dict[str, Any] = {
        "paths": {"protected_paths": ["a"]},
        "exec": {"sandbox": {"protected_paths": ["b"]}},
    }
    for name in reversed(where):
        table = {name: table}
    with pytest.raises(
        ConfigError, match=r"exec\.sandbox\.protected_paths is the old name of paths\.protected_paths"
    ):
        parse_config(table)


@pytest.mark.parametrize(
    ("profile", "where"),
    [
        ({"exec": {"timout_seconds": 5}}, r"profiles\.x\.exec\.timout_seconds: unknown key"),
        ({"paths": {"allowed_roots": [""]}}, r"profiles\.x\.paths\.allowed_roots"),
        ({"limits": {"read_max_lines": 0}}, r"profiles\.x\.limits\.read_max_lines"),
        ({"exec": {"timeout_seconds": 900}}, r"profiles\.x\.exec: .*exceeds max_timeout_seconds"),
        ({"server": {"port": 1}}, r"profiles\.x\.server: unknown key"),
        ({"audit": {"enabled": False}}, r"profiles\.x\.audit: unknown key"),
    ],
)
def test_a_bad_profile_override_fails_at_load_naming_its_key_path(
    profile: dict[str, Any], where: str
) -> None:
    with pytest.raises(ConfigError, match=where):
        parse_config({"profiles": {"x": profile}})


def test_a_profiles_relative_roots_are_taken_against_the_file_directory(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    config_file = tmp_path / "conf" / "c.toml"
    config_file.parent.mkdir()
    config_file.write_text('[profiles.docs.paths]\nallowed_roots = ["../docs"]\n', encoding="utf-8")
    docs = load_config(config_file).for_profile("docs")
    assert Path(docs.paths.allowed_roots[0]).resolve() == tmp_path / "docs"


def test_invalid_toml_and_a_missing_file_are_config_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[paths\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(bad)
    with pytest.raises(ConfigError, match="not found"):
        load_config(tmp_path / "missing.toml")


def _keys(model: type[BaseModel], prefix: str = "") -> set[str]:
    keys: set[str] = set()
    for name, field in model.model_fields.items():
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            keys |= _keys(annotation, f"{prefix}{name}.")
        else:
            keys.add(prefix + name)
    return keys


def _flatten(table: dict[str, Any], prefix: str = "") -> set[str]:
    keys: set[str] = set()
    for key, value in table.items():
        nested = isinstance(value, dict) and value  # an empty inline table is a key of its own
        keys |= _flatten(value, f"{prefix}{key}.") if nested else {prefix + key}
    return keys


EXAMPLE = REPO / "src" / "mcp_localtools" / "config.example.toml"  # package data, shipped in the wheel


def test_the_example_config_sets_every_key_and_loads() -> None:
    example = EXAMPLE
    with example.open("rb") as handle:
        data = tomllib.load(handle)
    assert _flatten(data) == _keys(Config)
    assert load_config(example).exec.scripts.allowed_extensions


def test_every_key_of_the_example_has_a_comment() -> None:
    lines = EXAMPLE.read_text(encoding="utf-8").splitlines()
    for line in lines:
        if "=" in line and not line.lstrip().startswith("#"):
            assert "#" in line, f"no comment on: {line}"


def test_the_example_at_the_top_of_the_repository_is_the_packaged_one() -> None:
    assert (REPO / "config.example.toml").read_bytes() == EXAMPLE.read_bytes(), (
        "config.example.toml is a copy of src/mcp_localtools/config.example.toml: copy it over"
    )


def test_the_example_says_what_a_relative_root_means() -> None:
    text = EXAMPLE.read_text(encoding="utf-8")
    root_comment = text.split("allowed_roots =", 1)[1].split("\nwork_base_dir", 1)[0]
    assert "this file's folder" in root_comment


def test_a_server_total_of_processes_below_one_sandboxs_limit_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"exec\.sandbox.*total_processes \(1000\) is below max_processes"):
        parse_config({"exec": {"sandbox": {"max_processes": 2000, "total_processes": 1000}}})
