"""semanticsearch tells code from prose (issue 37, item 2): for a question about behaviour the
code ranks above the changelog, the guide and the tests that talk about it, unless they are asked for."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.helpers import config_for, connect, text_of

pytestmark = pytest.mark.anyio

FILES = {
    "CHANGELOG.md": "# Changes\n\n## 2.0\n\n- Slow down outgoing requests when the server "
    "answers 429: the client waits and retries the request later.\n- Faster startup.\n",
    "docs/guide.rst": "Slowing down\n============\n\nWhen the server answers 429 the client slows down "
    "its outgoing requests, waits and retries the request later.\n\nSee ``backoff_delay``.\n",
    "tests/test_client.py": "def test_slows_down_outgoing_requests_on_429(client):\n"
    "    client.server_answers(429)\n    assert client.retries_request_later()\n",
    "client/backoff.py": '''def backoff_delay(attempt, retry_after):
    """Seconds to wait before sending the request again after a 429 answer."""
    return max(retry_after, 2 ** attempt)
''',
}


async def _results(tmp_path: Path, query: str) -> tuple[list[dict[str, Any]], str]:
    """semanticsearch's results for ``query`` over ``tmp_path``, and the text the model reads."""
    async with connect(config_for(tmp_path)) as client:
        result = await client.call_tool("semanticsearch", {"query": query})
    assert not result.is_error and result.structured_content is not None, text_of(result)
    return result.structured_content["results"], text_of(result)


async def _top(tmp_path: Path, query: str) -> str:
    for name, text in FILES.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    results, _ = await _results(tmp_path, query)
    return str(results[0]["path"])


async def test_code_ranks_above_changelog_docs_and_tests(tmp_path: Path) -> None:
    assert (
        await _top(tmp_path, "slow down outgoing requests when the server answers 429") == "client/backoff.py"
    )


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("changelog: slow down outgoing requests on 429", "CHANGELOG.md"),
        ("test that outgoing requests slow down on 429", "tests/test_client.py"),
    ],
)
async def test_prose_and_tests_rank_first_when_asked_for(tmp_path: Path, query: str, expected: str) -> None:
    assert await _top(tmp_path, query) == expected


async def test_overloads_are_one_result(tmp_path: Path) -> None:
    (tmp_path / "window.ts").write_text(
        "/** Splits the source into windows of a fixed time span. */\n"
        "export function windowTime(span: number): Window;\n"
        "export function windowTime(span: number, every: number): Window;\n"
        "export function windowTime(span: number, every?: number): Window {\n"
        "  return new Window(span, every);\n}\n",
        encoding="utf-8",
    )
    results, _ = await _results(tmp_path, "split the source into time windows")
    assert [hit["symbol"] for hit in results].count("windowTime") == 1


async def test_the_code_ranks_above_its_declaration_file(tmp_path: Path) -> None:
    (tmp_path / "lib").mkdir()
    (tmp_path / "typings").mkdir()
    (tmp_path / "typings" / "index.d.ts").write_text(
        "export class Command {\n  /**\n   * Add a required option which must have a value after parsing.\n"
        "   */\n  requiredOption(flags: string, description?: string): this;\n}\n",
        encoding="utf-8",
    )
    (tmp_path / "lib" / "command.js").write_text(
        "class Command {\n  /**\n   * Add a required option which must have a value after parsing.\n   */\n"
        "  requiredOption(flags, description) {\n"
        "    return this._optionEx({ mandatory: true }, flags, description);\n  }\n}\n",
        encoding="utf-8",
    )
    results, text = await _results(tmp_path, "required option")
    assert results[0]["path"] == "lib/command.js", text


async def test_a_long_definition_the_query_names_in_words_ranks_above_short_ones_sharing_its_words(
    tmp_path: Path,
) -> None:
    # observeOn's chunk is long (its doc talks of other things); the short ones are all about
    # observables and schedulers. The query spells its name: "observe on" is observeOn.
    doc = "\n".join(f" * Step {i}: keep the notification's order and its delay of {i} ms." for i in range(60))
    (tmp_path / "observeOn.ts").write_text(
        f"/**\n * Re-emits every notification of the source, later, in the order it came.\n{doc}\n */\n"
        "export function observeOn(scheduler: SchedulerLike, delay = 0) {\n  return keepOrder(delay);\n}\n",
        encoding="utf-8",
    )
    for number in range(40):  # more of them than the fusion's top ranks
        (tmp_path / f"schedule{number}.ts").write_text(
            f"/** Schedules observable {number} on the scheduler. */\n"
            f"export function schedule{number}(observable: Observable, scheduler: SchedulerLike): Observable "
            "{ return new Observable(observable, scheduler); }\n",
            encoding="utf-8",
        )
    for number in range(20):  # other code: the words above are rare in the code base
        (tmp_path / f"other{number}.ts").write_text(
            f"/** Parses the header number {number}. */\nexport function parseHeader{number}(text: string) "
            "{ return text.split(':'); }\n",
            encoding="utf-8",
        )
    results, text = await _results(tmp_path, "observe on scheduler")
    assert results[0]["symbol"] == "observeOn", text
