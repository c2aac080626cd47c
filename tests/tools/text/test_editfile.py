"""editfile through the SDK client: exact edits, the tolerant ladder, refusals that explain
themselves, all-or-nothing multi-edits, dryRun, expectedSha256 and byte fidelity."""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from tests.helpers import config_for, connect, error_code, text_of, wire_chars

pytestmark = pytest.mark.anyio

CODE = (
    "def total(items):\n    result = 0\n    for item in items:\n        result += item\n    return result\n"
)


async def edit(client: Client, *edits: tuple[str, str] | dict[str, Any], **arguments: Any) -> Any:
    items = [e if isinstance(e, dict) else {"oldText": e[0], "newText": e[1]} for e in edits]
    return await client.call_tool("editfile", {"path": "f.py", "edits": items, **arguments})


async def test_a_unique_exact_match_is_replaced_and_the_result_has_diff_and_sha(
    client: Client, tmp_path: Path
) -> None:
    (tmp_path / "f.py").write_text(CODE, encoding="utf-8")
    result = await edit(client, ("result += item", "result += item * 2"))
    expected = CODE.replace("result += item", "result += item * 2").encode()
    assert (tmp_path / "f.py").read_bytes() == expected
    data = result.structured_content
    assert data["changed"] and data["sha256"] == hashlib.sha256(expected).hexdigest()
    assert data["edits"] == [{"match": "exact", "replacements": 1, "lines": [{"startLine": 4, "endLine": 4}]}]
    assert "-        result += item\n+        result += item * 2" in data["diff"]
    assert "@@ -1,5 +1,5 @@" in text_of(result)


async def test_an_ambiguous_match_is_refused_listing_every_candidate(client: Client, tmp_path: Path) -> None:
    (tmp_path / "f.py").write_text(CODE, encoding="utf-8")
    result = await edit(client, ("result", "total"))
    assert error_code(result) == "ambiguous_match"
    assert "matches 3 places" in text_of(result) and "lines 2, 4, 5" in text_of(result)
    assert "expectedReplacements=3" in text_of(result)
    assert (tmp_path / "f.py").read_text(encoding="utf-8") == CODE


async def test_expected_replacements_replaces_every_match(client: Client, tmp_path: Path) -> None:
    (tmp_path / "f.py").write_text(CODE, encoding="utf-8")
    result = await edit(client, {"oldText": "result", "newText": "acc", "expectedReplacements": 3})
    assert not result.is_error and result.structured_content["edits"][0]["replacements"] == 3
    assert (tmp_path / "f.py").read_text(encoding="utf-8") == CODE.replace("result", "acc")


async def test_a_missing_text_shows_the_closest_region_with_line_numbers(
    client: Client, tmp_path: Path
) -> None:
    (tmp_path / "f.py").write_text(CODE, encoding="utf-8")
    result = await edit(client, ("for item in item:\n    result += item", "x"))
    assert error_code(result) == "no_match"
    message = text_of(result)
    assert "was not found" in message and "closest region is lines 3-4" in message
    assert "3\t    for item in items:" in message and "- for item in item:" in message
    assert (tmp_path / "f.py").read_text(encoding="utf-8") == CODE


async def test_a_whitespace_tolerant_unique_match_is_used_and_reported(
    client: Client, tmp_path: Path
) -> None:
    (tmp_path / "f.py").write_text(CODE, encoding="utf-8")
    result = await edit(
        client, ("for item in items:\n  result += item\n", "for item in items:\n        result -= item\n")
    )
    assert not result.is_error
    assert result.structured_content["edits"][0]["match"] == "whitespace"
    assert "no exact match" in text_of(result) and "check the diff" in text_of(result)
    assert (tmp_path / "f.py").read_text(encoding="utf-8") == CODE.replace(
        "    for item in items:\n        result += item\n", "for item in items:\n        result -= item\n"
    )


async def test_an_ambiguous_tolerant_match_is_refused(client: Client, tmp_path: Path) -> None:
    (tmp_path / "f.py").write_text("  x = 1\nx = 1 \n", encoding="utf-8")
    result = await edit(client, ("\tx = 1\t", "y"))
    assert error_code(result) == "ambiguous_match"
    assert "ignoring leading/trailing whitespace" in text_of(result)
    assert "lines 1, 2" in text_of(result)


