"""Run a command under Landlock: the sandbox where bubblewrap cannot create its namespaces.

Run as a script, never imported by the server (it must start fast and import nothing of the
package)::

    python -I -S landlock_exec.py SPEC_JSON -- PROGRAM ARG...

``SPEC_JSON`` is ``{"read": [...], "write": [...], "network": bool}``: absolute paths whose
hierarchies may be read (and executed), or read and written. The script restricts itself with a
Landlock ruleset (``landlock(7)``) and ``PR_SET_NO_NEW_PRIVS``, then ``execvp``s the program, which
inherits the restriction with everything it starts. What the kernel's ABI offers is used: file
access (ABI 1-3, 5), TCP bind and connect (ABI 4: none unless ``network``), and signals and
abstract UNIX sockets scoped to the sandbox (ABI 6). Landlock does not restrict ``chmod``,
``chown`` or other metadata changes, hides nothing from ``/proc``, and has no PID namespace.

Exit status 125 and a line on stderr when the restriction cannot be applied (the command did not
run); ``--probe`` prints the ABI version and exits 0 when Landlock works.
"""

from __future__ import annotations

import ctypes
import json
import os
import platform
import stat
import sys

_SYS_CREATE_RULESET = {"x86_64": 444, "aarch64": 444}
_SYS_ADD_RULE = {"x86_64": 445, "aarch64": 445}
_SYS_RESTRICT_SELF = {"x86_64": 446, "aarch64": 446}
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38

# Access rights (include/uapi/linux/landlock.h), by the ABI that introduced them.
_EXECUTE, _WRITE_FILE, _READ_FILE, _READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_FS_V1 = (1 << 13) - 1  # execute .. make_sym
_REFER, _TRUNCATE, _IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
_NET_BIND_TCP, _NET_CONNECT_TCP = 1 << 0, 1 << 1
_SCOPE_ABSTRACT_UNIX_SOCKET, _SCOPE_SIGNAL = 1 << 0, 1 << 1
_O_PATH: int = getattr(os, "O_PATH", 0)  # Linux only, like Landlock
_O_CLOEXEC: int = getattr(os, "O_CLOEXEC", 0)
_DEVICES = (
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
    "/dev/pts",
    "/dev/shm",  # noqa: S108 - shared memory, as every sandbox grants it
)


class _RulesetAttr(ctypes.Structure):
    _fields_ = (
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    )


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = (("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32))


def _syscall(libc: ctypes.CDLL, table: dict[str, int], *args: object) -> int:
    number = table.get(platform.machine())
    if number is None:
        raise OSError(f"Landlock syscall numbers unknown for {platform.machine()}")
    result = int(libc.syscall(number, *args))
    if result < 0:
        errno = ctypes.get_errno()
        raise OSError(errno, os.strerror(errno))
    return result


def abi_version(libc: ctypes.CDLL) -> int:
    """The kernel's Landlock ABI version (0 when Landlock is off or missing)."""
    try:
        return _syscall(
            libc, _SYS_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION)
        )
    except OSError:
        return 0


def restrict(read: list[str], write: list[str], network: bool) -> int:
    """Restrict this process (and what it will start) to ``read`` and ``write``; returns the ABI.

    Raises:
        OSError: Landlock is unavailable or a rule cannot be added.
    """
    libc = ctypes.CDLL(None, use_errno=True)
    abi = abi_version(libc)
    if abi < 1:
        raise OSError("Landlock is not enabled in this kernel (needs Linux 5.13+, lsm=landlock)")
    fs = (
        _FS_V1
        | (_REFER if abi >= 2 else 0)
        | (_TRUNCATE if abi >= 3 else 0)
        | (_IOCTL_DEV if abi >= 5 else 0)
    )
    attr = _RulesetAttr(
        handled_access_fs=fs,
        handled_access_net=(_NET_BIND_TCP | _NET_CONNECT_TCP) if abi >= 4 and not network else 0,
        scoped=(_SCOPE_ABSTRACT_UNIX_SOCKET | _SCOPE_SIGNAL) if abi >= 6 else 0,
    )
    size = ctypes.sizeof(_RulesetAttr) if abi >= 6 else (16 if abi >= 4 else 8)
    ruleset = _syscall(
        libc, _SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0)
    )
    reading = _EXECUTE | _READ_FILE | _READ_DIR
    file_rights = (
        _EXECUTE | _WRITE_FILE | _READ_FILE | (_TRUNCATE if abi >= 3 else 0) | (_IOCTL_DEV if abi >= 5 else 0)
    )
    try:
        for paths, rights in ((read, reading), (write, fs), (_DEVICES, fs)):
            for path in paths:
                try:
                    fd = os.open(path, _O_PATH | _O_CLOEXEC)
                except OSError:
                    continue  # a path that does not exist here grants nothing
                try:
                    allowed = rights if stat.S_ISDIR(os.fstat(fd).st_mode) else rights & file_rights
                    rule = _PathBeneathAttr(allowed_access=allowed, parent_fd=fd)
                    _syscall(
                        libc,
                        _SYS_ADD_RULE,
                        ruleset,
                        _RULE_PATH_BENEATH,
                        ctypes.byref(rule),
                        ctypes.c_uint32(0),
                    )
                finally:
                    os.close(fd)
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
        _syscall(libc, _SYS_RESTRICT_SELF, ruleset, ctypes.c_uint32(0))
    finally:
        os.close(ruleset)
    return abi


def main(argv: list[str]) -> int:
    if argv[1:2] == ["--probe"]:
        try:
            abi = restrict(["/"], [], network=False)
        except OSError as exc:
            print(f"landlock: {exc}", file=sys.stderr)
            return 125
        print(abi)
        return 0
    if len(argv) < 4 or argv[2] != "--":
        print("usage: landlock_exec.py SPEC_JSON -- PROGRAM ARG...", file=sys.stderr)
        return 125
    spec = json.loads(argv[1])
    try:
        restrict(list(spec["read"]), list(spec["write"]), bool(spec["network"]))
    except OSError as exc:
        print(f"landlock: cannot restrict the command: {exc}", file=sys.stderr)
        return 125
    try:
        os.execvp(argv[3], argv[3:])  # noqa: S606 - the command, as the policy let it through
    except OSError as exc:
        print(f"{argv[3]}: {exc.strerror}", file=sys.stderr)
    return 127


if __name__ == "__main__":
    sys.exit(main(sys.argv))
