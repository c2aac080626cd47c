"""A file's tags, imports and locals queries run as one query (one walk of its tree, issue 37
item 1): what they find is what the three queries find apart (``languages._apart``, the
fallback when they do not compile together), for every language."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from mcp_localtools.codeintel.languages import Grammars, _apart, language_of
from mcp_localtools.codeintel.tags import extract

FIXTURES = Path(__file__).resolve().parent.parent / "tools" / "code" / "fixtures"
MORE = {
    "scopes.js": (
        "import api from './api';\nimport { get as fetch } from './http';\nconst util = require('./util');\n"
        "function f(list) {\n  for (const x of list) { api.get(x); }\n  var y = util.make();\n"
        "  try { fetch(y); } catch (e) { e(); }\n}\n"
    ),
    "scopes.py": (
        "from pkg import helper as h\nimport os.path\n\n\ndef f(value):\n    global g\n"
        "    total = h(value)\n    return os.path.join(total)\n"
    ),
}


def test_the_one_query_finds_what_the_three_find_apart(tmp_path: Path) -> None:
    for name, text in MORE.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    grammars = Grammars()
    files = sorted([*FIXTURES.iterdir(), *tmp_path.iterdir()])
    checked = set()
    for path in files:
        info = language_of(path.name)
        grammar = grammars.get(info) if info is not None else None
        if grammar is None:
            continue
        [(whole, imports_from, locals_from)] = grammar.analysis  # one query
        # The fallback of a grammar whose queries do not compile together, with the real ones.
        [tags] = grammar.queries
        separate = dataclasses.replace(grammar, analysis=_apart(tags, grammar.imports, grammar.locals))
        assert len(separate.analysis) == 1 + (grammar.imports is not None) + (grammar.locals is not None)
        source = path.read_bytes()
        assert extract(grammar, source) == extract(separate, source), path.name
        assert imports_from <= locals_from <= whole.pattern_count
        checked.add(grammar.info.name)
    assert {"python", "javascript", "typescript", "tsx", "go", "rust", "java"} <= checked
