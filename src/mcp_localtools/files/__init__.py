"""Race-proof file I/O under a PathPolicy, shared by every tool group that touches files.

``read`` (verified, bounded reads), ``parents`` (open and create the directory that holds a
target, inside the roots), ``atomic`` (temp file, fsync, rename), ``copy`` (descriptor-based
copies and moves), ``locks`` (one lock per file for read-modify-write calls). The approach is
that of the path policy: the directory that holds a target is opened once and verified to lie
inside the roots (``PathPolicy.open``); every later step names only a single entry relative to
that descriptor, with ``O_NOFOLLOW``, so a directory swapped for a symlink after the check cannot
redirect the operation.
"""
