"""The PowerShell side of the command scanner (pwsh runs on Linux and macOS too).

It splits a command string into simple commands (lists of ``Word``) the way the seed does:
separators ``;`` ``|`` ``||`` ``&&`` newline ``(`` ``)`` ``{`` ``}``; single quotes
  (``''`` is a quote), double quotes (backtick escapes, ``""``), backtick escapes outside quotes;
  ``#`` outside quotes comments out the rest of the line, ``<# ... #>`` is a block comment; ``$``
  starts a variable or subexpression (a run-time value); a lone ``&`` at the start of a command is
  the call operator and is dropped, elsewhere it is the background operator.

Less thorough than the sh lexer on purpose: the seed's behaviour is the reference. (cmd.exe is
not read: the command tools need POSIX process groups, so they are never served on Windows.)
"""

from __future__ import annotations

from mcp_localtools.errors import ScanError
from mcp_localtools.policy.sh_lexer import DYNAMIC, QUOTED, UNQUOTED, ShCommands, Word

__all__ = ["lex_powershell"]


class _Builder:
    """The commands lexed so far, the command being lexed and the word being lexed."""

    def __init__(self) -> None:
        self.out = ShCommands()
        self.command: list[Word] = []
        self.current: Word | None = None

    @property
    def at_command_start(self) -> bool:
        """True when the current command has no word yet and none is being lexed (an empty quoted
        word, such as ``''``, does not count)."""
        return self.current is None and not self.command

    def word(self) -> Word:
        """The word being lexed, started if there is none."""
        if self.current is None:
            self.current = Word()
        return self.current

    def end_word(self) -> None:
        if self.current is not None and self.current.chars:
            self.command.append(self.current)
        self.current = None

    def end_command(self) -> None:
        self.end_word()
        if self.command:
            self.out.commands.append(self.command)
        self.command = []


def lex_powershell(source: str) -> ShCommands:  # noqa: C901, PLR0915 - one pass over PowerShell tokens
    """Split a PowerShell command string into simple commands.

    Raises:
        ScanError: an unterminated quote or block comment.
    """
    built = _Builder()
    end_word, end_command = built.end_word, built.end_command
    i, n = 0, len(source)

    while i < n:
        c = source[i]
        nxt = source[i + 1] if i + 1 < n else ""
        if c in " \t\r":
            end_word()
            i += 1
        elif c == "<" and nxt == "#":
            close = source.find("#>", i + 2)
            if close == -1:
                raise ScanError("unterminated <# block comment")
            end_word()
            i = close + 2
        elif c == "#":
            end_word()
            newline = source.find("\n", i)
            i = n if newline == -1 else newline
        elif c in "\n;(){}":
            end_command()
            i += 1
        elif c == "|":
            end_command()
            i += 2 if nxt == "|" else 1
        elif c == "&":
            if nxt == "&":
                end_command()
                i += 2
            elif built.at_command_start:
                i += 1  # the call operator: "& 'C:\\tools\\x.exe' args"
            else:
                built.out.background = True
                end_command()
                i += 1
        else:
            word = built.word()
            if c == "`":
                if nxt:
                    word.add(nxt, QUOTED)
                i += 2
            elif c == "'":
                i = _ps_single(source, i + 1, word)
            elif c == '"':
                i = _ps_double(source, i + 1, word)
            elif c == "$":
                word.add("$", DYNAMIC)
                i += 1
            else:
                word.add(c, UNQUOTED)
                i += 1
    end_command()
    return built.out


def _ps_single(source: str, i: int, word: Word) -> int:
    while i < len(source):
        if source[i] == "'":
            if source.startswith("''", i):
                word.add("'", QUOTED)
                i += 2
                continue
            return i + 1
        word.add(source[i], QUOTED)
        i += 1
    raise ScanError("unterminated single quote")


def _ps_double(source: str, i: int, word: Word) -> int:
    while i < len(source):
        c = source[i]
        if c == "`" and i + 1 < len(source):
            word.add(source[i + 1], QUOTED)
            i += 2
        elif c == '"':
            if source.startswith('""', i):
                word.add('"', QUOTED)
                i += 2
                continue
            return i + 1
        elif c == "$":
            word.add("$", DYNAMIC)
            i += 1
        else:
            word.add(c, QUOTED)
            i += 1
    raise ScanError("unterminated double quote")
