"""The sandbox of commands: what a command may read, write and reach, and the operating system's
containment that enforces it.

``policy`` (``SandboxPolicy``: writable, hidden, exposed, protected, network), ``git`` (the git
files of nested repositories, held read-only), the backends as classes (``backend``: the common
shape and ``off``; ``bwrap``, ``landlock`` with its standalone ``landlock_exec.py``, ``seatbelt``),
``probe`` (which backend works here; fails closed), and ``command`` (``CommandSandbox``: the
chosen backend, probed in the background, each client connection's private temp dir, and the notes
that explain a refusal). Below ``tools/``: it knows nothing of MCP or of the tools.
"""
