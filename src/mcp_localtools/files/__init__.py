"""Race-proof file I/O under a PathPolicy, shared by every tool group that touches files.

Its modules: ``read`` (verified, bounded reads), ``lineindex`` (per-version line index of a file,
counted lazily as far as windows need, extended when the file only grew: windows in O(window)),
``lineindexes`` (the workspace's LRU cache of line indexes by file version, and a version's
SHA-256), ``linetail`` (a file's last lines, read backwards from its end), ``parents`` (open and
create the directory holding a target), ``atomic`` (temp file, fsync, rename), ``owner`` (what the
tools create in another user's folder belongs to that user when the server is root; the roots'
owners, as whom a root server's commands run), ``copy`` (descriptor-based copies and moves),
``locks`` (one lock per file), ``entries`` (entry types, times).
"""
