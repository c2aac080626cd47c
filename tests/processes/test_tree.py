"""``ProcessTree.has_children``: any child of the server process, of any thread, zombies included."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the process tree reads /proc")

SCRIPT = textwrap.dedent(
    """
    import os, subprocess, threading, time
    from mcp_localtools.processes.tree import ProcessTree

    tree = ProcessTree()
    seen = [tree.has_children()]
    child = subprocess.Popen(["sleep", "30"])
    seen.append(tree.has_children())
    child.kill()
    while open(f"/proc/{child.pid}/stat").read().rsplit(")", 1)[1].split()[0] != "Z":
        time.sleep(0.01)
    seen.append(tree.has_children())  # a zombie not yet collected is still a child
    child.wait()
    seen.append(tree.has_children())
    started = []  # a child another thread started is the process's child too
    thread = threading.Thread(target=lambda: started.append(subprocess.Popen(["sleep", "30"])))
    thread.start()
    thread.join()
    seen.append(tree.has_children())
    started[0].kill()
    started[0].wait()
    seen.append(tree.has_children())
    print(seen)
    """
)


def test_has_children_sees_running_zombie_and_other_threads_children() -> None:
    argv = [sys.executable, "-c", SCRIPT]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == "[False, True, True, False, True, False]", done.stderr
