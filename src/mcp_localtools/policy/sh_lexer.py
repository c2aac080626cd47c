"""The POSIX-shell side of the command scanner: split a command string into simple commands.

This is not a shell. It models just enough of sh/bash syntax to find every word that the shell
will run as a command, including those the seed missed:

* separators ``;`` ``&`` ``&&`` ``|`` ``||`` ``|&`` newline ``(`` ``)``, honouring single and
  double quotes, backslash escapes and ``$'...'`` (decoded, so ``$'\\x72\\x6d'`` reads ``rm``);
* redirections (``2>&1``, ``&>f``, ``>f cmd``): their targets are not command words, and ``&``
  inside them is not backgrounding;
* command substitutions ``$(...)`` and backticks, also inside double quotes, inside ``${...}``
  and ``$((...))``, and process substitutions ``<(...)``: their commands are scanned too;
* here-documents: the body is data, not commands (so a file written with ``cat <<'EOF'`` may
  mention ``rm``), except for substitutions inside an unquoted body;
* comments: ``#`` at the start of a word skips to the end of the line, not of the command.

Every word records, per character, whether it was unquoted, quoted, or produced by an expansion
(``$x``, ``$(...)``), so the caller can tell a literal command name from one computed at run time.
Anything the lexer cannot follow (an unterminated quote or substitution, absurd nesting) raises
``ScanError``: the policy refuses what it cannot read (fail closed).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mcp_localtools.errors import ScanError

__all__ = ["DYNAMIC", "QUOTED", "UNQUOTED", "ShCommands", "Word", "lex_sh"]

UNQUOTED, QUOTED, DYNAMIC = 0, 1, 2
"""Per-character kinds of a ``Word``."""

_MAX_DEPTH = 32
_METACHARS = frozenset(" \t\n;&|()<>")
_NAME_START = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")
_NAME_CHARS = _NAME_START | frozenset("0123456789")
_SPECIAL_PARAMS = frozenset("@*#?$!-0123456789")
_C_ESCAPES = {
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
}


@dataclass(slots=True)
class Word:
    """One shell word after quote removal.

    Attributes:
        chars: the characters.
        kinds: one of ``UNQUOTED``, ``QUOTED``, ``DYNAMIC`` per character.
    """

    chars: list[str] = field(default_factory=list)
    kinds: list[int] = field(default_factory=list)

    def add(self, text: str, kind: int) -> None:
        self.chars.extend(text)
        self.kinds.extend([kind] * len(text))

    @property
    def text(self) -> str:
        return "".join(self.chars)

    @property
    def dynamic(self) -> bool:
        return DYNAMIC in self.kinds

    @property
    def plain(self) -> bool:
        """Entirely unquoted literal text (how reserved words and assignments must be written)."""
        return all(kind == UNQUOTED for kind in self.kinds)


@dataclass(slots=True)
class ShCommands:
    """The simple commands of a command string, in order, and whether any ran in the background."""

    commands: list[list[Word]] = field(default_factory=list)
    background: bool = False


def lex_sh(source: str) -> ShCommands:
    """Split ``source`` into simple commands (lists of words), substitutions included.

    Raises:
        ScanError: unterminated quoting or substitution, or nesting deeper than 32 levels.
    """
    out = ShCommands()
    _Lexer(source, out, 0).parse_list(stop=None)
    return out


class _Lexer:
    def __init__(self, source: str, out: ShCommands, depth: int) -> None:
        if depth > _MAX_DEPTH:
            raise ScanError("substitutions are nested too deeply")
        self.s = source
        self.i = 0
        self.out = out
        self.depth = depth
        self.heredocs: list[tuple[str, bool, bool]] = []  # (delimiter, strip tabs, expand body)

    def _peek(self, offset: int = 0) -> str:
        index = self.i + offset
        return self.s[index] if index < len(self.s) else ""

    def _sub(self, text: str) -> None:
        """Scan ``text`` (a backtick body, a heredoc body) as a nested command list."""
        _Lexer(text, self.out, self.depth + 1).parse_list(stop=None)

    # -- command lists ---------------------------------------------------------------------

    def parse_list(self, stop: str | None) -> None:  # noqa: C901, PLR0915 - the POSIX grammar's list rule, one loop
        """Parse until the end of input or, for ``$(``, the matching ``)``."""
        command: list[Word] = []
        redirect = ""  # "" | "target" | "heredoc" | "heredoc-strip"
        parens = 0  # "(" opened inside a substitution, so its ")" does not end it

        def end() -> None:
            nonlocal command
            if command:
                self.out.commands.append(command)
            command = []

        while self.i < len(self.s):
            c = self.s[self.i]
            nxt = self._peek(1)
            if c in " \t":
                self.i += 1
            elif c == "\\" and nxt == "\n":
                self.i += 2
            elif c == "\n":
                end()
                self.i += 1
                self._read_heredoc_bodies()
            elif c == "#":
                newline = self.s.find("\n", self.i)
                self.i = len(self.s) if newline == -1 else newline
            elif c == ";":
                end()
                self.i += 1
                while self._peek() in (";", "&"):  # case terminators ;; ;& ;;&
                    self.i += 1
            elif c == "|":
                end()
                self.i += 2 if nxt in "|&" else 1
            elif c == "&":
                if nxt == "&":
                    end()
                    self.i += 2
                elif nxt == ">":
                    self.i += 3 if self._peek(2) == ">" else 2
                    redirect = "target"
                else:
                    self.out.background = True
                    end()
                    self.i += 1
            elif c == "(":
                end()
                parens += 1
                self.i += 1
            elif c == ")":
                end()
                self.i += 1
                if stop == ")" and parens == 0:
                    return
                parens = max(0, parens - 1)
            elif c in "<>":
                if nxt == "(":  # process substitution: its commands run
                    self.i += 2
                    self.parse_list(stop=")")
                    command.append(_dynamic_word())
                else:
                    redirect = self._redirection()
            else:
                word = self._word()
                if self._peek() in ("<", ">") and word.plain and word.text.isdigit():
                    continue  # an fd number: "2>file"
                if redirect == "target":
                    redirect = ""
                elif redirect.startswith("heredoc"):
                    expand = all(kind == UNQUOTED for kind in word.kinds)
                    self.heredocs.append((word.text, redirect == "heredoc-strip", expand))
                    redirect = ""
                else:
                    command.append(word)
        if stop is not None:
            raise ScanError("unterminated $( or ( ... ): a closing ')' is missing")
        end()
        self._read_heredoc_bodies()

    def _redirection(self) -> str:
        """Consume a redirection operator; return what the next word is."""
        s, i = self.s, self.i
        for op in ("<<<", "<<-", "<<", "<>", "<&", ">&", ">>", ">|", "<", ">"):
            if s.startswith(op, i):
                self.i = i + len(op)
                if op == "<<-":
                    return "heredoc-strip"
                if op == "<<":
                    return "heredoc"
                return "target"
        raise AssertionError("not a redirection")  # pragma: no cover - callers check '<' / '>'

    def _read_heredoc_bodies(self) -> None:
        while self.heredocs:
            delimiter, strip, expand = self.heredocs.pop(0)
            body: list[str] = []
            while self.i < len(self.s):
                newline = self.s.find("\n", self.i)
                end = len(self.s) if newline == -1 else newline
                line = self.s[self.i : end]
                self.i = end + 1 if newline != -1 else end
                if (line.lstrip("\t") if strip else line) == delimiter:
                    break
                body.append(line)
            if expand:
                self._scan_expansions("\n".join(body))

    def _scan_expansions(self, text: str, *, process_substitutions: bool = False) -> None:
        """Scan the substitutions of double-quote-like text: an unquoted heredoc body, the body of
        ``${...}`` or ``$((...))``. Single quotes are not honoured (a quoted ``$(...)`` in there
        is scanned too: refusing more is the safe side). ``process_substitutions``: ``<(...)`` and
        ``>(...)`` run as well (bash runs them in an unquoted ``${x:-<(cmd)}``)."""
        lexer = _Lexer(text, self.out, self.depth + 1)
        lexer._double_quoted(Word(), heredoc=True, process_substitutions=process_substitutions)

    # -- words -----------------------------------------------------------------------------

    def _word(self) -> Word:
        word = Word()
        while self.i < len(self.s):
            c = self.s[self.i]
            if c in _METACHARS:
                break
            if c == "\\":
                nxt = self._peek(1)
                if nxt == "\n":
                    self.i += 2
                elif nxt:
                    word.add(nxt, QUOTED)
                    self.i += 2
                else:
                    word.add("\\", UNQUOTED)
                    self.i += 1
            elif c == "'":
                close = self.s.find("'", self.i + 1)
                if close == -1:
                    raise ScanError("unterminated single quote")
                word.add(self.s[self.i + 1 : close], QUOTED)
                self.i = close + 1
            elif c == '"':
                self.i += 1
                self._double_quoted(word)
            elif c == "$":
                self._dollar(word, in_double=False)
            elif c == "`":
                self._backtick(word)
            else:
                word.add(c, UNQUOTED)
                self.i += 1
        return word

    def _double_quoted(
        self, word: Word, *, heredoc: bool = False, process_substitutions: bool = False
    ) -> None:
        """Read up to the closing ``"`` (``self.i`` is just past the opening one), or, for a
        here-document body (``heredoc``), to the end (where ``"`` is an ordinary character).
        ``process_substitutions``: also scan ``<(...)`` and ``>(...)`` as commands."""
        escapable = ("$", "`", "\\", "\n") if heredoc else ("$", "`", '"', "\\", "\n")
        while self.i < len(self.s):
            c = self.s[self.i]
            if c == '"' and not heredoc:
                self.i += 1
                return
            if c == "\\" and self._peek(1) in escapable:
                if self._peek(1) != "\n":
                    word.add(self._peek(1), QUOTED)
                self.i += 2
            elif process_substitutions and c in "<>" and self._peek(1) == "(":
                self.i += 2
                self.parse_list(stop=")")
                word.add("$", DYNAMIC)
            elif c == "$":
                self._dollar(word, in_double=True)
            elif c == "`":
                self._backtick(word)
            else:
                word.add(c, QUOTED)
                self.i += 1
        if not heredoc:
            raise ScanError("unterminated double quote")

    def _dollar(self, word: Word, *, in_double: bool) -> None:
        nxt = self._peek(1)
        if nxt == "'" and not in_double:
            self.i += 2
            word.add(self._ansi_c(), QUOTED)
        elif nxt == '"' and not in_double:
            self.i += 2
            self._double_quoted(word)
        elif nxt == "(":
            end = self._arithmetic_end() if self._peek(2) == "(" else None
            if end is not None:
                self._scan_expansions(self.s[self.i + 3 : end - 2])
                self.i = end
            else:
                self.i += 2
                _Lexer(self.s, self.out, self.depth + 1).parse_from(self, ")")
            word.add("$", DYNAMIC)
        elif nxt == "{":
            end = self._balanced(self.i + 1, "{", "}")
            if in_double and self._balanced(self.i + 1, "{", "}", single_quotes=False) != end:
                # bash reads ' inside "${...}" as a quote, dash as a character: were they to
                # disagree on where it ends, the two would run different commands.
                raise ScanError('a \' inside "${...}" makes shells disagree where it ends')
            self._scan_expansions(self.s[self.i + 2 : end - 1], process_substitutions=not in_double)
            self.i = end
            word.add("$", DYNAMIC)
        elif nxt and (nxt in _NAME_START or nxt in _SPECIAL_PARAMS):
            self.i += 2
            if nxt in _NAME_START:
                while self._peek() and self._peek() in _NAME_CHARS:
                    self.i += 1
            word.add("$", DYNAMIC)
        else:
            word.add("$", QUOTED if in_double else UNQUOTED)
            self.i += 1

    def parse_from(self, parent: _Lexer, stop: str) -> None:
        """Continue ``parent``'s input from its position as a nested list ending at ``stop``."""
        self.i = parent.i
        self.parse_list(stop=stop)
        parent.i = self.i

    def _arithmetic_end(self) -> int | None:
        """For the ``$((`` at ``self.i``: the index just past its ``))`` when it is an arithmetic
        expansion, or None when it is a command substitution whose first command is a subshell
        (``$((cd x; ls) | wc)``): as bash decides, by whether the inner ``(`` closes right
        before a ``)``.

        Raises:
            ScanError: the inner ``(`` is never closed.
        """
        inner = self._balanced(self.i + 2, "(", ")")
        return inner + 1 if self.s[inner : inner + 1] == ")" else None

    def _balanced(self, start: int, opener: str, closer: str, *, single_quotes: bool = True) -> int:
        """Index just past the ``closer`` matching the ``opener`` at ``start``, skipping quoted
        text and backslash escapes; ``single_quotes=False`` reads ``'`` as an ordinary character.

        Raises:
            ScanError: there is no matching ``closer``.
        """
        depth = 0
        index = start
        quote = ""
        quotes = ("'", '"') if single_quotes else ('"',)
        while index < len(self.s):
            c = self.s[index]
            if quote:
                if c == "\\" and quote == '"':
                    index += 1
                elif c == quote:
                    quote = ""
            elif c == "\\":
                index += 1
            elif c in quotes:
                quote = c
            elif c == opener:
                depth += 1
            elif c == closer:
                depth -= 1
                if depth == 0:
                    return index + 1
            index += 1
        raise ScanError(f"unterminated ${opener}: a closing {closer!r} is missing")

    def _backtick(self, word: Word) -> None:
        body: list[str] = []
        index = self.i + 1
        while index < len(self.s):
            c = self.s[index]
            if c == "\\" and index + 1 < len(self.s) and self.s[index + 1] in "`\\$":
                body.append(self.s[index + 1])
                index += 2
                continue
            if c == "`":
                self.i = index + 1
                self._sub("".join(body))
                word.add("`", DYNAMIC)
                return
            body.append(c)
            index += 1
        raise ScanError("unterminated backtick substitution")

    def _ansi_c(self) -> str:
        """Decode a ``$'...'`` string (``self.i`` is just past the opening quote)."""
        out: list[str] = []
        s = self.s
        while self.i < len(s):
            c = s[self.i]
            if c == "'":
                self.i += 1
                return "".join(out)
            if c != "\\" or self.i + 1 >= len(s):
                out.append(c)
                self.i += 1
                continue
            e = s[self.i + 1]
            self.i += 2
            if e in _C_ESCAPES:
                out.append(_C_ESCAPES[e])
            elif e in "xuU":
                width = {"x": 2, "u": 4, "U": 8}[e]
                digits = _take(s, self.i, width, "0123456789abcdefABCDEF")
                self.i += len(digits)
                out.append(chr(int(digits, 16)) if digits else "\\" + e)
            elif e in "01234567":
                digits = e + _take(s, self.i, 2, "01234567")
                self.i += len(digits) - 1
                out.append(chr(int(digits, 8)))
            elif e == "c" and self.i < len(s):
                out.append(chr(ord(s[self.i]) & 0x1F))
                self.i += 1
            else:
                out.append(e if e in "\\'\"?" else "\\" + e)
        raise ScanError("unterminated $'...' string")


def _take(s: str, start: int, most: int, allowed: str) -> str:
    end = start
    while end < len(s) and end - start < most and s[end] in allowed:
        end += 1
    return s[start:end]


def _dynamic_word() -> Word:
    word = Word()
    word.add("$", DYNAMIC)
    return word