async def test_multi_edits_apply_in_order_on_the_edited_text(client: Client, tmp_path: Path) -> None:
    (tmp_path / "f.py").write_text(CODE, encoding="utf-8")
    result = await edit(client, ("def total", "def sum_all"), ("def sum_all(items)", "def sum_all(values)"))
    assert not result.is_error
    assert (tmp_path / "f.py").read_text(encoding="utf-8").startswith("def sum_all(values):\n")


async def test_a_failing_third_edit_leaves_the_file_unchanged(client: Client, tmp_path: Path) -> None:
    (tmp_path / "f.py").write_text(CODE, encoding="utf-8")
    before = (tmp_path / "f.py").stat()
    result = await edit(client, ("def total", "def t"), ("return result", "return 0"), ("no such text", "x"))
    assert error_code(result) == "no_match"
    assert "edits[2].oldText was not found" in text_of(result) and "No edit was applied" in text_of(result)
    assert (tmp_path / "f.py").read_text(encoding="utf-8") == CODE
    assert (tmp_path / "f.py").stat().st_ino == before.st_ino  # not even rewritten


async def test_dry_run_returns_the_diff_and_writes_nothing(client: Client, tmp_path: Path) -> None:
    (tmp_path / "f.py").write_text(CODE, encoding="utf-8")
    result = await edit(client, ("return result", "return -result"), dryRun=True)
    data = result.structured_content
    assert data["dryRun"] and not data["changed"] and "+    return -result" in data["diff"]
    assert data["sha256"] == hashlib.sha256(CODE.encode()).hexdigest()
    assert "dry run, nothing written" in text_of(result)
    assert (tmp_path / "f.py").read_text(encoding="utf-8") == CODE
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.py"]


async def test_expected_sha256_mismatch_is_refused(client: Client, tmp_path: Path) -> None:
    (tmp_path / "f.py").write_text(CODE, encoding="utf-8")
    stale = hashlib.sha256(b"older content").hexdigest()
    result = await edit(client, ("return result", "return 0"), expectedSha256=stale)
    assert error_code(result) == "conflict" and "changed since it was read" in text_of(result)
    assert (tmp_path / "f.py").read_text(encoding="utf-8") == CODE
    fresh = hashlib.sha256(CODE.encode()).hexdigest().upper()
    assert not (await edit(client, ("return result", "return 0"), expectedSha256=fresh)).is_error


async def test_new_text_is_inserted_literally(client: Client, tmp_path: Path) -> None:
    (tmp_path / "f.py").write_text("x = 'a'\n", encoding="utf-8")
    await edit(client, ("'a'", r"r'\1 \g<0> $& $1'"))
    assert (tmp_path / "f.py").read_text(encoding="utf-8") == "x = r'\\1 \\g<0> $& $1'\n"


async def test_a_crlf_file_stays_crlf_when_the_model_sends_lf(client: Client, tmp_path: Path) -> None:
    crlf = CODE.replace("\n", "\r\n").encode()
    (tmp_path / "f.py").write_bytes(crlf)
    result = await edit(
        client, ("    for item in items:\n        result += item\n", "    result = sum(items)\n")
    )
    assert result.structured_content["edits"][0]["match"] == "lineEndings"
    assert (tmp_path / "f.py").read_bytes() == crlf.replace(
        b"    for item in items:\r\n        result += item\r\n", b"    result = sum(items)\r\n"
    )


async def test_bom_final_newline_state_and_mode_are_kept(client: Client, tmp_path: Path) -> None:
    (tmp_path / "f.py").write_bytes(b"\xef\xbb\xbfa = 1\nb = 2")
    os.chmod(tmp_path / "f.py", 0o640)
    await edit(client, ("b = 2", "b = 3\n"))
    assert (tmp_path / "f.py").read_bytes() == b"\xef\xbb\xbfa = 1\nb = 3"
    assert (tmp_path / "f.py").stat().st_mode & 0o777 == 0o640
    await edit(client, ("\ufeffa = 1", "a = 0"))
    assert (tmp_path / "f.py").read_bytes() == b"\xef\xbb\xbfa = 0\nb = 3"


async def test_removing_the_last_line_break_keeps_the_final_newline(client: Client, tmp_path: Path) -> None:
    (tmp_path / "f.py").write_bytes(b"a\nb\n")
    await edit(client, ("b\n", "c"))
    assert (tmp_path / "f.py").read_bytes() == b"a\nc\n"


