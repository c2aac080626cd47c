"""The sections of the file and code tools: ``[paths]`` (roots, base directory, protected paths),
``[tools]`` (which tools are served, under which names), ``[limits]`` (read, write and result
budgets), ``[index]`` (the code index)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import (
    Field,
    field_validator,
    model_validator,
)

from mcp_localtools.config.base import (
    HARD_MAX_READ_BYTES,
    HARD_MAX_READ_LINES,
    HARD_MAX_RESULT_CHARS,
    HARD_MAX_WRITE_BYTES,
    MiB,
    Section,
)


class PathsConfig(Section):
    """``[paths]``: where tools may touch the filesystem."""

    allowed_roots: list[str] = ["."]
    """Existing directories; every path a tool touches must resolve inside one. Empty: the server
    has no roots of its own and works only in the folders the client sends (MCP roots)."""
    work_base_dir: str | None = None
    """Base for relative paths; default: the first root as written."""
    block_symlinks: bool = False
    """Refuse symlink components and symlink files."""
    client_roots: bool = True
    """Use the folders the client shares (MCP roots): a session works in their intersection with
    ``allowed_roots``, or in them when ``allowed_roots`` is empty. False: ``--ignore-client-roots``."""
    protected_paths: list[str] = []
    """More paths inside the roots that commands may not change and the file tools refuse
    (relative to each root, or absolute); added to ``.git/config`` and ``.git/hooks``
    (``policy/protected.py``). ``[exec.sandbox] protected_paths`` is accepted as its old name."""
    unprotected_paths: list[str] = []
    """Protected paths to lift on purpose (absolute, or relative to each root).
    ``[exec.sandbox] unprotected_paths`` is accepted as its old name."""

    @field_validator("allowed_roots")
    @classmethod
    def _no_blank_roots(cls, roots: list[str]) -> list[str]:
        for root in roots:
            if not root.strip():
                raise ValueError("a root must not be empty")
            if "\x00" in root:
                raise ValueError("a root must not contain a NUL byte")
        return roots

    @model_validator(mode="after")
    def _base_needs_a_root(self) -> PathsConfig:
        if not self.allowed_roots and self.work_base_dir is not None:
            raise ValueError("work_base_dir needs allowed_roots: with no roots there is no base directory")
        return self


class ToolsConfig(Section):
    """``[tools]``: which tools are registered."""

    enabled: list[str] = ["*"]
    """Tool or group names, globs allowed (``"fs"``, ``"text.*"``, ``"readfile"``)."""
    disabled: list[str] = []
    """Removed after ``enabled`` is applied; same syntax."""
    read_only: bool = False
    """Register only the tools whose ``readOnlyHint`` is true."""
    rename: dict[str, str] = {}
    """``[tools.rename]``: wire names for tools (``shellcommand = "bash"``); ``enabled`` and
    ``disabled`` keep using the built-in names."""
    custom: dict[str, dict[str, Any]] = {}
    """``[tools.custom.NAME]``: declared command tools and recipes (``description``,
    ``input_schema``, ``command`` or ``steps``, ...), checked when the registry is built
    (``tools/exec/_declared``)."""


class LimitsConfig(Section):
    """``[limits]``: defaults under the hard maxima."""

    max_read_bytes: Annotated[int, Field(ge=1, le=HARD_MAX_READ_BYTES)] = 16 * MiB
    max_write_bytes: Annotated[int, Field(ge=1, le=HARD_MAX_WRITE_BYTES)] = 16 * MiB
    read_max_lines: Annotated[int, Field(ge=1, le=HARD_MAX_READ_LINES)] = 2000
    max_result_chars: Annotated[int, Field(ge=1000, le=HARD_MAX_RESULT_CHARS)] = 45_000
    """One result's budget, per copy: its text items, and the compact JSON of its structured
    content, each stay within it (characters). 45,000: Claude Code forwards the JSON of
    ``structuredContent`` and shows a result inline only up to about 50,000 characters of it (past
    that the model gets a 2 KB preview and a file path)."""
    search_seconds: Annotated[float, Field(gt=0, le=3600)] = 60
    """Longest a searchfiles search runs (seconds); then it stops and answers with what
    it found so far, ``truncated`` set."""


class IndexConfig(Section):
    """``[index]``: the code index behind symbols, findsymbol, repomap and semanticsearch
    (``codeintel/``)."""

    enabled: bool = True
    """Build and use the index; off: findsymbol, repomap and semanticsearch are not served and
    symbols outlines single files only."""
    cache_dir: str = ""
    """Where the index of each project is kept (one folder per project); default
    ``$XDG_CACHE_HOME/mcp-localtools/index`` (``~/.cache/...``). Outside the roots: it is not a
    write to them, and read-only mode keeps it."""
    max_file_bytes: Annotated[int, Field(ge=1024, le=HARD_MAX_READ_BYTES)] = 1 * MiB
    """Larger files are not indexed."""
    languages: list[str] = []
    """The grammars used (python, javascript, typescript, tsx, go, rust, java, c, cpp, csharp, ruby,
    php, bash); empty: all of them. Files of other languages are indexed as text."""
    idle_seconds: Annotated[int, Field(ge=1, le=86400)] = 600
    """After this many seconds without a code tool's answer (or a build), what the indexes keep in
    memory (vectors, reference graph, the embedding model, caches) is released and the heap given
    back to the OS; the next answer loads it again (about a second on a large project)."""
