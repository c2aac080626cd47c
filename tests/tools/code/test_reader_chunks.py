"""Chunks as a reader sees code (issue 37, item 1): a doc comment belongs to its symbol, and
JavaScript members defined by assignment, defineProperty and object literals are symbols."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from mcp_localtools.codeintel.chunks import Chunk, chunks_of
from mcp_localtools.codeintel.languages import Grammars, language_of
from mcp_localtools.codeintel.tags import Symbol, extract
from tests.helpers import callees_by_symbol, config_for, connect, text_of

pytestmark = pytest.mark.anyio

THROTTLE = """\
import { Scheduler } from './scheduler';

/**
 * Lets a value through, then ignores the source for a quiet period
 * of the given length before letting the next one through.
 *
 * @param {number} duration - milliseconds of silence
 */

export function throttleTime(duration: number, scheduler: Scheduler) {
  return scheduler.every(duration);
}

/// Counts the elements that were dropped meanwhile.
export function droppedCount(): number {
  return 0;
}
"""


async def test_a_doc_comment_is_part_of_its_symbols_chunk(tmp_path: Path) -> None:
    (tmp_path / "throttle.ts").write_text(THROTTLE, encoding="utf-8")
    async with connect(config_for(tmp_path)) as client:
        result = await client.call_tool(
            "semanticsearch", {"query": "ignore the source for a quiet period", "includeContent": True}
        )
    assert not result.is_error, text_of(result)
    assert result.structured_content is not None
    hits = result.structured_content["results"]
    assert hits[0]["symbol"] == "throttleTime", text_of(result)
    assert hits[0]["startLine"] == 3 and "quiet period" in hits[0]["content"]
    assert [hit["startLine"] for hit in hits if hit["symbol"] == "droppedCount"] in ([], [14])
    assert not [hit for hit in hits if hit["kind"] == "text" and hit["startLine"] <= 8 <= hit["endLine"]]


REQUEST = """\
var req = Object.create(http.IncomingMessage.prototype);

/**
 * Return the protocol string "http" or "https".
 */
defineGetter(req, 'protocol', function protocol() {
  return this.connection.encrypted ? 'https' : 'http';
});

Object.defineProperty(req, 'secure', {
  get: function () { return this.protocol === 'https'; },
});

Layer.prototype.match = function match(path) {
  return path === this.path;
};

const helpers = {
  flatten(list) { return [].concat(...list); },
  merge: function (a, b) { return Object.assign(a, b); },
};

