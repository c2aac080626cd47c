"""The sandbox every command of the exec tools runs in, and each exec session's private temp dir.

Built once per server from ``[exec.sandbox]`` (``policy.py`` holds the policy, ``probe.py`` picks
the backend). When no backend works and the sandbox is not turned off, it fails closed: every
command is refused with the reason (``SandboxUnavailable``), and the start-up log says so.
"""

from __future__ import annotations

import logging
import os
import re
import secrets
import shutil
import tempfile
import threading
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

import anyio.to_thread

from mcp_localtools.config import SandboxConfig
from mcp_localtools.errors import SandboxUnavailable
from mcp_localtools.sandbox.backend import Backend
from mcp_localtools.sandbox.git import missing_git_files, nested_git_paths
from mcp_localtools.sandbox.git import revert as revert_git_files
from mcp_localtools.sandbox.policy import SandboxPolicy
from mcp_localtools.sandbox.probe import choose_backend

__all__ = ["CommandSandbox"]

logger = logging.getLogger(__name__)

_PREFIX = "mcp-localtools-"

_READ_ONLY = re.compile(r"Read-only file system|EROFS")
_NO_NETWORK = re.compile(
    r"Network is unreachable|Temporary failure in name resolution|Could not resolve host|"
    r"Name or service not known|No address associated with hostname|ENETUNREACH|EAI_AGAIN|"
    r"Connection refused|ECONNREFUSED"
)


