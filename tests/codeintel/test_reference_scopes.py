"""A use of a name is kept once per line and scope: the same call in a function and in a
callback nested in it on one line are two uses, each its own symbol's."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_localtools.codeintel.languages import Grammars, language_of
from mcp_localtools.codeintel.tags import Reference, extract
from tests.helpers import callees_by_symbol

pytestmark = pytest.mark.anyio

FIXTURES = Path(__file__).resolve().parent.parent / "tools" / "code" / "fixtures"

LISTENING = """\
function start() {
  listen(function onEvent() { listen(); });
  announce(); announce();
}
listen(function again() { listen(); });
"""


def _references(name: str, text: str) -> tuple[Reference, ...]:
    language = language_of(name)
    assert language is not None
    grammar = Grammars().get(language)
    assert grammar is not None
    return extract(grammar, text.encode()).references


def test_a_call_in_a_callback_on_its_outer_calls_line_is_kept() -> None:
    references = [(r.name, r.line, r.scope) for r in _references("listening.js", LISTENING)]
    assert ("listen", 2, "start") in references and ("listen", 2, "start.onEvent") in references
    assert ("listen", 5, "") in references and ("listen", 5, "again") in references
    assert references.count(("announce", 3, "start")) == 1, references  # one per line and scope


def test_a_use_matched_by_two_patterns_is_one_reference() -> None:
    # The tags, imports and locals queries run as one: a node two patterns capture is still one
    # use, and so are the same name's uses on one line in one scope.
    grammars = Grammars()
    for path in sorted(FIXTURES.iterdir()):
        language = language_of(path.name)
        grammar = grammars.get(language) if language is not None else None
        if grammar is None:
            continue
        references = extract(grammar, path.read_bytes()).references
        keys = [(r.name, r.kind, r.line, r.scope, r.qualifier) for r in references]
        assert len(keys) == len(set(keys)), path.name


async def test_a_callbacks_callees_hold_the_call_its_outer_function_makes_too(tmp_path: Path) -> None:
    hits = await callees_by_symbol(tmp_path, "listening.js", LISTENING, "start listen on event again")
    assert hits["start.onEvent"] == ["listen"], hits
    assert hits["again"] == ["listen"], hits
    assert set(hits["start"]) == {"listen", "announce"}, hits
