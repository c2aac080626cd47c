"""The whole config (``Config``) and how it is read: ``parse_config`` (a parsed TOML document,
every problem reported at once with its key path, relative paths anchored at the file's folder)
and ``load_config`` (a TOML file)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import (
    ValidationError,
    model_validator,
)

from mcp_localtools.config.base import Section
from mcp_localtools.config.commands import ExecConfig
from mcp_localtools.config.files import IndexConfig, LimitsConfig, PathsConfig, ToolsConfig
from mcp_localtools.config.profiles import ProfileConfig, merged, move_to_paths
from mcp_localtools.config.serving import ApprovalConfig, AuditConfig, ServerConfig, WebConfig
from mcp_localtools.errors import ConfigError


class Config(Section):
    """The whole configuration file. ``Config()`` is the embedded default: the current
    directory as the only root, every tool enabled."""

    paths: PathsConfig = PathsConfig()
    tools: ToolsConfig = ToolsConfig()
    limits: LimitsConfig = LimitsConfig()
    exec: ExecConfig = ExecConfig()
    server: ServerConfig = ServerConfig()
    approval: ApprovalConfig = ApprovalConfig()
    audit: AuditConfig = AuditConfig()
    web: WebConfig = WebConfig()
    index: IndexConfig = IndexConfig()
    profiles: dict[str, ProfileConfig] = {}

    @model_validator(mode="before")
    @classmethod
    def _old_names(cls, data: Any) -> Any:
        return move_to_paths(data)

    def with_roots(self, roots: list[str]) -> Config:
        """This config with ``roots`` as ``[paths] allowed_roots`` and the first of them as the
        base directory (a session's roots, ``server/roots.py``)."""
        paths = self.paths.model_copy(update={"allowed_roots": list(roots), "work_base_dir": None})
        return self.model_copy(update={"paths": paths})

    def for_profile(self, name: str) -> Config:
        """The config a client of profile ``name`` works under: this one with the profile's
        ``paths``/``exec``/``web``/``limits`` keys in place of the server's (tables merged key by
        key, lists and other values replaced; ``sandbox = "off"`` sets only the sandbox's mode, and
        ``allowed_roots`` without a ``work_base_dir`` make the first of them the base directory).
        A profile without overrides gets this config.

        Raises:
            KeyError: no such profile.
            ConfigError: an override is an unknown key or a bad value; the message names its key
                path (``profiles.dev.exec.timeout_seconds: ...``).
        """
        overrides = self.profiles[name].overrides
        if not overrides:
            return self
        update: dict[str, Any] = {}
        problems: list[str] = []
        for section, table in overrides.items():
            if section == "exec" and isinstance(table.get("sandbox"), str):
                # the ``sandbox = "off"`` shorthand sets the mode; the server's other sandbox keys
                # (protected, hidden, readable and writable paths) stay
                table = {**table, "sandbox": {"mode": table["sandbox"]}}
            if section == "paths" and "allowed_roots" in table and "work_base_dir" not in table:
                table = {**table, "work_base_dir": None}  # the server's may lie outside these roots
            model = type(getattr(self, section))
            base = getattr(self, section).model_dump()
            try:
                update[section] = model.model_validate(merged(base, table))
            except ValidationError as exc:
                for err in exc.errors():
                    reason = "unknown key" if err["type"] == "extra_forbidden" else err["msg"]
                    where = _key_path(("profiles", name, section, *err["loc"]))
                    problems.append(f"{where}: {reason}")
        if problems:
            raise ConfigError("; ".join(problems))
        return self.model_copy(update=update)


def _key_path(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def parse_config(data: dict[str, Any], *, source: str = "config", base_dir: Path | None = None) -> Config:
    """Validate a decoded TOML document into a ``Config``.

    Args:
        data: the decoded TOML table.
        source: how to name the document in error messages (usually its file path).
        base_dir: directory that relative ``[paths]`` values, ``auth_token_file``, ``[audit] path``
            and ``[index] cache_dir`` are resolved
            against (the config file's directory); ``None`` leaves them relative (to the current
            directory).

    Raises:
        ConfigError: an unknown key or a bad value; the message lists every problem with its
            key path, e.g. ``config.toml: paths.alowed_roots: unknown key``.
    """
    try:
        config = Config.model_validate(data)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            reason = "unknown key" if err["type"] == "extra_forbidden" else err["msg"]
            problems.append(f"{_key_path(tuple(err['loc']))}: {reason}")
        raise ConfigError(f"{source}: " + "; ".join(problems)) from exc
    if base_dir is None:
        _check_profiles(config, source)
        return config
    paths = config.paths
    anchored = paths.model_copy(update=_anchored_paths(paths.model_dump(), base_dir))
    audit = config.audit
    if audit.path:
        audit = audit.model_copy(update={"path": str(base_dir / Path(audit.path).expanduser())})
    index = config.index
    if index.cache_dir:
        index = index.model_copy(update={"cache_dir": str(base_dir / Path(index.cache_dir).expanduser())})
    server = config.server
    if server.auth_token_file:
        server = server.model_copy(
            update={"auth_token_file": str(base_dir / Path(server.auth_token_file).expanduser())}
        )
    profiles = {
        name: profile.model_copy(
            update={
                "token_file": (
                    str(base_dir / Path(profile.token_file).expanduser()) if profile.token_file else ""
                ),
                "paths": _anchored_paths(profile.paths, base_dir),
            }
        )
        for name, profile in config.profiles.items()
    }
    config = config.model_copy(
        update={"paths": anchored, "server": server, "audit": audit, "index": index, "profiles": profiles}
    )
    _check_profiles(config, source)
    return config


def _anchored_paths(paths: dict[str, Any], base_dir: Path) -> dict[str, Any]:
    """The path values of a raw ``[paths]`` table resolved against ``base_dir`` (values that are
    not of the expected type are left for validation to report)."""
    out = dict(paths)
    roots = out.get("allowed_roots")
    if isinstance(roots, list) and all(isinstance(root, str) for root in roots):
        out["allowed_roots"] = [str(base_dir / Path(root).expanduser()) for root in roots]
    if isinstance(out.get("work_base_dir"), str):
        out["work_base_dir"] = str(base_dir / Path(out["work_base_dir"]).expanduser())
    return out


def _check_profiles(config: Config, source: str) -> None:
    """Validate every profile's overrides now, so a bad one stops the server at start-up."""
    for name in config.profiles:
        try:
            config.for_profile(name)
        except ConfigError as exc:
            raise ConfigError(f"{source}: {exc.message}") from exc


def load_config(path: str | Path) -> Config:
    """Read and validate a TOML config file.

    Relative paths in ``[paths]`` are resolved against the file's directory, so a config works
    the same whatever directory the client starts the server in.

    Raises:
        ConfigError: the file cannot be read, is not valid TOML, or fails validation.
    """
    import tomllib  # here: a server given only --root never parses TOML

    file = Path(path).expanduser()
    try:
        with file.open("rb") as handle:
            data = tomllib.load(handle)
    except FileNotFoundError as exc:
        raise ConfigError(f"config file not found: {file}") from exc
    except OSError as exc:
        raise ConfigError(f"cannot read config file {file}: {exc.strerror or exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{file}: not valid TOML: {exc}") from exc
    return parse_config(data, source=str(file), base_dir=file.resolve().parent)