export const parseQuery = (text) => text.split('&');
"""


@pytest.mark.parametrize("name", ["request.js", "request.ts"])
async def test_javascript_members_are_symbols_with_qualified_names(tmp_path: Path, name: str) -> None:
    (tmp_path / name).write_text(REQUEST, encoding="utf-8")
    async with connect(config_for(tmp_path)) as client:
        found = {}
        for wanted in ("protocol", "secure", "match", "flatten", "merge", "parseQuery"):
            result = await client.call_tool("findsymbol", {"name": wanted, "includeReferences": False})
            assert result.structured_content is not None, text_of(result)
            definitions = result.structured_content["definitions"]
            found[wanted] = [(d["qualifiedName"], d["startLine"]) for d in definitions]
        outline = await client.call_tool("symbols", {"path": name})
    assert found == {
        "protocol": [("req.protocol", 6)],
        "secure": [("req.secure", 10)],
        "match": [("Layer.match", 14)],
        "flatten": [("helpers.flatten", 19)],
        "merge": [("helpers.merge", 20)],
        "parseQuery": [("parseQuery", 23)],
    }, found
    assert "Return the protocol string" in text_of(outline)


CLIENT = '''\
class RetryingClient:
    """An HTTP client that sends requests again when the server is busy.

    Keeps one connection pool and a retry budget per host.
    """

    max_attempts = 3

    def send(self, request):
        """Send a request, trying again after a busy reply."""
        for attempt in range(self.max_attempts):
            reply = self.pool.open(request)
            if reply.status != 503:
                return reply
        return reply

    def wait_before_retry(self, attempt):
        """Sleep longer after each failed attempt: exponential backoff with jitter."""
        delay = min(60, 2 ** attempt) * random.uniform(0.5, 1.5)
        time.sleep(delay)
'''


async def test_a_class_chunk_is_its_summary_and_its_methods_rank_on_their_own(tmp_path: Path) -> None:
    # The class's chunk is its header (signature, docstring, class attributes), not its methods':
    # its lines, content and callees too (they were the whole class's, and a class hit overlapped
    # every method); a question a method answers finds that method first, above its class.
    (tmp_path / "client.py").write_text(CLIENT, encoding="utf-8")
    async with connect(config_for(tmp_path)) as client:
        result = await client.call_tool(
            "semanticsearch",
            {"query": "retry client sleeps longer after each failed attempt", "includeContent": True},
        )
    assert result.structured_content is not None, text_of(result)
    hits = {hit["symbol"]: hit for hit in result.structured_content["results"]}
    order = [hit["symbol"] for hit in result.structured_content["results"]]
    assert order[0] == "RetryingClient.wait_before_retry", order
    header = hits["RetryingClient"]
    assert (header["startLine"], header["endLine"]) == (1, 7), header
    assert "retry budget" in header["content"] and "def send" not in header["content"]
    assert "busy" in header["summary"] and header["callees"] == [], header
    assert {"RetryingClient.send", "RetryingClient.wait_before_retry"} <= set(hits)


RETRYING = '''\
import time


def retrying(attempts):
    """Make a function try again when it raises."""
    log_setup(attempts)

    def decorate(function):
        def again(*args):
            """Call the function, sleeping with exponential backoff between failures."""
            for attempt in range(attempts):
                try:
                    return function(*args)
                except OSError:
                    time.sleep(backoff_delay(attempt))

        return again

    register(decorate)
    return decorate
'''


def test_a_functions_chunk_leaves_out_the_functions_nested_in_it() -> None:
    # The outer function's chunk spans it whole (a reader asking for it reads all of it), but the
    # text it is ranked on is its own: a nested function is its own chunk, shown in the outer's by
    # its first line only, so the outer does not also rank on the nested one's words.
    language = language_of("retry.py")
    assert language is not None
    grammar = Grammars().get(language)
    assert grammar is not None
    chunks = {c.symbol: c for c in chunks_of("retry.py", RETRYING, extract(grammar, RETRYING.encode()))}
    outer, nested = chunks["retrying"], chunks["retrying.decorate.again"]
    assert (outer.start_line, outer.end_line) == (4, 20)
    assert "log_setup(attempts)" in outer.text and "return decorate" in outer.text
    assert "def decorate(function):" in outer.text and "return again" not in outer.text
    assert "backoff" not in outer.text and "backoff" not in outer.meaning
    assert "exponential backoff" in nested.text
    assert "def again(*args):" in chunks["retrying.decorate"].text  # its first line only
    assert "backoff" not in chunks["retrying.decorate"].text


async def test_a_functions_callees_are_its_own_not_its_nested_functions(tmp_path: Path) -> None:
    hits = await callees_by_symbol(tmp_path, "retry.py", RETRYING, "try again when it raises")
    assert hits["retrying"] == ["log_setup", "register"], hits
    assert set(hits["retrying.decorate.again"]) >= {"sleep", "backoff_delay"}


SERVER = """\
function startServer(app) {
  configure(app);
  app.listen(3000, function onListening() { announce('up'); });
  setTimeout(function tick() { poll(); }, 10);
  finish();
}
"""


async def test_a_call_on_a_named_callbacks_first_line_is_the_outer_functions(tmp_path: Path) -> None:
    # A named function expression passed as an argument starts on the line of the call that
    # receives it: that call is the outer function's, the callback's are only those inside it.
    hits = await callees_by_symbol(tmp_path, "server.js", SERVER, "start server listening tick")
    assert set(hits["startServer"]) >= {"configure", "listen", "setTimeout", "finish"}, hits
    assert not {"announce", "poll"} & set(hits["startServer"]), hits
    assert hits["startServer.onListening"] == ["announce"], hits
    assert hits["startServer.tick"] == ["poll"], hits


def _chunks(name: str, text: str) -> dict[str, Chunk]:
    language = language_of(name)
    assert language is not None
    grammar = Grammars().get(language)
    assert grammar is not None
    return {c.symbol: c for c in chunks_of(name, text, extract(grammar, text.encode()))}


NESTED_DOCS = {
    "outer.js": """\
