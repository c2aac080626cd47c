"""The sandbox every command of the exec tools runs in, and each client connection's private temp dir.

Built once per server from ``[exec.sandbox]`` (``policy.py`` holds the policy, ``probe.py`` picks
the backend). When no backend works and the sandbox is not turned off, it fails closed: every
command is refused with the reason (``SandboxUnavailable``), and the start-up log says so.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import sys
import tempfile
import threading
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

import anyio.to_thread

from mcp_localtools.config import SandboxConfig, WebConfig
from mcp_localtools.errors import SandboxUnavailable
from mcp_localtools.files.owner import root_owners
from mcp_localtools.sandbox.backend import Backend
from mcp_localtools.sandbox.exposure import is_root
from mcp_localtools.sandbox.git import missing_git_files
from mcp_localtools.sandbox.git import revert as revert_git_files
from mcp_localtools.sandbox.identity import IDENTITY_FILE, host_identity, identity_config, write_read_only
from mcp_localtools.sandbox.launch import ConnectionSandboxes, SandboxLaunch, sandbox_launch
from mcp_localtools.sandbox.notes import explain, weak_containment
from mcp_localtools.sandbox.policy import SandboxPolicy
from mcp_localtools.sandbox.probe import choose_backend
from mcp_localtools.sandbox.repos import RepositoryTracker
from mcp_localtools.sandbox.seccomp import unix_socket_filter
from mcp_localtools.sandbox.tempdirs import TEMP_PREFIX, remove_dirs_of, sweep_stale

__all__ = ["CommandSandbox"]

logger = logging.getLogger(__name__)


class CommandSandbox:
    """The sandbox of the exec tools: its backend (chosen in a background thread once an exec tool
    is registered, ``start``, so neither start-up nor the event loop waits for the probe, and a
    server that serves no command tool probes nothing) and the connections' temp dirs.

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
        web: WebConfig | None = None,
        base_dir: Path | None = None,
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
        self._environ = dict(environ)
        self._trackers: dict[tuple[Path, ...], RepositoryTracker] = {}
        self._identity: str | None = None
        self._home = base_dir or (Path(roots[0]) if roots else Path("/"))
        self._missing: dict[str, list[Path]] = {}
        self._owners: dict[Path, tuple[int, int]] = {}
        self._told: set[str] = set()
        self.connections = ConnectionSandboxes(self._launch_for, config, web)

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
        passed_over: list[str] = []
        try:
            self.backend = choose_backend(
                config.mode, policy, bwrap=config.bwrap_path, passed_over=passed_over
            )
            self.reason = "; ".join(passed_over)  # why a weaker backend was taken
            if is_root():
                self._owners = root_owners(self._layout[0])
        except SandboxUnavailable as exc:
            self.reason = exc.message
            logger.error("COMMANDS WILL BE REFUSED: %s", exc.message)
        except Exception:
            self.reason = "the sandbox probe failed unexpectedly; the server log has the details"
            logger.exception("the sandbox probe failed")
        else:
            if not self.backend.contains and hasattr(os, "geteuid") and os.geteuid() == 0:
                logger.warning(
                    "the sandbox is off and the server runs as root: commands can change the whole "
                    'machine; set [exec.sandbox] mode = "auto" to contain them'
                )
            elif self.backend.contains:
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

    def chosen(self, timeout: float) -> bool:
        """Start the probe if needed and wait (blocking, up to ``timeout`` seconds) until the
        backend is chosen; True when it is."""
        self.start()
        return self._chosen.wait(timeout)

    @property
    def name(self) -> str:
        """``bwrap``, ``landlock``, ``seatbelt`` or ``off``; ``none`` when commands are refused
        (``reason`` says why; for a chosen backend, ``reason`` says why stronger ones were not)."""
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
        if not self.backend.contains:
            return list(argv), []
        backend = self._backend_for(environ)
        git = self._repositories(backend.policy.writable).protected()
        return backend.wrap(argv, cwd=cwd, temp_dir=temp_dir, git=git), missing_git_files(git)

    def _repositories(self, writable: Sequence[Path]) -> RepositoryTracker:
        """The tracker of the repositories in ``writable`` (started on first use; blocking)."""
        with self._guard:
            tracker = self._trackers.get(tuple(writable))
            if tracker is None:
                outside = [self._base] if self._base is not None else []
                tracker = self._trackers[tuple(writable)] = RepositoryTracker(
                    writable, outside_ok=outside, search_path=self._environ.get("PATH", os.defpath)
                )
        tracker.start()
        return tracker

    def settle(self) -> tuple[str, ...]:
        """After a command: make safe the git files commands made (``RepositoryTracker.check``);
        one line per thing done. Blocking: call it from a worker thread."""
        with self._guard:
            trackers = list(self._trackers.values())
        return tuple(line for tracker in trackers for line in tracker.check())

    @property
    def uncontained(self) -> bool:
        """Whether the chosen backend contains nothing (``[exec.sandbox] mode = "off"``): commands
        run as they are, so ``wrap``, ``temp_dir``, ``command_env`` and ``settle`` have nothing to
        do (False until the backend is chosen)."""
        return self.backend is not None and not self.backend.contains

    @property
    def supervised(self) -> bool:
        """Whether commands run in their connection's sandbox through its supervisor
        (``Backend.supervised``: bwrap, Landlock); else each command is wrapped on its own
        (Seatbelt) or not at all (off)."""
        return self.backend is not None and self.backend.supervised

    @property
    def unix_sockets_refused(self) -> bool:
        """Whether this sandbox's commands cannot create UNIX sockets (the network off, no
        ``allow_unix_sockets``, and libseccomp here)."""
        config = self._config
        return (
            self.supervised
            and not config.network
            and not config.allow_unix_sockets
            and (unix_socket_filter() is not None)
        )

    def _launch_for(
        self, key: str, environ: Mapping[str, str] | None, user: tuple[int, int] | None = None
    ) -> SandboxLaunch:
        """The launch of connection ``key``'s sandbox for commands whose base environment is
        ``environ`` (its ``HOME`` and ``PATH`` decide what is hidden and exposed); takes the roots'
        repositories from the tracker once for the sandbox (their git paths stay read-only in it),
        and gives commands the connection's variables (``command_env``: the git identity;
        ``TMPDIR`` is the sandbox's own ``/tmp`` under bubblewrap); ``user``: the identity it
        starts as (``identity``), which then owns its temp dir. Blocking: a worker thread."""
        if self.backend is None:
            raise SandboxUnavailable(self.reason or "the sandbox is not ready")
        backend = self._backend_for(environ)
        git = self._repositories(backend.policy.writable).protected()
        self._missing[key] = missing_git_files(git)
        temp_dir = self.temp_dir(key, user)
        launch = sandbox_launch(backend, self._config, cwd=self._home, temp_dir=temp_dir, git=git, user=user)
        return replace(launch, env={**self.command_env(temp_dir), **launch.env})

    def missing(self, key: str) -> list[Path]:
        """The git pointer files that were missing when connection ``key``'s sandbox started
        (``revert`` removes any a command created)."""
        return self._missing.get(key, [])

    def identity(self, cwd: Path) -> tuple[int, int] | None:
        """``(uid, gid)`` a command in ``cwd`` runs as: for a root server whose backend can
        (``Backend.runs_as_owner``), the owner of the root that holds ``cwd`` when that is not
        root (a container's root server in a checkout of the host's user); else None (the
        server's own identity). The roots' owners are read once, when the backend is chosen."""
        if self.backend is None or not self.backend.runs_as_owner:
            return None
        for root, owner in self._owners.items():
            if cwd == root or cwd.is_relative_to(root):
                return owner
        return None

    def temp_dir(self, key: str, user: tuple[int, int] | None = None) -> Path | None:
        """The private temporary directory of connection ``key`` (created on first use, mode
        0700, writable inside the sandbox and given to commands as ``TMPDIR``); None when the
        sandbox is off. Blocking: call it from a worker thread."""
        if self.backend is None or not self.backend.contains:
            return None
        with self._guard:
            if self._base is None:
                sweep_stale()
                self._base = Path(tempfile.mkdtemp(prefix=f"{TEMP_PREFIX}{os.getpid()}-"))
                finalizer = weakref.finalize(self, shutil.rmtree, str(self._base), ignore_errors=True)
                finalizer.atexit = True
            base = self._base
        path = base / re.sub(r"[^A-Za-z0-9_-]", "_", key)
        path.mkdir(mode=0o700, exist_ok=True)
        if user is not None and sys.platform != "win32":
            os.chown(path, *user)
            base.chmod(0o711)
        return path

    @staticmethod
    def revert(missing: list[Path]) -> tuple[str, ...]:
        """Remove the git pointer files in ``missing`` that a command created; returns them."""
        return revert_git_files(missing)

    def release(self, owner: str) -> None:
        """Connection ``owner`` ended: close its sandboxes (every process in them ends) and remove
        its temporary directories (one per identity), in a thread of their own (a command may have
        left many files there)."""
        self.connections.release(owner)
        for key in [key for key in self._missing if key == owner or key.startswith(owner + "#")]:
            del self._missing[key]
        self._told.discard(owner)
        if self._base is not None:  # listing and removing are file system work: a thread
            threading.Thread(target=remove_dirs_of, args=(self._base, owner), daemon=True).start()

    def weakness(self) -> str | None:
        """What to tell people when the chosen backend contains commands less than bubblewrap
        would (Landlock) or not at all (``off``): ``notes.weak_containment``; None for bubblewrap,
        Seatbelt, or while no backend is chosen."""
        if self.backend is None:
            return None
        return weak_containment(self.backend.name, self._config.mode, self.reason)

    def first_notice(self, owner: str) -> str | None:
        """``weakness()`` for the first command result of client connection ``owner``, None for
        its later ones (until ``release(owner)``)."""
        if owner in self._told:
            return None
        self._told.add(owner)
        return self.weakness()

    def explain(
        self,
        stderr: str,
        exit_code: int | None,
        reverted: tuple[str, ...] = (),
        stdout: str = "",
        cleaned: tuple[str, ...] = (),
    ) -> str | None:
        """The ``sandboxNote`` of a run (``notes.explain``): what the sandbox undid or refused."""
        name = self.backend.name if self.backend is not None else "off"
        note = explain(name, stderr, exit_code, network=self.network, reverted=reverted, stdout=stdout)
        if not cleaned:
            return note
        made_safe = (
            "git files a command made are untrusted, so the sandbox "
            + "; ".join(cleaned)
            + " (git would have run them outside the sandbox)"
        )
        return f"{made_safe}. {note}" if note else made_safe

    def command_env(self, temp_dir: Path | None) -> dict[str, str]:
        """Variables the sandbox gives every command of a connection whose temp dir is ``temp_dir``:
        ``TMPDIR``, and ``GIT_CONFIG_GLOBAL`` naming a read-only config there that carries only
        the host user's ``user.name`` and ``user.email`` (``identity.py``; the real
        ``~/.gitconfig`` is hidden). Blocking on the first call (asks git once)."""
        if temp_dir is None:
            return {}
        extra = {"TMPDIR": str(temp_dir)}
        with self._guard:
            if self._identity is None:
                self._identity = identity_config(host_identity(self._environ))
            text = self._identity
        if text:
            config = temp_dir / IDENTITY_FILE
            if not config.exists():
                write_read_only(config, text)
            extra["GIT_CONFIG_GLOBAL"] = str(config)
        return extra
