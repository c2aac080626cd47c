"""The public API of ``mcp_localtools`` is what ``__all__`` names, and nothing changes it by accident."""

from __future__ import annotations

import mcp_localtools

PUBLIC_API = [
    "Config",
    "ConfigError",
    "ConfigProblems",
    "LocalToolsError",
    "OutsideAllowedRoots",
    "PathPolicy",
    "PolicyViolation",
    "Problem",
    "Registry",
    "ResolvedPath",
    "SpecError",
    "ToolAnnotations",
    "ToolError",
    "ToolResult",
    "ToolSpec",
    "UnknownToolError",
    "Workspace",
    "__version__",
    "build_registry",
    "build_server",
    "create_server",
    "load_config",
    "parse_config",
]


def test_all_names_exactly_the_public_api() -> None:
    assert sorted(mcp_localtools.__all__) == PUBLIC_API


def test_every_public_name_resolves() -> None:
    for name in PUBLIC_API:
        assert getattr(mcp_localtools, name) is not None, name


def test_importing_the_package_does_not_import_the_mcp_sdk() -> None:
    import subprocess
    import sys

    probe = "import sys, mcp_localtools; print(any(m == 'mcp' or m.startswith('mcp.') for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
