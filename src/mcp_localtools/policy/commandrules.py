"""The rules of the command policy, each with why: the hard blocklist (the seed's names), what a
contained command may use anyway, the destructive and strict presets, the ``env`` names a call may
not set, the limits of a call's environment, stdin and script arguments, the alternative each
refusal offers the model, and the fork-bomb shape (``has_fork_bomb``, linear time).
``execution.ExecutionPolicy`` applies them in order."""

from __future__ import annotations

import re

__all__ = [
    "ALTERNATIVES",
    "ALWAYS_ALLOWED",
    "CONTAINED_BACKENDS",
    "DESTRUCTIVE_PATTERNS",
    "FED_SHELL",
    "HARD_BLOCKLIST",
    "HARMLESS_PYTHON_ENV",
    "KILL_GRACE_SECONDS",
    "MAX_ENV_KEY_BYTES",
    "MAX_ENV_TOTAL_BYTES",
    "MAX_ENV_VALUE_BYTES",
    "MAX_ENV_VARS",
    "MAX_SCRIPT_ARGS",
    "MAX_SCRIPT_ARG_BYTES",
    "MAX_STDIN_BYTES",
    "NETWORK_ONLY",
    "REFUSED_ENV",
    "SAFE_ENV",
    "STRICT_BLOCKLIST",
    "STRICT_PATTERNS",
    "has_fork_bomb",
]

HARD_BLOCKLIST = frozenset(
    """sudo su rm mkfs shutdown reboot halt poweroff
    vim vi nano emacs less more top htop
    curl wget nc netcat ncat socat ssh scp sftp ftp tftp telnet
    invoke-webrequest iwr invoke-restmethod irm
    diskpart format.com del erase rmdir rd remove-item ri""".split()
)
"""The seed's 40 command names: always blocked, whatever the config says."""

NETWORK_ONLY = frozenset({"curl", "wget"})
"""Hard-blocked names whose only danger is what they reach: where the sandbox decides that
(``CONTAINED_BACKENDS``), they run; a download piped into a shell stays refused (a pattern)."""

CONTAINED_BACKENDS = frozenset({"bwrap", "seatbelt"})
"""Sandboxes that contain a command's network and files fully (Landlock does not hide ``/proc``
or stop ``chmod``; ``off`` contains nothing)."""

ALWAYS_ALLOWED = frozenset(
    "cd pwd echo printf true false test [ : export unset set shift exit return wait read".split()
)
"""Shell builtins that run no program; with ``deny_by_default`` they need no allowlist entry."""

DESTRUCTIVE_PATTERNS = (
    ("chmod 777", r"\bchmod\s+(?:-\S+\s+)*0?777\b"),
    ("dd onto a device", r"\bdd\b[^|;&]*\bof=/dev/"),
    ("a write to a disk device", r">\s*/dev/(?:sd|hd|vd|xvd|nvme|mmcblk|disk|dm-|md|loop|sr)"),
    ("--no-preserve-root", r"--no-preserve-root"),
    ("eval of a variable", r"\beval\s+[\"']?\$"),
    ("a download piped into a shell", r"\b(?:curl|wget)\b[^;&]*\|\s*(?:\S*/)?(?:ba|da|z|k)?sh\b"),
)
"""The seeds' default destructive patterns, refused unless ``allow_dangerous`` (``rm``, ``mkfs``,
``curl`` and ``wget`` are blocked by name, fork bombs by their own check)."""

STRICT_BLOCKLIST = frozenset(
    """rm rmdir sudo su chmod chown dd mkfs fdisk mount umount kill killall pkill reboot shutdown
    passwd useradd userdel groupadd""".split()
)
"""``preset = "strict"``: Hector's default denied commands, added to the blocklist."""

STRICT_PATTERNS = (
    ("rm -rf", r"\brm\s+(?:-rf|-fr|--recursive)"),
    ("a redirect into /dev", r">\s*/dev/"),
    ("a redirect into /etc", r">\s*/etc/"),
    ("a substitution redirected to /", r"\$\(.*\)\s*>\s*/"),
    ("eval of a variable", r"\beval\s*\$"),
)
"""``preset = "strict"``: Hector's default denied patterns, on top of ``DESTRUCTIVE_PATTERNS``."""

FED_SHELL = (
    r"\|\s*(?:\S*/)?(?:sh|bash|dash|zsh|ksh|mksh|fish|pwsh)\b"
    r"|\b(?:sh|bash|dash|zsh|ksh|mksh|fish|pwsh)\b[^|;&]*<<"
)
"""A shell fed its script through a pipe or a here-document (RE2, compiled on first use)."""

