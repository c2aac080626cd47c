"""What a searchfiles call needs before the engine runs (``prepare_search``): its pattern compiled
where it is used (paths in files mode, lines otherwise), its globs checked, its root opened, and the
engine's ``ContentQuery``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mcp_localtools.config import LimitsConfig
from mcp_localtools.policy.paths import PathPolicy
from mcp_localtools.search.engine import ContentQuery, EngineOutput, WalkFilters
from mcp_localtools.search.regex import ContentRegex, compile_path_regex
from mcp_localtools.tools.fs._roots import SearchRoot, check_globs, open_root

__all__ = ["Prepared", "prepare_search"]

_ENGINE_OUTPUT: dict[str, EngineOutput] = {"files": "files", "count": "count", "matches": "lines"}


@dataclass(frozen=True, slots=True)
class Prepared:
    """What a search needs before the engine runs.

    Attributes:
        root: the opened root.
        query: the content search.
        path_regex: files mode: the pattern compiled for display paths.
    """

    root: SearchRoot
    query: ContentQuery
    path_regex: Any


def prepare_search(args: Any, paths: PathPolicy, limits: LimitsConfig) -> Prepared:
    """What the search ``args`` (``SearchFilesArgs``) need before the engine runs: the pattern
    compiled where it is used, the globs checked, the root opened (blocking).

    Raises:
        InvalidArguments: the pattern or a glob is unusable.
        ToolError: the root is not a readable directory inside the roots (see ``open_root``).
    """
    mode = args.output_mode
    options = {"case_sensitive": args.case_sensitive, "fixed_strings": args.fixed_strings}
    # Either compile validates the pattern (the same bytes, the same options): files mode
    # matches paths with one, the other modes match lines in Python (excerpts, the Python engine).
    path_regex = compile_path_regex(args.pattern, **options) if mode == "files" else None
    regex = None if mode == "files" else ContentRegex(args.pattern, **options)
    filters = WalkFilters(
        include=check_globs(args.include, "include"),
        exclude=check_globs(args.exclude, "exclude"),
        respect_ignore_files=args.respect_ignore_files,
        include_hidden=args.include_hidden,
    )
    root = open_root(paths, args.root, field="root")
    query = ContentQuery(
        directory=root.real,
        pattern=args.pattern,
        case_sensitive=args.case_sensitive,
        fixed_strings=args.fixed_strings,
        filters=filters,
        max_file_size=args.max_file_size_bytes or limits.max_read_bytes,
        output="occurrences" if mode == "count" and args.count_occurrences else _ENGINE_OUTPUT[mode],
        context_lines=args.context_lines if mode == "matches" else 0,
        regex=regex,
        # No result shows more lines than maxResults, nor more than its budget holds (a shown
        # line costs at least 3 characters): the engines keep no more of any one file.
        max_lines=min(args.max_results, limits.max_result_chars // 3 + 1),
    )
    return Prepared(root, query, path_regex)