async def test_an_edit_that_changes_nothing_does_not_rewrite_the_file(client: Client, tmp_path: Path) -> None:
    (tmp_path / "f.py").write_text(CODE, encoding="utf-8")
    inode = (tmp_path / "f.py").stat().st_ino
    result = await edit(client, ("return result", "return result"))
    assert not result.is_error and not result.structured_content["changed"]
    assert (tmp_path / "f.py").stat().st_ino == inode


async def test_the_diff_is_cut_to_the_result_budget(tmp_path: Path) -> None:
    (tmp_path / "f.py").write_text("".join(f"value_{n} = {n}\n" for n in range(2000)), encoding="utf-8")
    async with connect(config_for(tmp_path, limits={"max_result_chars": 3000})) as client:
        result = await client.call_tool(
            "editfile",
            {"path": "f.py", "edits": [{"oldText": " = ", "newText": " := ", "expectedReplacements": 2000}]},
        )
    data = result.structured_content
    assert not result.is_error and data["diffTruncated"] and len(data["diff"]) <= 1000  # 3000 - 2000 reserve
    assert "diff cut to fit" in text_of(result)
    assert (tmp_path / "f.py").read_text(encoding="utf-8").count(" := ") == 2000


async def test_argument_errors_are_explained(client: Client, tmp_path: Path) -> None:
    (tmp_path / "f.py").write_text(CODE, encoding="utf-8")
    empty = await edit(client, ("", "x"))
    assert error_code(empty) == "invalid_arguments" and "oldText must not be empty" in text_of(empty)
    none = await client.call_tool("editfile", {"path": "f.py", "edits": []})
    assert error_code(none) == "invalid_arguments" and "edits" in text_of(none)
    extra = await edit(client, {"oldText": "a", "newText": "b", "replaceEverything": True})
    assert error_code(extra) == "invalid_arguments" and "replaceEverything" in text_of(extra)


async def test_a_missing_file_points_to_writefile(client: Client, tmp_path: Path) -> None:
    result = await edit(client, ("a", "b"))
    assert error_code(result) == "not_found"
    assert "path does not exist" in text_of(result) and "writefile" in text_of(result)


async def test_a_large_diff_stays_within_the_budget_with_text_and_structure(tmp_path: Path) -> None:
    old = "".join(f'line {n} "quoted"\n' for n in range(3000))
    (tmp_path / "f.txt").write_text(old, encoding="utf-8")
    async with connect(config_for(tmp_path, limits={"max_result_chars": 10_000})) as client:
        result = await client.call_tool(
            "editfile", {"path": "f.txt", "edits": [{"oldText": old, "newText": old.upper()}]}
        )
    data = result.structured_content
    assert not result.is_error and wire_chars(result) <= 10_000
    assert data["diffTruncated"] is True and data["diff"].rstrip("\n") in text_of(result)
    assert (tmp_path / "f.txt").read_text(encoding="utf-8") == old.upper()


RENAME = "def _expand_args(a):\n    return windows_expand_args(a)\n\nx = _expand_args(1) + _expand_args(2)\n"


async def test_replace_all_replaces_every_match_and_reports_the_count(client: Client, tmp_path: Path) -> None:
    (tmp_path / "f.py").write_text(CODE, encoding="utf-8")
    result = await edit(client, {"oldText": "item", "newText": "entry", "replaceAll": True})
    assert error_code(result) is None, text_of(result)
    assert (tmp_path / "f.py").read_text(encoding="utf-8") == CODE.replace("item", "entry")
    assert result.structured_content["edits"][0]["replacements"] == 4
    missing = await edit(client, {"oldText": "nowhere", "newText": "x", "replaceAll": True})
    assert error_code(missing) == "no_match"


async def test_whole_word_does_not_rename_inside_a_longer_name(client: Client, tmp_path: Path) -> None:
    (tmp_path / "f.py").write_text(RENAME, encoding="utf-8")
    result = await edit(
        client, {"oldText": "_expand_args", "newText": "expand", "match": "wholeWord", "replaceAll": True}
    )
    assert error_code(result) is None, text_of(result)
    text = (tmp_path / "f.py").read_text(encoding="utf-8")
    assert text == "def expand(a):\n    return windows_expand_args(a)\n\nx = expand(1) + expand(2)\n"
    assert result.structured_content["edits"][0] == {
        "match": "wholeWord",
        "replacements": 3,
        "lines": [
            {"startLine": 1, "endLine": 1},
            {"startLine": 4, "endLine": 4},
            {"startLine": 4, "endLine": 4},
        ],
    }


