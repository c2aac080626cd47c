"""The platform boundary (``compat``), proved on Linux.

The package must import, and serve its file tools, where the POSIX-only modules do not exist
(Windows): a subprocess blocks them before the first import. Tools that need directory
descriptors or process groups are left out, with a logged reason, where those are missing: a
subprocess removes them from ``os`` first. The rest are unit tests of compat's pieces here.
"""

from __future__ import annotations

import ast
import json
import os
import pwd
import signal
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mcp_localtools import compat
from tests.helpers import make_png

_PROBE = """
import json, logging, os, sys

for name in ("fcntl", "resource", "termios", "pwd", "grp"):
    sys.modules[name] = None  # importing it now raises ImportError, as on Windows
if sys.argv[2] == "no-dir-fd-no-process-groups":
    os.supports_dir_fd.clear()
    del os.killpg, os.setsid
logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")

import anyio
from mcp_localtools import build_registry, parse_config

registry = build_registry(parse_config({"paths": {"allowed_roots": [sys.argv[1]]}}), environ=os.environ)


async def main():
    results = {}
    for name, arguments in json.loads(sys.argv[3]):
        if name in registry:
            result = await registry.call(name, arguments)
            results[name] = {"error": result.error and result.error.code, "data": result.structured}
    return results


print(json.dumps({"tools": registry.names(), "results": anyio.run(main)}))
"""


def _probe(root: Path, mode: str, calls: list[tuple[str, dict[str, Any]]]) -> tuple[dict[str, Any], str]:
    """Run ``_PROBE`` in a fresh interpreter; its JSON report and its stderr (the log)."""
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, str(root), mode, json.dumps(calls)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=root,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    return report, done.stderr


def test_the_package_imports_and_serves_files_and_commands_with_the_posix_only_modules_blocked(
    tmp_path: Path,
) -> None:
    calls: list[tuple[str, dict[str, Any]]] = [
        ("writefile", {"path": "notes.txt", "content": "alpha\nbeta\n"}),
        ("editfile", {"path": "notes.txt", "edits": [{"oldText": "beta", "newText": "gamma"}]}),
        ("readfile", {"path": "notes.txt"}),
        ("listdirectory", {"path": "."}),
        ("shellcommand", {"commands": ["cat notes.txt"]}),
    ]
    report, log = _probe(tmp_path, "posix-modules-blocked", calls)

    assert {name: result["error"] for name, result in report["results"].items()} == dict.fromkeys(
        ["writefile", "editfile", "readfile", "listdirectory", "shellcommand"]
    )
    assert (tmp_path / "notes.txt").read_text(encoding="utf-8") == "alpha\ngamma\n"
    assert "gamma" in json.dumps(report["results"]["shellcommand"]["data"])
    assert "not available on this platform" not in log


def test_without_directory_descriptors_or_process_groups_the_tools_needing_them_are_left_out_and_logged(
    tmp_path: Path,
) -> None:
    (tmp_path / "notes.txt").write_text("alpha\nbeta\n", encoding="utf-8")
    (tmp_path / "dot.png").write_bytes(make_png())
    calls: list[tuple[str, dict[str, Any]]] = [
        ("readfile", {"path": "notes.txt"}),
        ("readtextrange", {"path": "notes.txt", "startLine": 2}),
        ("findtext", {"path": "notes.txt", "query": "beta"}),
        ("statpath", {"path": "notes.txt"}),
        ("readimage", {"path": "dot.png"}),
        ("writefile", {"path": "new.txt", "content": "x"}),
    ]
    report, log = _probe(tmp_path, "no-dir-fd-no-process-groups", calls)

    assert report["tools"] == [
        "findtext",
        "httpget",  # needs no filesystem descriptors
        "mimeforextension",
        "mimeforpath",
        "readfile",
        "readimage",
        "readtextrange",
        "statpath",
    ]
    assert {name: result["error"] for name, result in report["results"].items()} == dict.fromkeys(
        ["readfile", "readtextrange", "findtext", "statpath", "readimage"]
    )
    assert report["results"]["readimage"]["data"]["width"] == 4
    assert not (tmp_path / "new.txt").exists()
    lines = [line for line in log.splitlines() if "not available on this platform" in line]
    assert len(lines) == 2, log
    assert lines[0].startswith("WARNING mcp_localtools.tools: not available on this platform: copypath, ")
    assert "writefile (this platform cannot open directories as descriptors" in lines[0]
    assert (
        "listprocesses, processoutput, runscript, shellcommand, startprocess, stopprocess, waitprocess, "
        "writeprocess (this platform has no POSIX sessions and process groups" in lines[1]
    )


