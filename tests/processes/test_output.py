"""HeadTail: head and tail kept within the budget, total counted, invalid UTF-8 replaced."""

from __future__ import annotations

from mcp_localtools.processes.output import HeadTail


def test_output_under_the_limit_is_kept_whole() -> None:
    sink = HeadTail(100)
    sink.write(b"hello\n")
    sink.write(b"world\n")
    captured = sink.render()
    assert captured.text == "hello\nworld\n" and not captured.truncated and captured.total_bytes == 12


def test_output_over_the_limit_keeps_head_and_tail_and_says_how_much_is_missing() -> None:
    sink = HeadTail(40)
    for number in range(100):
        sink.write(f"line {number:03}\n".encode())
    captured = sink.render()
    assert captured.truncated and captured.total_bytes == 900
    assert captured.text.startswith("line 000\nline 001\n")
    assert captured.text.endswith("line 098\nline 099\n")
    assert "[... 860 bytes elided; 900 bytes in all ...]" in captured.text


def test_one_huge_write_is_cut_in_linear_time() -> None:
    sink = HeadTail(1024)
    sink.write(b"a" * 10_000_000 + b"END")
    captured = sink.render()
    assert captured.text.startswith("a" * 512) and captured.text.endswith("aEND")
    assert captured.total_bytes == 10_000_003


def test_invalid_utf8_is_replaced_and_a_cut_character_leaves_no_debris() -> None:
    sink = HeadTail(100)
    sink.write(b"\xff\xfeok")
    assert sink.render().text == "\ufffd\ufffdok"
    cut = HeadTail(8)  # 4 bytes of head: "ab" + the first 2 bytes of a 3-byte character
    cut.write("abéé€€€xyz".encode())
    text = cut.render().text
    assert "\ufffd" not in text and text.startswith("abé") and text.endswith("xyz")
