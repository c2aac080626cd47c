"""Markers by cause, given by where a test lives, so that a developer can leave out what is slow
for a known reason (``-m 'not server_process and not sandbox and not memory and not fuzz'``) while
CI runs everything. A pattern is matched against the test's node id (``fnmatch``); a module's
pattern covers all its tests. Kept here rather than in each module so the list is read at a
glance and a module's own markers (anyio, parametrize) stay its own.

``memory`` and ``timing`` tests also join one xdist group (``heavy``): pytest-xdist
(``--dist loadgroup``) runs a group's tests one after another on one worker, so no memory bound is
measured beside another memory test and no timing is taken beside a memory test.
"""

from __future__ import annotations

from fnmatch import fnmatchcase

import pytest

# What each marker means; pyproject.toml registers the same names (--strict-markers).
MEANINGS = {
    "server_process": "starts the installed server (or the CLI) as a subprocess",
    "sandbox": "runs commands in the real sandbox (bubblewrap or Landlock)",
    "memory": "measures peak memory of a child process, or builds large data to bound it",
    "fuzz": "generates many inputs (hypothesis, protocol fuzzing)",
    "timing": "compares run times (a ratio or a throughput printed for a person)",
}

PATTERNS: dict[str, tuple[str, ...]] = {
    "server_process": (
        "tests/codeintel/test_index.py::*",
        "tests/server/test_roots.py::*",
        "tests/server/test_toolsets.py::*",
        "tests/test_approval.py::*",
        "tests/test_audit.py::*",
        "tests/test_audit_promise.py::*",
        "tests/test_bundle.py::*",
        "tests/test_checks.py::*",
        "tests/test_cli.py::test_the_roots_come_from_mcp_localtools_roots_*",
        "tests/test_default_root.py::*",
        "tests/test_fuzz_protocol.py::*",
        "tests/test_http_edge.py::*",
        "tests/test_protocol_stdio.py::*",
        "tests/test_server.py::*",
        "tests/test_startcache.py::*",
        "tests/test_startup_line.py::*",
        "tests/test_stdio.py::*",
        "tests/test_transports.py::*",
        "tests/tools/exec/test_sandbox.py::*",
        "tests/tools/exec/test_sandbox_escapes.py::*",
        "tests/tools/exec/test_startprocess.py::*",
        "tests/tools/exec/test_stdio.py::*",
        "tests/tools/fs/test_deletefile.py::*",
        "tests/tools/image/test_readimage.py::*",
    ),
    "sandbox": (
        "tests/sandbox/*",
        "tests/tools/exec/*",
        "tests/processes/test_supervised.py::*",
    ),
    "memory": (
        "tests/tools/fs/test_search_memory.py::*",
        "tests/tools/fs/test_listing_memory.py::*",
        "tests/tools/web/test_httpget.py::test_a_decompression_bomb_costs_no_more_than_max_bytes*",
        "tests/parsers/test_runner.py::test_a_parse_needing_more_memory_than_the_limit_is_a_clear_error*",
        "tests/test_stdio.py::test_a_200_mib_line_is_refused_unbuffered*",
        "tests/test_stdio.py::test_a_configured_line_limit_holds*",
        "tests/sandbox/test_session.py::test_a_memory_hog_is_stopped*",
        "tests/sandbox/test_session.py::test_a_shared_mapping_past_the_memory_limit*",
        "tests/sandbox/test_connection.py::test_a_single_two_gigabyte_line*",
    ),
    "fuzz": (
        "tests/test_fuzz_protocol.py::*",
        "tests/tools/text/test_properties.py::*",
    ),
    "timing": (
        "tests/tools/text/test_deletetextlines.py::*_takes_time_linear_in_their_number*",
        "tests/tools/text/test_match.py::*_takes_time_linear_in_their_number*",
        "tests/tools/text/test_replacetextlines.py::*_takes_time_linear_in_their_number*",
        "tests/policy/test_execution.py::*_takes_time_linear_in_its_length*",
        "tests/test_approval.py::*_takes_time_linear_in_the_commands_length*",
    ),
}

HEAVY_GROUP = "heavy"

# Modules whose tests share a server process (a module-scoped fixture): one xdist group each, so
# that one worker starts it once per parameter instead of each worker once per run of tests.
SHARED_SERVER_GROUPS = {
    "tests/test_transports.py::*": "transports",
    "tests/test_http_edge.py::*": "http_edge",
    "tests/test_stdio.py::test_a_line_that_is_no_json_rpc_request_gets_a_json_rpc_error*": "stdio",
}


def mark(items: list[pytest.Item]) -> None:
    """Add the markers of ``PATTERNS`` to each collected item (and the xdist group ``heavy`` to
    the memory and timing tests). Returns nothing; changes the items in place."""
    for item in items:
        names = [name for name, patterns in PATTERNS.items() if _matches(item.nodeid, patterns)]
        for name in names:
            item.add_marker(getattr(pytest.mark, name))
        if {"memory", "timing"} & {*names, *(m.name for m in item.iter_markers())}:
            item.add_marker(pytest.mark.xdist_group(HEAVY_GROUP))
        else:
            for pattern, group in SHARED_SERVER_GROUPS.items():
                if fnmatchcase(item.nodeid, pattern):
                    item.add_marker(pytest.mark.xdist_group(group))


def _matches(nodeid: str, patterns: tuple[str, ...]) -> bool:
    return any(fnmatchcase(nodeid, pattern) for pattern in patterns)
