"""The code tools' heavy libraries load on first use, not at import or when a registry is built."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HEAVY = ("tree_sitter", "wordllama", "numpy", "Stemmer", "tokenizers", "rapidfuzz")

PROBE = """
import sys
import mcp_localtools
from mcp_localtools import Config, build_registry
registry = build_registry(Config.model_validate({"paths": {"allowed_roots": [sys.argv[1]]}}))
assert "semanticsearch" in registry.names()
heavy = sorted(name for name in sys.modules if name.split(".")[0] in sys.argv[2:])
print(",".join(heavy))
"""


def test_import_and_registry_load_no_grammar_model_or_numpy(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(tmp_path), *HEAVY],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    assert done.stdout.strip() == "", done.stdout
