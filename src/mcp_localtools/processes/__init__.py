"""Running commands: what the exec tools start, watch and stop, below ``tools/``.

``runner`` (``ProcessRunner``: one command to completion, timeout or cancellation, never leaving
a process behind), ``tree`` (the server's process tree: finding what escaped a command's group),
``output`` (head-and-tail capture), ``table`` (background processes, their bounded buffers and
readers), ``sessions`` (exec sessions: a working directory and environment), ``stored`` (full
outputs kept as session resources, read in pages), ``environment`` (the allowlisted base
environment and the login shell's), ``shells`` (which shell, which argv).
"""