def test_this_linux_has_every_capability_so_nothing_is_unsupported() -> None:
    assert compat.SUPPORTS_DIR_FD
    assert compat.HAS_PROCESS_GROUPS
    assert compat.HAS_PROCFS
    assert compat.HAS_PRCTL
    assert not compat.IS_WINDOWS
    assert compat.why_unsupported(dir_fd=True, process_groups=True) is None


def test_the_open_flags_are_the_os_values_here_and_windows_binary_mode_is_zero() -> None:
    assert (compat.O_NOFOLLOW, compat.O_DIRECTORY, compat.O_CLOEXEC, compat.O_NONBLOCK, compat.O_PATH) == (
        os.O_NOFOLLOW,
        os.O_DIRECTORY,
        os.O_CLOEXEC,
        os.O_NONBLOCK,
        os.O_PATH,
    )
    assert compat.O_BINARY == 0


def test_fd_path_names_the_open_file_where_it_is_now_and_after_it_was_deleted(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x", encoding="utf-8")
    fd = os.open(tmp_path / "a.txt", os.O_RDONLY)
    try:
        (tmp_path / "a.txt").rename(tmp_path / "b.txt")
        assert compat.fd_path(fd) == str(tmp_path.resolve() / "b.txt")
        (tmp_path / "b.txt").unlink()
        assert compat.fd_path(fd) == str(tmp_path.resolve() / "b.txt")
    finally:
        os.close(fd)


def test_fd_path_is_none_for_a_pipe() -> None:
    read_end, write_end = os.pipe()
    try:
        assert compat.fd_path(read_end) is None
    finally:
        os.close(read_end)
        os.close(write_end)


def test_pread_reads_at_an_offset_without_moving_the_position(tmp_path: Path) -> None:
    (tmp_path / "a.bin").write_bytes(b"0123456789")
    fd = os.open(tmp_path / "a.bin", os.O_RDONLY)
    try:
        assert compat.pread(fd, 3, 4) == b"456"
        assert os.read(fd, 2) == b"01"
    finally:
        os.close(fd)


def test_fchmod_sets_the_permission_bits_of_the_open_file(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x", encoding="utf-8")
    fd = os.open(tmp_path / "a.txt", os.O_RDONLY)
    try:
        compat.fchmod(fd, 0o640)
    finally:
        os.close(fd)
    assert stat.S_IMODE((tmp_path / "a.txt").stat().st_mode) == 0o640


def test_login_shell_is_the_account_database_entry() -> None:
    assert compat.login_shell() == (pwd.getpwuid(os.getuid()).pw_shell or None)


def test_getsid_is_the_session_of_the_process() -> None:
    assert compat.getsid(0) == os.getsid(0)


def test_killpg_signals_the_new_process_group_of_a_command() -> None:
    child = subprocess.Popen(["sleep", "30"], start_new_session=True)
    try:
        compat.killpg(child.pid, compat.SIGKILL)
        assert child.wait(timeout=10) == -signal.SIGKILL
    finally:
        child.kill()
        child.wait()


def test_a_pidfd_signals_the_process_it_was_opened_for() -> None:
    child = subprocess.Popen(["sleep", "30"])
    try:
        fd = compat.pidfd_open(child.pid)
        try:
            compat.pidfd_send_signal(fd, signal.SIGTERM)
        finally:
            os.close(fd)
        assert child.wait(timeout=10) == -signal.SIGTERM
    finally:
        child.kill()
        child.wait()


def test_waitpid_nohang_returns_at_once_while_the_child_runs() -> None:
    child = subprocess.Popen(["sleep", "30"])
    try:
        assert compat.waitpid_nohang(child.pid) == (0, 0)
    finally:
        child.kill()
        child.wait()
    with pytest.raises(ChildProcessError):
        compat.waitpid_nohang(child.pid)


def test_boot_ticks_are_in_the_unit_of_proc_start_times() -> None:
    stat_line = Path("/proc/self/stat").read_bytes()
    started = int(stat_line[stat_line.rfind(b")") + 2 :].split()[19])
    first = compat.boot_ticks()
    assert started <= first <= compat.boot_ticks()


def test_prctl_answers_a_query_and_refuses_an_unknown_option() -> None:
    pr_get_dumpable = 3
    assert compat.prctl(pr_get_dumpable, 0) in (0, 1, 2)
    assert compat.prctl(0xDEAD, 0) == -1


def test_compat_imports_nothing_from_the_package_but_its_own_modules() -> None:
    for path in Path(compat.__file__).parent.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = [a.name for node in ast.walk(tree) if isinstance(node, ast.Import) for a in node.names]
        imported += [node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]
        ours = [name for name in imported if name.startswith("mcp_localtools")]
        assert [name for name in ours if not name.startswith("mcp_localtools.compat.")] == [], path
        assert not any(node.level for node in ast.walk(tree) if isinstance(node, ast.ImportFrom))