REFUSED_ENV = (
    "LD_*",
    "DYLD_*",
    "BASH_ENV",
    "ENV",
    "PROMPT_COMMAND",
    "SHELLOPTS",
    "BASHOPTS",
    "PS4",
    "IFS",
    "BASH_FUNC_*",
    "ZDOTDIR",
    "HOME",
    "XDG_*",
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_COMMON_DIR",
    "GIT_TEMPLATE_DIR",
    "GIT_CEILING_DIRECTORIES",
    "GIT_CONFIG*",
    "GIT_SSH*",
    "GIT_EXEC_PATH",
    "GIT_EXTERNAL_DIFF",
    "GIT_ASKPASS",
    "GIT_EDITOR",
    "GIT_SEQUENCE_EDITOR",
    "GIT_PROXY_COMMAND",
    "GIT_SHELL_PATH",
    "GIT_ALLOW_PROTOCOL",
    "GIT_PROTOCOL_FROM_USER",
    "GIT_ATTR_*",
    "GIT_TRACE*",
    "GIT_REDIRECT_*",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_INDEX_FILE",
    "SSH_ASKPASS",
    "*PAGER",
    "EDITOR",
    "VISUAL",
    "PYTHON*",
    "NODE_OPTIONS",
    "NODE_PATH",
    "PERL5OPT",
    "PERL5LIB",
    "PERLLIB",
    "RUBYOPT",
    "RUBYLIB",
    "JAVA_TOOL_OPTIONS",
    "_JAVA_OPTIONS",
    "LESSOPEN",
    "LESSCLOSE",
    "GCONV_PATH",
    "OPENSSL_CONF",
    "RUSTC_WRAPPER",
)
"""``env`` names (globs, upper case) a call may not set unless ``[exec] allowed_env`` lists them:
each makes an allowed program load or run code of the caller's choosing (git's editors, proxy,
ssh and shell: git(1), git-var(1); ``GIT_ALLOW_PROTOCOL`` would allow the ``ext::`` transport,
which runs a command), write files (``GIT_TRACE*``, ``GIT_REDIRECT_*``), or read its
configuration or objects from elsewhere (``HOME``, ``XDG_*``, ``GIT_DIR``, ``GIT_ATTR_*``).
Under ``deny_by_default`` only ``SAFE_ENV`` and ``allowed_env`` may be set at all: no denylist can
foresee every program."""

HARMLESS_PYTHON_ENV = frozenset(
    {"PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE", "PYTHONIOENCODING", "PYTHONUTF8", "PYTHONHASHSEED"}
)
"""``PYTHON*`` names that change no code path a caller could use (output buffering, encodings)."""

SAFE_ENV = ("LANG", "LC_*", "LANGUAGE", "TZ", "TERM", "COLUMNS", "LINES", "NO_COLOR", "FORCE_COLOR", "CI")
"""``env`` names a call may set under ``deny_by_default`` without ``allowed_env``."""

MAX_ENV_VARS = 256
MAX_ENV_KEY_BYTES = 256
MAX_ENV_VALUE_BYTES = 32 * 1024
MAX_ENV_TOTAL_BYTES = 256 * 1024
MAX_STDIN_BYTES = 1024 * 1024
"""Largest ``stdin`` text a call may pass (bytes, UTF-8)."""
MAX_SCRIPT_ARGS = 256
MAX_SCRIPT_ARG_BYTES = 16 * 1024
KILL_GRACE_SECONDS = 0.5
"""Between SIGTERM and SIGKILL of a command's processes."""

_DELETE = "use the deletefile tool instead (it moves files to the trash, where they can be restored)"
_EDIT = "use the readfile and writefile tools instead of an interactive editor"
_PAGER = "use the readfile tool, or pipe into head/tail instead of a pager"
_NETWORK = "commands get no network tools; fetch nothing, or ask the user to"
_PRIVILEGE = "commands run as the server's user and cannot gain privileges; ask the user to run it"
_SYSTEM = "changing the machine's state (power, disks) is not allowed; ask the user to do it"
ALTERNATIVES: dict[str, str] = {
    **dict.fromkeys("rm rmdir rd del erase remove-item ri".split(), _DELETE),
    **dict.fromkeys("vim vi nano emacs".split(), _EDIT),
    **dict.fromkeys("less more".split(), _PAGER),
    **dict.fromkeys("top htop".split(), "use `ps aux` for a one-shot process list"),
    **dict.fromkeys(
        "curl wget nc netcat ncat socat ssh scp sftp ftp tftp telnet "
        "invoke-webrequest iwr invoke-restmethod irm".split(),
        _NETWORK,
    ),
    **dict.fromkeys("sudo su".split(), _PRIVILEGE),
    **dict.fromkeys("mkfs shutdown reboot halt poweroff diskpart format format.com".split(), _SYSTEM),
}
_NAME_RUN = re.compile(r"[\w:.-]*")
"""The characters of a function name the fork-bomb check reads (a run: no backtracking)."""


def has_fork_bomb(command: str) -> bool:
    """True when ``command``, whitespace left out, holds ``NAME(){NAME|NAME&};NAME`` (the ``;``
    optional; NAME of word characters, ``:``, ``.`` and ``-``): the fork bomb ``:(){ :|:& };:``
    under any name. What a backtracking pattern with backreferences found (quadratic on a long
    word: 65,536 bytes took 21 s), in time linear in ``command``'s length: at each ``(){``, NAME
    is the run of name characters after it (it must end at ``|``), and the text before ``(){``
    must end with it."""
    text = "".join(command.split())
    start = text.find("(){")
    while start != -1:
        body = start + 3
        run = _NAME_RUN.match(text, body)
        name = run.group() if run is not None else ""
        end = body + len(name)
        if name and text.endswith(name, 0, start) and text.startswith(f"|{name}&}}", end):
            after = end + len(name) + 3
            if text.startswith(name, after + 1 if text.startswith(";", after) else after):
                return True
        start = text.find("(){", start + 1)
    return False