function outer() {
  setup();
  /**
   * Parse the quiet period.
   * Mentions the zebra crossing too.
   */
  function inner() {
    leaf();
  }
  return inner;
}
""",
    "outer.py": """\
def outer():
    setup()

    # First prepare the zebra crossing.
    def inner():
        leaf()

    return inner
""",
}


@pytest.mark.parametrize("name", sorted(NESTED_DOCS))
def test_a_nested_functions_doc_comment_is_in_its_own_chunk(name: str) -> None:
    # The comment above a nested function is left out of the outer one's text (it is the nested
    # one's words) and is the first lines of the nested one's chunk: indexed once, not nowhere.
    chunks = _chunks(name, NESTED_DOCS[name])
    outer, inner = chunks["outer"], chunks["outer.inner"]
    assert "zebra" in inner.text and "zebra" not in outer.text, (outer, inner)
    assert inner.start_line == (3 if name.endswith(".js") else 4), inner
    assert "setup()" in outer.text and "return inner" in outer.text


def test_a_comment_ending_the_outer_functions_first_line_is_the_outers() -> None:
    # `function outer() { /* ... */` ends with a comment's close, but it is the outer function's
    # signature line, not a doc comment of the function nested just below it.
    text = (
        "function outer() { /* outer does a thing */\n"
        "  function inner() {\n    leaf();\n  }\n  return inner;\n}\n"
    )
    chunks = _chunks("outer.js", text)
    outer, inner = chunks["outer"], chunks["outer.inner"]
    assert outer.text.startswith("function outer() {"), outer.text
    assert inner.start_line == 2, inner


CODE_ABOVE = {
    # a trailing block comment ends the line of code above a function
    "trailing.js": ("const y = 2;\nconst x = f(); /* note */\nfunction g() {\n  return x;\n}\n", 3),
    # ... over two lines, its start after code
    "spread.js": ("const x = f(); /* a note\n   that goes on */\nfunction g() {\n  return x;\n}\n", 3),
    # a multiplication continued on a line of its own
    "product.js": ("const x = width\n  * height;\nfunction g() {\n  return x;\n}\n", 3),
    "product.py": ("x = (width\n     * height)\ndef g():\n    return x\n", 3),
    # a private field is no `#` comment in JavaScript
    "counter.js": ("class Counter {\n  #x = 0;\n  g() {\n    return this.#x;\n  }\n}\n", 3),
    # nor is C's preprocessor
    "limit.c": ("#include <stdio.h>\n#define x = 10\nint g(void) {\n  return 1;\n}\n", 3),
}


@pytest.mark.parametrize("name", sorted(CODE_ABOVE))
def test_code_just_above_a_function_is_not_its_doc_comment(name: str) -> None:
    # A comment block is known by its start (`/*`, `//`, `#` as the language has them) and its
    # continuation, not by a line ending with `*/` or starting with `*`: such a line of code stays
    # in the chunk it belongs to, and the function's chunk starts at its own first line.
    text, line = CODE_ABOVE[name]
    chunks = _chunks(name, text)
    function = next(chunk for chunk in chunks.values() if chunk.symbol.endswith("g"))
    assert function.start_line == line, function
    assert function.text.splitlines()[0] == text.splitlines()[line - 1], function.text
    assert "x = " not in function.text and "* height" not in function.text, function.text


COMMENTS_ABOVE = {
    "block.js": ("const x = 1;\n/* Parse the zebra. */\nfunction g() {\n  return x;\n}\n", 2),
    "bare.js": ("const x = 1;\n/*\n  Parse the zebra.\n*/\nfunction g() {\n  return x;\n}\n", 2),
    "jsdoc.ts": ("const x = 1;\n/**\n * Parse the zebra.\n */\n\nfunction g() {\n  return x;\n}\n", 2),
    "lines.rs": ("const X: u8 = 1;\n/// Parse the zebra.\n/// Twice.\nfn g() -> u8 {\n    X\n}\n", 2),
    "hash.py": ("x = 1\n# Parse the zebra.\n# Twice.\ndef g():\n    return x\n", 2),
    # a JSDoc whose text holds `/*` or `*/` (a MIME range, a glob)
    "mime.js": (
        "const x = 1;\n/**\n * Parse the zebra.\n *\n *     // Accept: text/*, application/json\n"
        " *     g('src/**/*.js');\n */\n\nfunction g() {\n  return x;\n}\n",
        2,
    ),
}


@pytest.mark.parametrize("name", sorted(COMMENTS_ABOVE))
def test_a_comment_block_just_above_a_function_is_its_doc(name: str) -> None:
    text, line = COMMENTS_ABOVE[name]
    function = _chunks(name, text)["g"]
    assert function.start_line == line and "zebra" in function.text, function
    assert "x = 1" not in function.text and "X: u8" not in function.text, function.text


DECORATED = {
    # (text, the symbol, its first line: the doc comment's, its signature)
    "route.py": (
        "import app\n\n# Shows the zebra's home page.\n@app.route(\n    '/',\n    methods=['GET'],\n)\n"
        "def home():\n    return 1\n",
        "home", 3, "def home():",
    ),
    "point.rs": (
        "use x;\n\n/// A zebra's point.\n#[derive(\n    Debug,\n    Clone,\n)]\n"
        "pub struct Point { x: i32 }\n",
        "Point", 3, "pub struct Point",
    ),
    "attr.rs": (
        "struct P;\nimpl P {\n    /// Makes a zebra.\n    #[inline]\n    fn make() -> u8 { 1 }\n}\n",
        "P.make", 3, "fn make() -> u8",
    ),
    "widget.ts": (
        "import x from 'y';\n\n/** The zebra widget. */\n@Component({\n  selector: 'w',\n})\n"
        "export class Widget {\n  go() { return 1; }\n}\n",
        "Widget", 3, "class Widget",
    ),
    "method.ts": (
        "class Widget {\n  /** Clicks the zebra. */\n  @HostListener('click')\n  go() { return 1; }\n}\n",
        "Widget.go", 2, "go()",
    ),
    "Hello.java": (
        "class A {\n  /** Says the zebra's name. */\n  @Override\n"
        "  public String toString() { return \"\"; }\n}\n",
        "A.toString", 2, "public String toString()",
    ),
    "Api.cs": (
        "class A {\n  /// Gets the zebra.\n  [HttpGet]\n  public int Get() { return 1; }\n}\n",
        "A.Get", 2, "public int Get()",
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(DECORATED))
def test_a_decorated_symbols_chunk_holds_its_doc_comment_decorators_and_signature(name: str) -> None:
    # Decorators, attributes and annotations (one line or many) belong to the definition below
    # them, and so does the doc comment above them: the chunk starts there, the symbol's doc is
    # that comment, its signature the declaration's line, not the decorator's.
    text, symbol, first, signature = DECORATED[name]
    chunk = _chunks(name, text)[symbol]
    assert chunk.start_line == first and "zebra" in chunk.text, chunk
    assert chunk.summary.startswith(signature) and "zebra" in chunk.summary, chunk.summary


@pytest.mark.parametrize("name", ["version.js", "version.ts"])
def test_a_function_among_several_declarators_is_its_own_declarator(name: str) -> None:
    # `var a = ..., zebra = function () {}`: one statement, two definitions; zebra's lines and
    # signature are its own declarator's, not the statement's (whose first line is `a`'s).
    text = 'var version = "3.7.1",\n  zebra = function (selector) {\n    return selector;\n  };\n'
    language = language_of(name)
    assert language is not None
    grammar = Grammars().get(language)
    assert grammar is not None
    symbol = next(s for s in extract(grammar, text.encode()).symbols if s.name == "zebra")
    assert (symbol.start_line, symbol.end_line) == (2, 4), symbol
    assert symbol.signature.startswith("zebra = function (selector)"), symbol


def _symbols(name: str, text: str) -> dict[str, Symbol]:
    language = language_of(name)
    assert language is not None
    grammar = Grammars().get(language)
    assert grammar is not None
    return {s.qualified_name: s for s in extract(grammar, text.encode()).symbols}


def test_a_statement_of_thousands_of_declarators_is_read_in_linear_time() -> None:
    # Each declarator's range asked whether it is its statement's only one by counting them all:
    # 8,000 declarators took 22 s (0.3 s before that check).
    text = "var " + ",".join(f"f{i}=function(a){{return a+{i}}}" for i in range(8000)) + ";\n"
    began = time.perf_counter()
    assert len(_symbols("many.js", text)) >= 8000
    assert time.perf_counter() - began < 5


def test_a_decorated_nested_functions_signature_stays_in_the_outer_functions_text() -> None:
    text = (
        "def outer(f):\n    x = 1\n    @decorator(\n        a=1,\n    )\n    def inner(*a):\n"
        "        return zebra(*a)\n    return inner\n"
    )
    outer = _chunks("nested.py", text)["outer"]
    assert "@decorator(" in outer.text and "def inner(*a):" in outer.text, outer.text
    assert "zebra" not in outer.text, outer.text


def test_a_class_header_counts_its_lines_from_its_declaration_not_its_decorator() -> None:
    template = "\n".join(f"    <li>row {i}</li>" for i in range(35))
    text = (
        f"@Component({{\n  selector: 'list',\n  template: `\n{template}\n  `,\n}})\n"
        "export class ListComponent {\n  items: string[] = [];\n  count = 0;\n\n  go() { return 1; }\n}\n"
    )
    header = _chunks("list.ts", text)["ListComponent"]
    assert "export class ListComponent {" in header.text and "count = 0" in header.text, header


COMMENTS_AMONG_DECORATIONS = {
    # (text, symbol, first line, doc)
    "between.rs": (
        "use x;\n\n/// Point doc.\n#[derive(Debug)]\n// a note\n#[serde(rename = \"p\")]\n"
        "pub struct Point;\n",
        "Point", 3, "Point doc.",
    ),
    "after.rs": (
        "use x;\n\n#[derive(Debug, Clone)]\n/// The zebra.\npub struct Zebra;\n",
        "Zebra", 3, "The zebra.",
    ),
    "method.ts": (
        "class W {\n  /** Go doc. */\n  @HostListener('click')\n  // between\n  @Other()\n"
        "  go(e) { return e; }\n}\n",
        "W.go", 2, "Go doc.",
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(COMMENTS_AMONG_DECORATIONS))
def test_a_comment_among_decorations_does_not_split_the_definition(name: str) -> None:
    text, symbol, first, doc = COMMENTS_AMONG_DECORATIONS[name]
    assert _symbols(name, text)[symbol].doc == doc
    chunk = _chunks(name, text)[symbol]
    assert chunk.start_line == first, chunk


@pytest.mark.parametrize(
    "text",
    [
        "/** Doc of h. */\nconst h = () => c(), k = 1;\n",
        "/** Doc of h. */\nvar h = function () { return 1; }, g = function () { return 2; };\n",
    ],
)
def test_the_first_of_several_declarators_keeps_the_statements_doc_comment(text: str) -> None:
    assert _symbols("doc.js", text)["h"].doc == "Doc of h."


@pytest.mark.parametrize("name", ["scaled.c", "scaled.js"])
def test_code_continued_on_a_line_starting_with_a_star_is_not_a_comments_text(name: str) -> None:
    code = (
        "int total = a\n    * b; /* scaled */\n"
        if name.endswith(".c")
        else "const total = a\n  * b; /* scaled */\n"
    )
    fn = "int f(void) { return 0; }\n" if name.endswith(".c") else "function f() { return 0; }\n"
    text = "/* License: MIT */\n" + code + fn
    assert _chunks(name, text)["f"].start_line == 4


def test_a_function_expression_named_as_its_variable_is_one_definition() -> None:
    assert sorted(_symbols("same.js", "var f = function f() { return 1; };\n")) == ["f"]


DOC_MARKUP = {
    # (text, the symbol, its doc): C#'s XML doc comments and Javadoc's HTML and inline tags
    "Order.cs": (
        "namespace Shop\n{\n    /// <summary>\n    /// Totals the zebra's order.\n    /// </summary>\n"
        "    /// <param name=\"x\">The amount.</param>\n    public class Order\n    {\n    }\n}\n",
        "Shop.Order", "Totals the zebra's order.",
    ),
    "Inline.cs": (
        "class A {\n  /// <summary>Gets the <see cref=\"Zebra\"/> of a <c>herd</c>.</summary>\n"
        "  public int Get() { return 1; }\n}\n",
        "A.Get", "Gets the Zebra of a herd.",
    ),
    "Total.java": (
        "class A {\n  /**\n   * <p>Returns the {@code zebra} total.\n   * @param x the amount\n   */\n"
        "  int total(int x) { return x; }\n}\n",
        "A.total", "Returns the zebra total.",
    ),
    "Lines.cs": (
        "class A {\n  /// <summary>Closes the zebra.<br/>Then <see langword='null'/> &lt;T&gt;.</summary>\n"
        "  public void Close() { }\n}\n",
        "A.Close", "Closes the zebra. Then null <T>.",
    ),
    "Inherit.cs": (
        "class A {\n  /// <inheritdoc/>\n  /// Counts the zebras.\n  public int Count() { return 1; }\n}\n",
        "A.Count", "Counts the zebras.",
    ),
    # what only looks like markup stays, and other languages' docs are left as written
    "generic.ts": (
        "/** Returns a List<Zebra> of a <b-table> herd. */\nexport function herd(): number {\n"
        "  return 1;\n}\n",
        "herd", "Returns a List<Zebra> of a <b-table> herd.",
    ),
    "Compare.java": (
        "class A {\n  /** True iff a<b and c>d, for i<c; x>>1. */\n  boolean f() { return true; }\n}\n",
        "A.f", "True iff a<b and c>d, for i<c; x>>1.",
    ),
    "compare.rs": (
        "/// Returns true iff `a<b` and `c>d`, or <code> is 0.\nfn f() -> bool { true }\n",
        "f", "Returns true iff `a<b` and `c>d`, or <code> is 0.",
    ),
    "placeholder.py": (
        'def f():\n    """Parse a key=<value> pair; exit with <code> as its status."""\n',
        "f", "Parse a key=<value> pair; exit with <code> as its status.",
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(DOC_MARKUP))
def test_a_doc_comments_markup_is_left_out_of_its_doc(name: str) -> None:
    # The doc line is what the comment says: a C# summary written on the lines between
    # <summary> and </summary> (the usual layout) was the doc "<summary>".
    text, symbol, doc = DOC_MARKUP[name]
    assert _symbols(name, text)[symbol].doc == doc


@pytest.mark.parametrize(
    "line",
    ["{@code" + " " * 200_000 + "x", "<p" + " " * 200_000 + "x", "<see a=" * 40_000],
    ids=["inline tag unclosed", "tag unclosed", "attributes unclosed"],
)
def test_a_doc_lines_markup_is_read_in_linear_time(line: str) -> None:
    # {@code then spaces and no closing brace: the spaces could be split between the tag's
    # separator and its text in every way (40 KB: 7 s; a 1 MiB file: about 80 minutes).
    began = time.perf_counter()
    symbols = _symbols("Long.java", f"class A {{\n  /** {line} */\n  int f() {{ return 1; }}\n}}\n")
    assert time.perf_counter() - began < 1.0
    assert len(symbols["A.f"].doc) <= 160