class CommandSandbox:
    """The sandbox of the exec tools: its backend (chosen in a background thread once an exec tool
    is registered, ``start``, so neither start-up nor the event loop waits for the probe, and a
    server that serves no command tool probes nothing) and the sessions' temp dirs.

    Args:
        config: ``[exec.sandbox]``.
        roots: the allowed roots (canonical): writable inside the sandbox.
        environ: the environment commands get (``HOME`` and ``PATH``).
        protected: paths inside the roots that stay read-only.
        unprotected: paths lifted from protection on purpose (``[paths] unprotected_paths``).
    """

    def __init__(
        self,
        config: SandboxConfig,
        *,
        roots: Sequence[Path],
        environ: Mapping[str, str],
        protected: Sequence[Path],
        unprotected: Sequence[Path] = (),
    ) -> None:
        self.network = config.network
        self.backend: Backend | None = None
        self.reason = ""
        self._base: Path | None = None
        self._guard = threading.Lock()
        self._chosen = threading.Event()
        self._started = False
        self._config = config
        self._layout = (tuple(roots), tuple(protected), tuple(unprotected))
        self._policy = self._create(environ)
        self._policies: dict[tuple[str, str], Backend] = {}

    def start(self) -> None:
        """Start choosing the backend in a background thread (once; later calls do nothing)."""
        with self._guard:
            if self._started:
                return
            self._started = True
        threading.Thread(
            target=self._choose, args=(self._config, self._policy), name="sandbox-probe", daemon=True
        ).start()

    def _choose(self, config: SandboxConfig, policy: SandboxPolicy) -> None:
        """Pick the backend (runs ``true`` inside it once, about 10 ms) and log loudly when there
        is none, or when commands run uncontained as root."""
        try:
            self.backend = choose_backend(config.mode, policy, bwrap=config.bwrap_path)
        except SandboxUnavailable as exc:
            self.reason = exc.message
            logger.error("COMMANDS WILL BE REFUSED: %s", exc.message)
        except Exception:
            self.reason = "the sandbox probe failed unexpectedly; the server log has the details"
            logger.exception("the sandbox probe failed")
        else:
            if self.backend.name == "off" and hasattr(os, "geteuid") and os.geteuid() == 0:
                logger.warning(
                    "the sandbox is off and the server runs as root: commands can change the whole "
                    'machine; set [exec.sandbox] mode = "auto" to contain them'
                )
            elif self.backend.name != "off":
                network = "on" if config.network else "off"
                logger.info("commands run in a %s sandbox (network %s)", self.backend.name, network)
        finally:
            self._chosen.set()

    async def ready(self) -> None:
        """Wait (in a worker thread) until the backend is chosen, then refuse if there is none.

        Raises:
            SandboxUnavailable: commands cannot be contained and the sandbox is not off.
        """
        if not self._chosen.is_set():
            self.start()
            await anyio.to_thread.run_sync(self._chosen.wait, abandon_on_cancel=True)
        if self.backend is None:
            raise SandboxUnavailable(self.reason)

    @property
    def name(self) -> str:
        """``bwrap``, ``landlock``, ``seatbelt`` or ``off``; ``none`` when commands are refused."""
        return self.backend.name if self.backend is not None else "none"

    def _create(self, environ: Mapping[str, str]) -> SandboxPolicy:
        roots, protected, unprotected = self._layout
        return SandboxPolicy.create(
            self._config, roots=roots, environ=environ, protected=protected, unprotected=unprotected
        )

    def _backend_for(self, environ: Mapping[str, str] | None) -> Backend:
        """The chosen backend, with a policy made for the ``HOME`` and ``PATH`` of ``environ``
        (the commands' base environment, whose ``PATH`` the login shell may have set: its
        toolchains are what must be exposed); made once per distinct pair."""
        assert self.backend is not None
        if environ is None:
            return self.backend
        key = (environ.get("HOME", ""), environ.get("PATH", ""))
        with self._guard:
            backend = self._policies.get(key)
        if backend is None:
            backend = replace(self.backend, policy=self._create(environ))
            with self._guard:
                self._policies[key] = backend
        return backend

    def wrap(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        temp_dir: Path | None,
        environ: Mapping[str, str] | None = None,
    ) -> tuple[list[str], list[Path]]:
        """The argv that runs ``argv`` in ``cwd`` inside the sandbox (after ``ready``), and the git
        files to check after the run (``revert``); ``environ`` is the commands' base environment
        (its ``HOME`` and ``PATH`` decide what is hidden and exposed; None: the server's).
        Blocking: call it from a worker thread.

        Raises:
            SandboxUnavailable: no backend works here (fail closed).
        """
        if self.backend is None:
            raise SandboxUnavailable(self.reason or "the sandbox is not ready")
        if self.backend.name == "off":
            return list(argv), []
        backend = self._backend_for(environ)
        git = nested_git_paths(backend.policy.writable)
        return backend.wrap(argv, cwd=cwd, temp_dir=temp_dir, git=git), missing_git_files(git)

    def temp_dir(self, key: str) -> Path | None:
        """The private temporary directory of exec session ``key`` (created on first use, mode
        0700, writable inside the sandbox and given to commands as ``TMPDIR``); None when the
        sandbox is off. Blocking: call it from a worker thread."""
        if self.backend is None or self.backend.name == "off":
            return None
        with self._guard:
            if self._base is None:
                _sweep_stale()
                self._base = Path(tempfile.mkdtemp(prefix=f"{_PREFIX}{os.getpid()}-"))
                finalizer = weakref.finalize(self, shutil.rmtree, str(self._base), ignore_errors=True)
                finalizer.atexit = True
            base = self._base
        path = base / re.sub(r"[^A-Za-z0-9_-]", "_", key)
        path.mkdir(mode=0o700, exist_ok=True)
        return path

    @staticmethod
    def revert(missing: list[Path]) -> tuple[str, ...]:
        """Remove the git pointer files in ``missing`` that a command created; returns them."""
        return revert_git_files(missing)

    def release(self, key: str) -> None:
        """Remove the temporary directory of exec session ``key`` (when it ends or expires), in a
        thread of its own: the session store calls this from the event loop, and a command may
        have left many files there."""
        if self._base is None:
            return
        path = self._base / re.sub(r"[^A-Za-z0-9_-]", "_", key)
        threading.Thread(
            target=shutil.rmtree, args=(path,), kwargs={"ignore_errors": True}, daemon=True
        ).start()

    @staticmethod
    def new_key() -> str:
        """A key for a run that has no exec session (runscript)."""
        return "run_" + secrets.token_hex(8)

    def explain(self, stderr: str, exit_code: int | None, reverted: tuple[str, ...] = ()) -> str | None:
        """A note for a command the sandbox stood in the way of: git pointers it created that
        were removed again (``reverted``), or a failure whose error output shows a refused write
        or a network access with the network off; None otherwise."""
        if reverted:
            return (
                f"removed {', '.join(reverted)}, which the command created: git would have read its "
                "config from there (protected); change git's config outside the tools"
            )
        if self.backend is None or self.backend.name == "off" or exit_code == 0:
            return None
        if self.backend.name == "landlock" and "Permission denied" in stderr:
            return (
                "the sandbox (Landlock) may have refused this: commands may write only inside the "
                "allowed roots and TMPDIR, cannot read the home directory"
                + ("" if self.network else ", and have no network (set [exec.sandbox] network = true)")
            )
        if _READ_ONLY.search(stderr):
            return (
                "the sandbox refused a write: commands may write only inside the allowed roots and "
                "TMPDIR, and protected paths (.git/config, .git/hooks, ...) stay read-only; use the "
                "file tools for files inside the roots, or add the directory to [exec.sandbox] write_paths"
            )
        if not self.network and _NO_NETWORK.search(stderr):
            return (
                "the sandbox has no network: commands get an empty network of their own, where "
                "nothing else is reachable (loopback servers of the host included); set "
                "[exec.sandbox] network = true to let commands reach the network (pip install, git fetch)"
            )
        return None


def _sweep_stale() -> None:
    """Remove the temp base dirs of servers that are gone (``mcp-localtools-<pid>-*`` of this
    user whose pid is not running): a server killed with SIGKILL cannot clean up after itself."""
    base = Path(tempfile.gettempdir())
    try:
        candidates = list(base.glob(_PREFIX + "*"))
    except OSError:
        return
    for path in candidates:
        pid = path.name[len(_PREFIX) :].partition("-")[0]
        if not pid.isdigit() or _alive(int(pid)):
            continue
        try:
            if hasattr(os, "geteuid") and path.stat().st_uid != os.geteuid():
                continue
        except OSError:
            continue
        shutil.rmtree(path, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's: alive
        return True
    return True
