"""Shell selection (explicit and ``auto``) and invocation forms, PowerShell and cmd included."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from mcp_localtools.errors import NotFound
from mcp_localtools.processes.shells import (
    SHELL_NAMES,
    FoundShells,
    Shell,
    account_shell,
    auto_candidates,
    command_argv,
    dialect_of,
    first_found,
    resolve_shell,
)

PATH = {"PATH": os.environ.get("PATH", os.defpath)}


@pytest.mark.parametrize(
    ("shell", "argv"),
    [
        (Shell("bash", "/bin/bash"), ["/bin/bash", "-c", "echo hi"]),
        (Shell("sh", "/bin/sh"), ["/bin/sh", "-c", "echo hi"]),
        (Shell("fish", "/usr/bin/fish"), ["/usr/bin/fish", "-c", "echo hi"]),
        (
            Shell("pwsh", "/opt/microsoft/powershell/7/pwsh"),
            [
                "/opt/microsoft/powershell/7/pwsh",
                "-NoLogo",
                "-NonInteractive",
                "-NoProfile",
                "-Command",
                "echo hi",
            ],
        ),
        (
            Shell("powershell", "C:\\Windows\\powershell.exe"),
            [
                "C:\\Windows\\powershell.exe",
                "-NoLogo",
                "-NonInteractive",
                "-NoProfile",
                "-Command",
                "echo hi",
            ],
        ),
    ],
)
def test_each_shell_family_has_its_non_interactive_invocation(shell: Shell, argv: list[str]) -> None:
    assert command_argv(shell, "echo hi") == argv


def test_the_dialect_follows_the_shell_family() -> None:
    assert [dialect_of(n) for n in ("bash", "zsh", "dash", "fish", "pwsh", "powershell", "cmd")] == [
        "sh",
        "sh",
        "sh",
        "sh",
        "powershell",
        "powershell",
        "sh",  # no cmd.exe dialect: the command tools are never served on Windows
    ]


def test_an_explicit_installed_shell_is_found_on_path() -> None:
    shell = resolve_shell("sh", default="auto", detected=None, env=PATH)
    assert shell.name == "sh" and os.path.isabs(shell.path)


def test_missing_shells_are_errors_naming_them() -> None:
    with pytest.raises(NotFound, match="shell not found: fish on PATH"):
        resolve_shell("fish", default="auto", detected=None, env={"PATH": "/nonexistent"})
    with pytest.raises(NotFound, match="pwsh requested but not found on PATH"):
        resolve_shell("pwsh", default="auto", detected=None, env={"PATH": "/nonexistent"})


def test_the_first_installed_candidate_is_taken_by_name_or_path() -> None:
    sh = first_found(["no-such-shell", "sh"], PATH["PATH"])
    assert sh is not None and sh.name == "sh" and os.path.isabs(sh.path)
    by_path = first_found(["/nonexistent/bash", sh.path], PATH["PATH"])
    assert by_path is not None and by_path.path in (sh.path, shutil.which("bash"))
    assert first_found(["no-such-shell"], PATH["PATH"]) is None


def test_auto_prefers_the_configured_default_then_the_detected_shell() -> None:
    assert resolve_shell("auto", default="sh", detected=Shell("bash", "/bin/bash"), env=PATH).name == "sh"
    detected = Shell("dash", "/usr/bin/dash")
    assert resolve_shell("auto", default="auto", detected=detected, env=PATH) is detected


def test_auto_order_is_shell_env_then_account_shell_then_the_list() -> None:
    account = account_shell()
    login = (
        [account]
        if account and os.path.basename(account) in SHELL_NAMES and account != "/usr/bin/dash"
        else []
    )
    candidates = auto_candidates({"SHELL": "/usr/bin/dash"}, windows=False)
    assert candidates == ["/usr/bin/dash", *login, "bash", "zsh", "sh", "dash", "ksh", "fish"]
    assert auto_candidates({"SHELL": "/usr/bin/python3"}, windows=False)[0] != "/usr/bin/python3"
    assert auto_candidates({}, windows=True) == ["pwsh", "powershell"]


def test_auto_falls_back_to_a_shell_on_path() -> None:
    shell = resolve_shell(
        "auto", default="auto", detected=None, env={"PATH": PATH["PATH"], "SHELL": "/nope/zsh"}
    )
    assert shell.name in ("zsh", "bash", "sh", "dash", "ksh", "fish")


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions")
def test_a_kept_shell_is_looked_up_again_when_anything_it_was_found_past_changes(tmp_path: Path) -> None:
    first, second, third = (tmp_path / name for name in ("first", "second", "third"))
    for directory in (first, second, third):
        directory.mkdir()
    search_path = os.pathsep.join(map(str, (first, second, third)))
    (third / "fish").write_text("#!/bin/sh\n", encoding="utf-8")
    (third / "fish").chmod(0o755)
    found = FoundShells()
    assert found.find("fish", search_path) == Shell("fish", str(third / "fish"))
    assert found.find("fish", search_path) == Shell("fish", str(third / "fish"))  # kept
    (first / "fish").write_text("#!/bin/sh\n", encoding="utf-8")  # not executable: passed over
    assert found.find("fish", search_path) == Shell("fish", str(third / "fish"))
    (first / "fish").chmod(0o755)  # now it is the first
    assert found.find("fish", search_path) == Shell("fish", str(first / "fish"))
    (first / "fish").unlink()
    (second / "fish").symlink_to(third / "fish")
    assert found.find("fish", search_path) == Shell("fish", str(second / "fish"))
    (second / "fish").unlink()
    (third / "fish").unlink()
    assert found.find("fish", search_path) is None
    with pytest.raises(NotFound, match="shell not found: fish"):
        resolve_shell("fish", default="auto", detected=None, env={"PATH": search_path}, find=found.find)


def _executable(path: Path) -> Path:
    path.write_text("#!/bin/sh\n", encoding="utf-8")
    path.chmod(0o755)
    return path


# (case, the name looked up ("/" starts an absolute path in the test's directory), the PATH's
# directories, what is there before: (path, "program" / "file" / "directory"), and the change
# between the answers: (path, "program" / "chmod -x" / "chmod +x" / "symlink to c/fish"))
KEPT_CASES = [
    ("absolute path", "/c/fish", "abc", [("c/fish", "program")], ("c/fish", "chmod -x")),
    ("absolute, not executable", "/b/fish", "abc", [("b/fish", "file")], ("b/fish", "chmod +x")),
    ("third of three directories", "fish", "abc", [("c/fish", "program")], ("a/fish", "program")),
    ("a directory repeated", "fish", "bcbca", [("c/fish", "program")], ("b/fish", "program")),
    ("missing", "fish", "abc", [], ("b/fish", "program")),
    (
        "not executable first",
        "fish",
        "abc",
        [("b/fish", "file"), ("c/fish", "program")],
        ("b/fish", "chmod +x"),
    ),
    (
        "a directory of that name first",
        "fish",
        "abc",
        [("a/fish", "directory"), ("c/fish", "program")],
        ("b/fish", "symlink to c/fish"),
    ),
]


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX lookups (Windows adds PATHEXT: not kept)")
@pytest.mark.parametrize(
    ("name", "dirs", "there", "change"),
    [case[1:] for case in KEPT_CASES],
    ids=[case[0] for case in KEPT_CASES],
)
def test_a_kept_answer_is_what_shutil_which_says_before_and_after_a_change(
    tmp_path: Path, name: str, dirs: str, there: list[tuple[str, str]], change: tuple[str, str]
) -> None:
    # FoundShells keeps an answer with the paths shutil.which tried to reach it (``_candidates``,
    # which mirrors which's own loop): this pins the two together. Each answer is asked for twice
    # (the second may be the kept one), before and after a change which sees; each must be which's.
    for directory in "abc":
        (tmp_path / directory).mkdir()
    for path, kind in there:
        _make(tmp_path / path, kind)
    search_path = os.pathsep.join(str(tmp_path / directory) for directory in dirs)
    name = str(tmp_path) + name if name.startswith("/") else name
    found = FoundShells()
    for step in ("before", "after"):
        if step == "after":
            _make(tmp_path / change[0], change[1])
        for _ in range(2):
            shell = found.find(name, search_path)
            assert (shell.path if shell else None) == shutil.which(name, path=search_path), step


def _make(path: Path, kind: str) -> None:
    if kind == "program":
        _executable(path)
    elif kind == "file":
        path.write_text("#!/bin/sh\n", encoding="utf-8")
    elif kind == "directory":
        path.mkdir()
    elif kind in ("chmod +x", "chmod -x"):
        path.chmod(0o755 if kind == "chmod +x" else 0o644)
    else:
        path.symlink_to(path.parent.parent / kind.removeprefix("symlink to "))
