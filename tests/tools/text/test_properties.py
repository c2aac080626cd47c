"""Property-based tests (hypothesis) over random files with mixed content, LF or CRLF endings,
with or without a BOM and a final newline: an edit changes exactly its target span, a refused
edit changes nothing, CRLF stays CRLF, and the BOM and the final-newline state survive every tool.

The tool bodies are called directly (the plain functions the registry runs); the protocol path is
covered by the other tests. Examples are bounded and there is no deadline, so a loaded CI
machine cannot make them flaky.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_localtools.config import LimitsConfig
from mcp_localtools.errors import AmbiguousMatch, NoMatch, ToolError
from mcp_localtools.files.locks import FileLocks
from mcp_localtools.policy.paths import PathPolicy
from mcp_localtools.results import ToolResult
from mcp_localtools.tools.text.deletetextlines import DeleteTextLinesArgs, delete_text_lines
from mcp_localtools.tools.text.editfile import EditFileArgs, edit_file
from mcp_localtools.tools.text.inserttextlines import InsertTextLinesArgs, insert_text_lines
from mcp_localtools.tools.text.replacetextlines import ReplaceTextLinesArgs, replace_text_lines

BOM = "\ufeff"
SETTINGS = settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None
)

# Mixed content: ASCII, tabs and spaces, other whitespace, accents, CJK, emoji; never a line
# break (those come from the file's own newline) and never U+FEFF (the BOM is a flag).
CHARS = st.sampled_from([*"ab xyz\t=(){}.;#-", "é", "中", "😀", "\x0b", "\u00a0", "\u2028", "\x00"])
LINE = st.text(CHARS, max_size=12)
POOL = ["x = 1", "", "  x = 1", "}", "end"]  # repeated lines, so some blocks are ambiguous


@dataclass(frozen=True)
class File:
    lines: list[str]
    newline: str
    bom: bool
    final_newline: bool

    @property
    def body(self) -> str:
        text = self.newline.join(self.lines)
        return text + self.newline if self.lines and self.final_newline else text

    @property
    def data(self) -> bytes:
        return ((BOM if self.bom else "") + self.body).encode("utf-8")


@st.composite
def files(draw: st.DrawFn) -> File:
    lines = draw(st.lists(st.one_of(LINE, st.sampled_from(POOL)), max_size=14))
    final = draw(st.booleans())
    if lines and not final and lines[-1] == "":
        final = True  # an empty last line without a newline is no line at all
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    if len(lines) - (0 if final else 1) <= 0:
        newline = "\n"  # no line break at all: nothing says CRLF, and added lines get LF
    return File(lines, newline, draw(st.booleans()), final)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, PathPolicy]:
    root = tmp_path_factory.mktemp("properties")
    return root, PathPolicy.create([root])


def run(
    workspace: tuple[Path, PathPolicy], file: File, tool: Any, args: Any
) -> tuple[ToolResult | None, bytes]:
    root, paths = workspace
    target = root / "f.txt"
    target.write_bytes(file.data)
    try:
        result: ToolResult | None = tool(args, paths=paths, limits=LimitsConfig(), locks=FileLocks())
    except ToolError:
        result = None
    return result, target.read_bytes()


def check_invariants(file: File, after: bytes, *, last_line_empty: bool = False) -> None:
    """CRLF stays CRLF (and LF stays LF), the BOM survives, the final-newline state survives.

    A file without a final newline whose last line became empty necessarily ends with the line
    break before that line (``last_line_empty``): then only a file with one is checked.
    """
    assert after.startswith(BOM.encode()) == file.bom
    body = after[3:] if file.bom else after
    if file.newline == "\r\n":
        assert body.count(b"\n") == body.count(b"\r\n")
    else:
        assert b"\r" not in body
    if body and file.final_newline:
        assert body.endswith(b"\n")
    elif body and not last_line_empty:
        assert not body.endswith(b"\n")


def occurrences(text: str, needle: str) -> int:
    count, at = 0, text.find(needle)
    while at != -1:
        if not (
            text[at - 1 : at + 1] == "\r\n" or text[at + len(needle) - 1 : at + len(needle) + 1] == "\r\n"
        ):
            count += 1
        at = text.find(needle, at + 1)
    return count


@SETTINGS
@given(
    file=files(),
    data=st.data(),
    new_lines=st.lists(LINE, max_size=3),
    sent_newline=st.sampled_from(["\n", "\r\n"]),
)
def test_editfile_changes_exactly_the_target_span(
    workspace: tuple[Path, PathPolicy],
    file: File,
    data: st.DataObject,
    new_lines: list[str],
    sent_newline: str,
) -> None:
    body = file.body
    if len(body) < 2:
        return
    start = data.draw(st.integers(0, len(body) - 2))
    end = data.draw(st.integers(start + 1, len(body) - 1))  # never the very end: see the final newline test
    if body[start - 1 : start + 1] == "\r\n" or body[end - 1 : end + 1] == "\r\n":
        return  # a span that cuts a CRLF in two is not an exact match (tested in test_match.py)
    old, new = body[start:end], sent_newline.join(new_lines)
    args = EditFileArgs.model_validate({"path": "f.txt", "edits": [{"oldText": old, "newText": new}]})
    result, after = run(workspace, file, edit_file, args)
    if occurrences(body, old) == 1:
        assert result is not None
        expected = body[:start] + new.replace(sent_newline, file.newline) + body[end:]
        assert after == ((BOM if file.bom else "") + expected).encode("utf-8")
        check_invariants(file, after)
    else:
        assert result is None and after == file.data


@SETTINGS
@given(
    file=files(),
    old=st.lists(CHARS | st.sampled_from(["\n", "\r\n"]), min_size=1, max_size=8).map("".join),
    new=LINE,
)
def test_any_editfile_call_either_keeps_the_invariants_or_changes_nothing(
    workspace: tuple[Path, PathPolicy], file: File, old: str, new: str
) -> None:
    args = EditFileArgs.model_validate({"path": "f.txt", "edits": [{"oldText": old, "newText": new}]})
    result, after = run(workspace, file, edit_file, args)
    if result is None:
        assert after == file.data
    else:  # which rung matched is not known here: the last line may have become empty
        check_invariants(file, after, last_line_empty=not file.final_newline)


@SETTINGS
@given(file=files(), data=st.data(), new_lines=st.lists(LINE, min_size=1, max_size=3))
def test_inserted_lines_land_where_asked_and_nothing_else_moves(
    workspace: tuple[Path, PathPolicy], file: File, data: st.DataObject, new_lines: list[str]
) -> None:
    at = data.draw(st.integers(1, len(file.lines) + 1))
    args = InsertTextLinesArgs.model_validate({"path": "f.txt", "lineNumber": at, "linesToInsert": new_lines})
    result, after = run(workspace, file, insert_text_lines, args)
    assert result is not None
    lines = [*file.lines[: at - 1], *new_lines, *file.lines[at - 1 :]]
    expected = File(lines, file.newline, file.bom, file.final_newline and bool(file.lines))
    assert after == expected.data
    check_invariants(expected, after, last_line_empty=lines[-1] == "")


@SETTINGS
@given(file=files(), data=st.data(), replacement=st.lists(LINE, min_size=1, max_size=3), delete=st.booleans())
def test_block_edits_change_exactly_the_unique_block_or_nothing(
    workspace: tuple[Path, PathPolicy], file: File, data: st.DataObject, replacement: list[str], delete: bool
) -> None:
    if not file.lines:
        return
    start = data.draw(st.integers(0, len(file.lines) - 1))
    stop = data.draw(st.integers(start + 1, min(len(file.lines), start + 3)))
    block = file.lines[start:stop]
    if delete:
        args: Any = DeleteTextLinesArgs.model_validate({"path": "f.txt", "matchLines": block})
        tool: Any = delete_text_lines
        new_block: list[str] = []
    else:
        args = ReplaceTextLinesArgs.model_validate(
            {"path": "f.txt", "matchLines": block, "replaceWithLines": replacement}
        )
        tool, new_block = replace_text_lines, replacement
    size = len(block)
    trimmed = [line.strip() for line in file.lines]
    starts = [
        i for i in range(len(file.lines) - size + 1) if trimmed[i : i + size] == [b.strip() for b in block]
    ]
    result, after = run(workspace, file, tool, args)
    if starts != [start]:
        assert result is None and after == file.data
        return
    assert result is not None
    lines = [*file.lines[:start], *new_block, *file.lines[stop:]]
    assert after == File(lines, file.newline, file.bom, file.final_newline).data
    check_invariants(file, after, last_line_empty=bool(lines) and lines[-1] == "")


@SETTINGS
@given(file=files(), data=st.data(), new_lines=st.lists(LINE, max_size=3), trailing=st.booleans())
def test_an_edit_at_the_end_of_the_file_keeps_its_final_newline_state(
    workspace: tuple[Path, PathPolicy], file: File, data: st.DataObject, new_lines: list[str], trailing: bool
) -> None:
    body = file.body
    if not body:
        return
    start = data.draw(st.integers(0, len(body) - 1))
    if body[start - 1 : start + 1] == "\r\n" or occurrences(body, body[start:]) != 1:
        return
    new = "\n".join(new_lines) + ("\n" if trailing else "")
    args = EditFileArgs.model_validate(
        {"path": "f.txt", "edits": [{"oldText": body[start:], "newText": new}]}
    )
    result, after = run(workspace, file, edit_file, args)
    assert result is not None
    expected = body[:start] + new.replace("\n", file.newline)
    if file.final_newline and expected and not expected.endswith("\n"):
        expected += file.newline
    elif not file.final_newline and expected.endswith("\n"):
        expected = expected.removesuffix(file.newline)
    assert after == ((BOM if file.bom else "") + expected).encode("utf-8")
    check_invariants(file, after, last_line_empty=expected.endswith("\n"))


@SETTINGS
@given(file=files(), old=LINE, new=LINE)
def test_a_refused_edit_changes_no_byte(
    workspace: tuple[Path, PathPolicy], file: File, old: str, new: str
) -> None:
    missing = "\x01" + old + "\x01"  # never in the file, not even trimmed
    cases: list[tuple[Any, Any]] = [
        (
            edit_file,
            EditFileArgs.model_validate({"path": "f.txt", "edits": [{"oldText": missing, "newText": new}]}),
        ),
        (
            replace_text_lines,
            ReplaceTextLinesArgs.model_validate(
                {"path": "f.txt", "matchLines": [missing], "replaceWithLines": [new]}
            ),
        ),
        (delete_text_lines, DeleteTextLinesArgs.model_validate({"path": "f.txt", "matchLines": [missing]})),
    ]
    for tool, args in cases:
        root, paths = workspace
        (root / "f.txt").write_bytes(file.data)
        with pytest.raises((NoMatch, AmbiguousMatch)):
            tool(args, paths=paths, limits=LimitsConfig(), locks=FileLocks())
        assert (root / "f.txt").read_bytes() == file.data
