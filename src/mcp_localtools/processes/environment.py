"""The environment commands start from: an allowlisted base and BootstrapDefaults.

A command never inherits the server's whole environment: API keys and tokens the client passed
to the server (``AWS_SECRET_ACCESS_KEY``, ``MCP_LOCALTOOLS_TOKEN``, ...) stay in the server. The
base environment is built from

1. the server's environment, filtered to ``UNIX_ALLOWLIST`` / ``UNIX_PREFIXES`` (the seed's lists)
   plus the names the operator lists in ``[exec] base_env``;
2. the login shell's environment, filtered the same way (later wins). Clients start servers with a
   minimal environment, so the user's ``PATH`` (pyenv, nvm, cargo, ...) comes from here: once per
   server, the login shell is run once as bash/zsh do for a terminal (``-lic``) and prints its
   environment between marker lines. Failures are logged and never fatal.

Then the session's and the call's ``env`` are laid on top (later wins). The server's own environment
reaches this module as a parameter; only ``cli/`` reads ``os.environ``.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import anyio.to_thread

from mcp_localtools import compat
from mcp_localtools.policy.commandrules import MAX_ENV_TOTAL_BYTES, MAX_ENV_VALUE_BYTES
from mcp_localtools.processes.runner import ProcessRunner, RunRequest
from mcp_localtools.processes.shells import Shell, auto_candidates, first_found

__all__ = [
    "BEGIN_MARKER",
    "END_MARKER",
    "PROBE_STOP_GRACE_SECONDS",
    "UNIX_ALLOWLIST",
    "UNIX_PREFIXES",
    "WINDOWS_ALLOWLIST",
    "WINDOWS_PREFIXES",
    "BootstrapDefaults",
    "CommandEnvironment",
    "filter_env",
    "merged_env",
    "parse_probe",
    "probe_argv",
]

logger = logging.getLogger(__name__)

BEGIN_MARKER = "__EXECTOOL_ENV_BEGIN__"
END_MARKER = "__EXECTOOL_ENV_END__"
BOOTSTRAP_SECONDS = 10.0
PROBE_STOP_GRACE_SECONDS = 5.0
"""How long a probe stopped mid-profile (its timeout, or the server or the connection that started
it closing) is given after its hang-up to end by itself before SIGTERM and SIGKILL
(``RunRequest.stop_grace_seconds``): its profile's EXIT traps run to their end (``pyenv rehash``
removes its lock in one; cut short, the lock makes every later login shell of the user wait 60 s),
on a loaded machine too, where a quarter of a second was not always enough."""
_PROBE_OUTPUT_BYTES = 1024 * 1024

_SHARED = """GOBIN GOPATH GOROOT JAVA_HOME PNPM_HOME BUN_INSTALL CARGO_HOME RUSTUP_HOME VIRTUAL_ENV
    CONDA_PREFIX CONDA_DEFAULT_ENV CONDA_EXE GOPROXY GOPRIVATE GONOPROXY GONOSUMDB GOSUMDB GOFLAGS
    GOTOOLCHAIN GOINSECURE GOVCS HTTP_PROXY HTTPS_PROXY NO_PROXY ALL_PROXY http_proxy https_proxy
    no_proxy all_proxy GIT_TERMINAL_PROMPT GIT_ASKPASS GIT_SSH GIT_SSH_COMMAND SSH_AUTH_SOCK
    SSL_CERT_FILE SSL_CERT_DIR"""
UNIX_ALLOWLIST = frozenset(
    (
        "PATH HOME USER LOGNAME SHELL TMPDIR TMP TEMP LANG LC_ALL LC_CTYPE TERM COLORTERM "
        "XDG_CONFIG_HOME XDG_CACHE_HOME XDG_DATA_HOME " + _SHARED
    ).split()
)
"""Variables passed to commands on Unix (exact, case-sensitive; the seed's list)."""
UNIX_PREFIXES = ("ASDF_", "PYENV_", "RBENV_", "NVM_", "VOLTA_", "SDKMAN_", "LC_", "CONDA_", "GIT_")
WINDOWS_ALLOWLIST = frozenset(
    (
        "PATH PATHEXT SYSTEMROOT COMSPEC USERPROFILE HOMEDRIVE HOMEPATH HOME APPDATA LOCALAPPDATA "
        "PROGRAMDATA PROGRAMFILES PROGRAMFILES(X86) COMMONPROGRAMFILES COMMONPROGRAMFILES(X86) TMP TEMP "
        "ONEDRIVE CHOCOLATEYINSTALL " + _SHARED.upper()
    ).split()
)
"""Variables passed to commands on Windows (names compared upper-cased)."""
WINDOWS_PREFIXES = ("ASDF_", "PYENV_", "RBENV_", "NVM_", "VOLTA_", "SDKMAN_", "CONDA_", "GIT_")


def filter_env(
    env: Mapping[str, str], extra: Collection[str] = (), *, windows: bool = False
) -> dict[str, str]:
    """The variables of ``env`` that commands may see: the allowlist, its prefixes, and ``extra``."""
    if windows:
        extra_upper = {name.upper() for name in extra}
        return {
            key: value
            for key, value in env.items()
            if key.upper() in WINDOWS_ALLOWLIST
            or key.upper().startswith(WINDOWS_PREFIXES)
            or key.upper() in extra_upper
        }
    return {
        key: value
        for key, value in env.items()
        if key in UNIX_ALLOWLIST or key.startswith(UNIX_PREFIXES) or key in extra
    }


def merged_env(*layers: Mapping[str, str | None]) -> dict[str, str]:
    """``layers`` laid on top of each other (later wins), a None value unsetting the variable."""
    merged: dict[str, str | None] = {}
    for layer in layers:
        merged.update(layer)
    return {key: value for key, value in merged.items() if value is not None}


def probe_argv(shell: Shell) -> list[str]:
    """The argv that prints the login environment between the markers."""
    if shell.name in ("pwsh", "powershell"):
        script = (
            f"Write-Output '{BEGIN_MARKER}'; "
            'Get-ChildItem env: | ForEach-Object { "$($_.Name)=$($_.Value)" }; '
            f"Write-Output '{END_MARKER}'"
        )
        return [shell.path, "-NoLogo", "-NonInteractive", "-Command", script]
    script = f"printf '%s\\n' {BEGIN_MARKER}; env; printf '%s\\n' {END_MARKER}"
    if shell.name in ("bash", "zsh"):
        return [shell.path, "-lic", script]
    if shell.name == "fish":
        return [shell.path, "-l", "-i", "-c", script]
    if shell.name == "ksh":
        return [shell.path, "-lc", script]
    return [shell.path, "-c", script]  # sh, dash: dash rejects -l


def parse_probe(output: str) -> dict[str, str]:
    """``KEY=VALUE`` lines between the markers; CRLF tolerated, lines without ``=`` skipped.

    Raises:
        ValueError: a marker is missing.
    """
    lines = output.replace("\r\n", "\n").split("\n")
    try:
        begin = lines.index(BEGIN_MARKER)
        end = lines.index(END_MARKER, begin + 1)
    except ValueError:
        raise ValueError("the login shell did not print the environment markers") from None
    env: dict[str, str] = {}
    for line in lines[begin + 1 : end]:
        key, sep, value = line.partition("=")
        if sep and key:
            env[key] = value
    return env


@dataclass(frozen=True, slots=True)
class BootstrapDefaults:
    """What the login shell told us (asked once per server; a failure leaves both empty).

    Attributes:
        shell: the default shell found, or None.
        env: its environment, filtered to the allowlist and ``base_env``.
        problem: why the environment could not be read, or None.
    """

    shell: Shell | None
    env: dict[str, str] = field(default_factory=dict)
    problem: str | None = None


class CommandEnvironment:
    """The base environment of commands and the bootstrap that feeds it, computed once.

    Args:
        host_env: the server's environment (the command line passes ``os.environ``).
        base_env: ``[exec] base_env``: extra names passed from ``host_env`` and the login shell.
        default_shell: ``[exec] default_shell``; the bootstrap probes it when it is not ``auto``.
        runner: runs the probe (so it is bounded and leaves nothing behind).
        cwd: where the probe runs.
        bootstrap_seconds: how long the probe may take (seconds).
        probe_stop_grace_seconds: how long a probe stopped mid-profile is given after its hang-up
            to end by itself (``PROBE_STOP_GRACE_SECONDS``, which says why it is long).
    """

    def __init__(
        self,
        host_env: Mapping[str, str],
        *,
        base_env: Collection[str],
        default_shell: str,
        runner: ProcessRunner,
        cwd: Path,
        bootstrap_seconds: float = BOOTSTRAP_SECONDS,
        probe_stop_grace_seconds: float = PROBE_STOP_GRACE_SECONDS,
    ) -> None:
        self._host_env = dict(host_env)
        self._extra = frozenset(base_env)
        self._default_shell = default_shell
        self._runner = runner
        self._cwd = cwd
        self._bootstrap_seconds = bootstrap_seconds
        self._probe_stop_grace_seconds = probe_stop_grace_seconds
        self._windows = compat.IS_WINDOWS
        self._host_filtered = filter_env(self._host_env, self._extra, windows=self._windows)
        self._defaults: BootstrapDefaults | None = None
        self._lock = anyio.Lock()

    async def defaults(self) -> BootstrapDefaults:
        """The bootstrap result: computed on first use (at most ``bootstrap_seconds``), then cached
        (and returned without taking the lock: every command asks for it)."""
        if self._defaults is not None:
            return self._defaults
        async with self._lock:
            if self._defaults is None:
                self._defaults = await self._bootstrap()
                if self._defaults.problem:
                    logger.warning(
                        "exec bootstrap: %s; commands get the filtered server environment",
                        self._defaults.problem,
                    )
            return self._defaults

    async def base(self) -> dict[str, str]:
        """The environment every command starts from: filtered server env, then the login env."""
        return self.base_of(await self.defaults())

    def base_of(self, defaults: BootstrapDefaults) -> dict[str, str]:
        """``base()`` for the bootstrap result ``defaults`` (a new dict, the caller's to change)."""
        return {**self._host_filtered, **defaults.env}

    def _probe_shell(self) -> Shell | None:
        """The shell to probe (blocking: looks programs up)."""
        if self._default_shell != "auto":
            candidates = [self._default_shell]
        else:
            candidates = auto_candidates(self._host_env)
        return first_found(candidates, self._host_env.get("PATH"))

    async def _bootstrap(self) -> BootstrapDefaults:
        shell = await anyio.to_thread.run_sync(self._probe_shell)
        if shell is None:
            return BootstrapDefaults(None, problem="no shell found on PATH")
        request = RunRequest(
            argv=probe_argv(shell),
            cwd=self._cwd,
            env=self._host_env,
            stdin=None,
            timeout=self._bootstrap_seconds,
            max_output_bytes=_PROBE_OUTPUT_BYTES,
            stop_signal=compat.SIGHUP,  # a hang-up ends an interactive login shell (not SIGTERM)
            stop_grace_seconds=self._probe_stop_grace_seconds,
        )
        outcome = await self._runner.run(request)
        if outcome.timed_out:
            return BootstrapDefaults(
                shell, problem=f"{shell.path} took longer than {self._bootstrap_seconds:g} s"
            )
        try:
            found = parse_probe(outcome.stdout.text)
        except ValueError as exc:
            return BootstrapDefaults(shell, problem=f"{shell.path}: {exc} (exit code {outcome.exit_code})")
        env = {
            key: value
            for key, value in filter_env(found, self._extra, windows=self._windows).items()
            if len(value.encode()) <= MAX_ENV_VALUE_BYTES
        }
        if not env:
            return BootstrapDefaults(shell, problem="bootstrap env produced no usable variables")
        if sum(len(k.encode()) + len(v.encode()) for k, v in env.items()) > MAX_ENV_TOTAL_BYTES:
            return BootstrapDefaults(shell, problem="bootstrap env is larger than the env limit")
        return BootstrapDefaults(shell, env)
