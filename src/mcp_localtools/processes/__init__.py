"""Running commands: what the exec tools start, watch and stop, below ``tools/``.

Its modules: ``runner`` (``ProcessRunner``: spawn, capture, time out, stop the whole tree, drain
with a bound), ``capture`` (what a run reads, waits for and reports: ``RunRequest``, ``RunOutcome``,
the pumps, the output stop, the timeout, shared with ``supervised``), ``spawn`` (how the runner
starts a command: ``Popen`` on the event loop, its exit seen through a pidfd, its pipes read as
descriptors), ``tree`` (the server's process tree: escaped descendants, subreaper, non-dumpable),
``output`` (head-and-tail capture), ``table`` (``ProcessTable``: the background processes of each
session, their reader and reaper threads), ``background`` (one background process: its bounded
output buffers, its stdin, ``read_new``), ``sessions`` (exec sessions: a working directory and
environment), ``stored`` (``OutputStore``: full outputs kept as session resources, read in pages),
``environment`` (``CommandEnvironment``: the allowlisted base environment and the login shell's),
``shells`` (which shell, which argv), ``supervision`` (``SupervisedSandbox``: one client
connection's sandbox, whatever wrapper ``sandbox/launch.py`` gives it, started with an empty
environment by a thread that lives as long as it does, and the supervisor's protocol), ``pipes``
(``FdReader``/``FdWriter``: pipe descriptors as byte streams), ``supervisor`` (the standalone script
inside each connection's sandbox that forks its commands, stops what they leave behind, and hands
the server its listeners), ``supervised`` (``run_supervised``: ``ProcessRunner.run``'s contract for
a command run by the supervisor), ``handles`` (a background process started by the server or by its
connection's supervisor; pipes or a pseudo-terminal).
"""