async def test_a_whole_word_or_regex_count_mismatch_lists_the_matches_and_writes_nothing(
    client: Client, tmp_path: Path
) -> None:
    (tmp_path / "f.py").write_text(RENAME, encoding="utf-8")
    result = await edit(client, {"oldText": "_expand_args", "newText": "expand", "match": "wholeWord"})
    assert error_code(result) == "ambiguous_match"
    assert "3 places (as a whole word)" in text_of(result) and "lines 1, 4" in text_of(result)
    regex = await edit(client, {"oldText": r"_expand_args\(\d\)", "newText": "y", "match": "regex"})
    assert error_code(regex) == "ambiguous_match" and "(as a regex)" in text_of(regex)
    assert (tmp_path / "f.py").read_text(encoding="utf-8") == RENAME


async def test_a_regex_edit_uses_re2_and_refuses_a_bad_or_empty_pattern(
    client: Client, tmp_path: Path
) -> None:
    (tmp_path / "f.py").write_text(RENAME, encoding="utf-8")
    result = await edit(
        client, {"oldText": r"_expand_args\(\d\)", "newText": "z", "match": "regex", "replaceAll": True}
    )
    assert error_code(result) is None, text_of(result)
    assert (tmp_path / "f.py").read_text(encoding="utf-8").endswith("x = z + z\n")
    bad = await edit(client, {"oldText": r"(a)\1", "newText": "z", "match": "regex"})
    assert error_code(bad) == "invalid_arguments" and "RE2" in text_of(bad)
    empty = await edit(client, {"oldText": "x*", "newText": "z", "match": "regex", "replaceAll": True})
    assert error_code(empty) == "invalid_arguments" and "empty string" in text_of(empty)


@pytest.mark.parametrize(("edits", "width"), [(100, 2000), (100, 400), (100, 20), (1, 50_000)])
async def test_many_replacements_keep_the_head_and_tail_of_the_diff_in_both_copies(
    tmp_path: Path, edits: int, width: int
) -> None:
    """Before: 100 edits of 2,000-character lines came back with an empty diff in the text and in
    structuredContent ("applied 100 edit(s)" and nothing else)."""
    lines = [f"line {n:05d} {'x' * width}\n" for n in range(max(edits, 3))]
    (tmp_path / "f.txt").write_text("".join(lines), encoding="utf-8")
    if edits == 1:
        changes = [{"oldText": "".join(lines), "newText": "".join(lines).upper()}]
    else:
        changes = [{"oldText": f"line {n:05d}", "newText": f"LINE {n:05d}"} for n in range(edits)]
    async with connect(config_for(tmp_path)) as client:
        result = await client.call_tool("editfile", {"path": "f.txt", "edits": changes})
    data = result.structured_content or {}
    assert not result.is_error, text_of(result)
    assert wire_chars(result) <= 45_000  # the default budget
    diff = data["diff"]
    assert diff.startswith("--- a/f.txt\n+++ b/f.txt\n@@ ") and len(diff) > 1000, diff[:200]
    assert diff.rstrip("\n") in text_of(result)
    if data["diffTruncated"]:
        assert "\n-line 00000 " in diff  # the head: difflib lists the removed lines first
        if edits > 1:
            assert f"\n+LINE {edits - 1:05d} " in diff  # the tail: the last added line
        else:
            assert diff.endswith("X" * 100 + "\n")
        assert re.search(r"\[\d+ diff lines (and \d+ characters )?left out\]", diff), diff[:3000]


def test_diff_within_keeps_whole_lines_from_both_ends_and_counts_what_it_left_out() -> None:
    from mcp_localtools.tools.text._diff import MIN_DIFF_CHARS, diff_within

    diff = "".join(f"+line {n:04d}\n" for n in range(1000))  # 11 characters a line
    cut, was_cut = diff_within(diff, 2200)
    assert was_cut and len(cut) <= 2200
    kept = [line for line in cut.splitlines() if line.startswith("+line")]
    assert kept[0] == "+line 0000" and kept[-1] == "+line 0999"
    left = int(re.search(r"\[(\d+) diff lines left out\]", cut).group(1))  # type: ignore[union-attr]
    assert left + len(kept) == 1000
    assert diff_within(diff, 10) == diff_within(diff, MIN_DIFF_CHARS)  # never below the floor
    assert diff_within("+short\n", 5000) == ("+short\n", False)
    long_line, _ = diff_within("+" + "a" * 5000 + "b" * 5000 + "\n", 2000)
    assert long_line.startswith("+aaa") and long_line.endswith("bbb\n") and "characters left out" in long_line


