"""When a trusted ``git`` may run programs other than git (``[approval] trusted_commands``).

git runs programs through its configuration, its options and some of its commands
(``git -c alias.x='!cmd' x``, ``rebase --exec``, ``bisect run``, ``clone --template``): a call of
a trusted ``git`` runs unasked only with a command of ``_GIT_TRUSTED_COMMANDS`` and none of the
options that choose a program or another repository (git(1) and its commands' pages).
"""

from __future__ import annotations

from mcp_localtools.policy.scanner import MAX_ARGS

__all__ = ["git_may_run_programs"]

_GIT_PROGRAM_OPTIONS = tuple(
    "--config-env --exec-path --git-dir --work-tree --exec --extcmd --upload-pack --receive-pack "
    "--open-files-in-pager --tree-filter --index-filter --msg-filter".split()
)
"""git long options that run a program of the caller's choosing (``rebase --exec``, ``difftool
--extcmd``, ``fetch --upload-pack``, ``grep --open-files-in-pager``) or read configuration and
hooks from another repository (``--git-dir``, ``--work-tree``): git(1) and its commands' pages.
git takes any unambiguous prefix (``--exe=cmd``), so a prefix of one counts too."""
_GIT_PROGRAM_SHORT = frozenset("cCxOu")
"""git short options of that kind: ``-c alias.x='!cmd'``, ``-C dir``, ``rebase -x``, ``grep -O``,
``clone -u``; short options group and take their value attached (``-ixcmd``), so any single-dash
word holding one of these letters counts."""
_GIT_TRUSTED_COMMANDS = frozenset(
    "status log diff show branch add commit rev-parse rev-list ls-files ls-tree cat-file show-ref "
    "blame shortlog describe tag stash grep checkout switch restore fetch pull push merge rebase "
    "reset remote cherry-pick revert mv rm clean reflog range-diff format-patch am apply notes "
    "worktree var".split()
)
"""The git commands a trusted ``git`` may run unasked (with none of the options below). Any other
(``config``, ``bisect run``, ``submodule foreach``, ``clone``/``init --template``, ``send-email``,
``daemon``, ``instaweb``, ``difftool``, ...) is asked about: a list of what is allowed holds where
a list of what runs programs keeps missing one."""
_GIT_TRUSTED_GLOBALS = frozenset(
    "--no-pager -P --no-optional-locks --literal-pathspecs --glob-pathspecs --noglob-pathspecs "
    "--icase-pathspecs --no-replace-objects --version".split()
)
"""git's options before the command that may stand there unasked; any other (``--namespace X``,
``--attr-source X``: their value would be read as the command) is asked about."""


def git_may_run_programs(args: tuple[str | None, ...]) -> bool:
    """True when a git invocation's words may make it run a program other than git: a word computed
    at run time, more words than the scanner keeps, an option before the command outside
    ``_GIT_TRUSTED_GLOBALS``, a command outside ``_GIT_TRUSTED_COMMANDS``, any ``--config*`` option,
    a long option of ``_GIT_PROGRAM_OPTIONS`` or a prefix of one, a short option group holding a
    letter of ``_GIT_PROGRAM_SHORT``."""
    if len(args) >= MAX_ARGS or None in args:
        return True
    words = [word for word in args if word is not None]
    at = next((index for index, word in enumerate(words) if not word.startswith("-")), len(words))
    if any(word not in _GIT_TRUSTED_GLOBALS for word in words[:at]):
        return True
    if at < len(words) and words[at] not in _GIT_TRUSTED_COMMANDS:
        return True
    for word in words:
        if word.startswith("--"):
            name = word.split("=", 1)[0]
            if name.startswith("--config") or (
                len(name) > 2 and any(option.startswith(name) for option in _GIT_PROGRAM_OPTIONS)
            ):
                return True
        elif word.startswith("-") and _GIT_PROGRAM_SHORT & set(word[1:]):
            return True
    return False
