"""The code base's own vocabulary that widens a query (codeintel/widen.py, issue 37 item 2): term
associations counted on a small real index (real files, tokenizer and FTS5 tables)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_localtools.codeintel.index import CodeIndex, IndexSettings
from mcp_localtools.codeintel.indexes import CodeIndexes
from mcp_localtools.codeintel.widen import associated, prose_terms, widened
from mcp_localtools.policy.paths import PathPolicy
from mcp_localtools.search import default_engine

pytestmark = pytest.mark.anyio

KEYBOARD = '''
def getchar(echo=False):
    """Read one keystroke from the terminal."""
    return read_raw(echo)


def getchar_windows(echo=False):
    """Read one keystroke from the Windows console."""
    return read_raw(echo)


def getchar_posix(echo=False):
    """Read one keystroke from a POSIX terminal in raw mode."""
    return read_raw(echo)


def getchar_timeout(seconds):
    """Read one keystroke, giving up after some seconds."""
    return read_raw(False)


def getchar_buffered(size):
    """Read buffered input characters."""
    return read_raw(False)


def raise_for_status(code):
    """Raise when the code says the request failed."""
    return code
'''


async def _no_report(done: float, total: float | None, message: str) -> None:
    return None


@pytest.fixture
async def index(tmp_path: Path) -> CodeIndex:
    root = tmp_path / "project"
    root.mkdir()
    (root / ".git").mkdir()
    (root / "keyboard.py").write_text(KEYBOARD, encoding="utf-8")
    filler = "".join(
        f'def job_{n}(value):\n    """Part {n} of the monthly ledger total."""\n    return value\n\n\n'
        for n in range(120)
    )  # enough chunks that the keystroke's few are rare
    (root / "ledger.py").write_text(filler, encoding="utf-8")
    indexes = CodeIndexes(PathPolicy.create([root]), IndexSettings(cache_dir=None), default_engine(), None)
    found = indexes.index_for(root)
    await indexes.ready(found, _no_report)
    return found


def _associated(index: CodeIndex, word: str) -> list[str]:
    (term,) = index.query_terms(word)
    frequency, total = index.store.frequencies([term])
    return associated(index.store, term, frequency[term], total, lambda path: set(index.query_terms(path)))


async def test_a_word_is_associated_with_the_terms_its_chunks_share(index: CodeIndex) -> None:
    found = _associated(index, "keystroke")
    assert found[0] == "getchar"  # with it in all four of its chunks, and in five in all
    assert "keyboard" not in found  # the file's path, not its words
    assert "console" not in found and "posix" not in found  # together once: noise
    assert "echo" not in found  # together three times, but in only three chunks in all


async def test_a_common_word_is_not_widened(index: CodeIndex) -> None:
    assert _associated(index, "ledger") == []  # in nearly every chunk: nothing to learn from it


async def test_a_question_is_widened_by_its_prose_words_only(index: CodeIndex) -> None:
    assert "getchar" in widened(index.store, "wait for a keystroke", index.query_terms)

    def known(candidates: list[str]) -> set[str]:
        return set(index.store.frequencies(candidates)[0]) if candidates else set()

    # "raise for status" spells a name of the index: a keyword question, left as it is.
    assert prose_terms("raise for status now", index.query_terms, known) == ["now"]
    assert prose_terms("getChar keystroke", index.query_terms, known) == ["keystrok"]
