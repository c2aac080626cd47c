"""Identifiers split and stemmed on both sides (issue 37, item 2): the index's terms of code and a
question's terms come from one tokenizer, so ``parseHTTPResponseHeaders`` and "parsing the http
response headers" meet on their stems."""

from __future__ import annotations

from mcp_localtools.codeintel.tokens import Tokenizer, split_identifier


def test_an_identifier_and_a_question_meet_on_their_stems() -> None:
    tokenizer = Tokenizer()
    code = set(tokenizer.terms("def parseHTTPResponseHeaders(raw_bytes): connection_pool").split())
    question = set(tokenizer.terms("parsing the http response headers of pooled connections").split())
    assert {"pars", "http", "respons", "header", "connect", "pool"} <= code & question
    assert "parsehttpresponseheaders" in code  # the whole name too, for a question that spells it
    assert "the" not in question and "of" not in question
    assert split_identifier("parseHTTPResponseHeaders") == ["parse", "http", "response", "headers"]
    assert split_identifier("raw_bytes") == ["raw", "bytes"]