async def test_a_regex_edit_is_multi_line_like_replaceinfiles_and_searchfiles(
    client: Client, tmp_path: Path
) -> None:
    (tmp_path / "f.py").write_text("a1\nb\na2\n", encoding="utf-8")
    result = await edit(client, {"oldText": "^a", "newText": "A", "match": "regex", "replaceAll": True})
    assert error_code(result) is None, text_of(result)
    assert (tmp_path / "f.py").read_text(encoding="utf-8") == "A1\nb\nA2\n"
    ends = await edit(client, {"oldText": r"\d$", "newText": "", "match": "regex", "expectedReplacements": 2})
    assert error_code(ends) is None, text_of(ends)
    assert (tmp_path / "f.py").read_text(encoding="utf-8") == "A\nb\nA\n"


async def test_a_regex_edit_inserts_groups_by_number_or_name(client: Client, tmp_path: Path) -> None:
    (tmp_path / "f.py").write_text("def old_one(a):\n    return old_two(a)\n", encoding="utf-8")
    result = await edit(
        client,
        {"oldText": r"def old_(\w+)\(", "newText": r"def new_\1(", "match": "regex"},
        {"oldText": r"old_(?P<name>\w+)\(a\)", "newText": r"new_\g<name>(a, \g<1>, \g<0>)", "match": "regex"},
    )
    assert error_code(result) is None, text_of(result)
    assert (tmp_path / "f.py").read_text(encoding="utf-8") == (
        "def new_one(a):\n    return new_two(a, two, old_two(a))\n"
    )


async def test_in_a_regex_edit_a_doubled_backslash_is_one_and_other_escapes_stay_as_written(
    client: Client, tmp_path: Path
) -> None:
    (tmp_path / "f.py").write_text("x = 1\n", encoding="utf-8")
    result = await edit(client, {"oldText": r"(\d)", "newText": r'"\\1\n\t\1"', "match": "regex"})
    assert error_code(result) is None, text_of(result)
    assert (tmp_path / "f.py").read_text(encoding="utf-8") == 'x = "\\1\\n\\t1"\n'


async def test_a_group_that_does_not_exist_is_refused_and_nothing_is_written(
    client: Client, tmp_path: Path
) -> None:
    (tmp_path / "f.py").write_text("x = 1\n", encoding="utf-8")
    for new in (r"\2", r"\g<nope>"):
        result = await edit(client, {"oldText": r"(\d)", "newText": new, "match": "regex"})
        assert error_code(result) == "invalid_arguments", text_of(result)
        assert "edits[0].newText" in text_of(result) and "group" in text_of(result)
    assert (tmp_path / "f.py").read_text(encoding="utf-8") == "x = 1\n"


async def test_outside_regex_mode_a_group_reference_is_literal_text(client: Client, tmp_path: Path) -> None:
    (tmp_path / "f.py").write_text("x = 1\n", encoding="utf-8")
    result = await edit(client, ("1", r"\1 \g<0>"))
    assert error_code(result) is None, text_of(result)
    assert (tmp_path / "f.py").read_text(encoding="utf-8") == "x = \\1 \\g<0>\n"


async def test_the_diff_names_the_file_relative_to_its_root_as_git_does(
    client: Client, tmp_path: Path
) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "x.py").write_text(CODE, encoding="utf-8")
    result = await client.call_tool(
        "editfile", {"path": "src/x.py", "edits": [{"oldText": "result = 0", "newText": "result = 1"}]}
    )
    diff = result.structured_content["diff"]
    assert diff.startswith("--- a/src/x.py\n+++ b/src/x.py\n"), diff
    lines = await client.call_tool(
        "replacetextlines", {"path": "src/x.py", "matchLines": ["result = 1"], "replaceWithLines": ["r = 2"]}
    )
    assert lines.structured_content["diff"].startswith("--- a/src/x.py\n+++ b/src/x.py\n")
