"""The sandbox of commands: what a command may read, write and reach, and the operating system's
containment that enforces it. Below ``tools/``: it knows nothing of MCP or of the tools.

Its modules: ``policy`` (``SandboxPolicy``: roots writable, home and ``/tmp`` hidden, toolchains
exposed, credentials hidden again, protected paths read-only, network off), ``exposure`` (what of
the hidden directories commands see: each ``PATH`` entry itself and the prefixes its programs need,
never the home or a whole temp folder; ``DEFAULT_CREDENTIALS``; ``SYSTEM_CREDENTIALS`` and
``root_only_paths``, which no backend lets commands read), ``git`` (the git files of nested
repositories held read-only, every directory between a root and a protected path pinned, created git
config removed), ``repos`` (``RepositoryTracker``: the repositories of the roots found once and kept
current with inotify, a walk where there is none; a ``.git``, gitlink or ``.gitmodules`` a command
made or moved is made safe after it), the backends as classes, each answering by capability
(``supervised``, ``sandbox_argv``, ``private_tmp``, ``contains``), never by name (``backend``:
``Backend``, ``OffBackend``; ``bwrap``: ``BwrapBackend`` and its arguments; ``landlock``:
``LandlockBackend``, whose spec the standalone ``landlock_exec.py`` applies before it runs the
command; ``seatbelt``: ``SeatbeltBackend`` and its profile), ``probe`` (``choose_backend``: the one
that works here, failing closed), ``identity`` (the host's ``user.name``/``user.email``, and nothing
else of its git config, as a read-only ``GIT_CONFIG_GLOBAL`` in each connection's temp dir),
``notes`` (the ``sandboxNote`` of a refusal: a protected git file named with the way that works, a
refused write, no network; read through pipes too; ``weak_containment``: what the initialize
instructions and each connection's first command result say when commands run under Landlock or
uncontained, with how to get bubblewrap), ``command`` (``CommandSandbox``: the backend chosen in the
background, each connection's private temp dir and variables), ``tempdirs`` (the server's temp base
dir and each connection's dirs in it, removed when it ends; those of servers that are gone swept at
start), ``launch`` (``sandbox_launch``: the wrapper, limits and variables of a connection's sandbox;
``ConnectionSandboxes``: the started ones, by connection, under ``max_sandboxes``), ``runs`` (the
one path of a command, chosen once: ``SupervisedRuns`` for bwrap and Landlock, ``WrappedRuns`` for
Seatbelt and off; a root server's command runs as the owner of the root that holds its working
directory, ``CommandSandbox.identity``), ``proxy`` (``ProxyServer``: the filtering proxy for
``allowed_domains``, served on each sandbox's loopback listener, checking host and port with
``ProxyPolicy``), ``seccomp`` (the BPF program that refuses UNIX sockets), ``cgroups``
(``SandboxCgroups``: a pids and a memory group per sandbox inside one group per server process,
where a hierarchy can be written), ``runtime_notes`` (the ``sandboxNote`` of a proxy refusal, a
limit reached, a refused UNIX socket).
"""
