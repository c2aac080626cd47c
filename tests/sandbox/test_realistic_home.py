"""The sandbox on a developer's real home directory (issue 25, item 1).

The home is a real one as Debian's and Ubuntu's stock ``~/.profile`` leaves it: ``~/.local/bin``
and ``~/bin`` on ``PATH``, a cargo install, a GitHub CLI login, an SSH key, cloud credentials,
and the server's own audit log under ``~/.local/state``. It lives in a private mount namespace
of the test (``unshare -m``, a tmpfs on ``/home`` and one on ``/tmp``), never on the machine's
own home: the server runs there in a subprocess, driven through the SDK's in-memory client.
Every secret is a canary string; the test asserts that no command output carries one.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mcp_localtools.sandbox.bwrap import find_bwrap

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux")
    or os.geteuid() != 0
    or shutil.which("unshare") is None
    or find_bwrap() is None,
    reason="needs Linux, root (for a private mount namespace), unshare and bwrap",
)

HOME = "/home/alice"
REPO = str(Path(__file__).resolve().parents[2])
SECRETS = {
    ".ssh/id_rsa": "canary-ssh-key-91c3",
    ".cargo/credentials.toml": "canary-cargo-token-5b7e",
    ".config/gh/hosts.yml": "canary-gh-token-0a4d",
    ".netrc": "canary-netrc-77e1",
    ".aws/credentials": "canary-aws-e2f0",
    ".docker/config.json": "canary-docker-c9d8",
    ".bash_history": "canary-history-3141",
}
TOOLS = {  # PATH entries of a real home, each with a program the commands must still run
    ".local/bin/mytool": "mytool-ok",
    "bin/othertool": "othertool-ok",
    ".cargo/bin/cargo-fake": "cargo-ok",
}
TMP_TOOL = "/tmp/vendor-toolkit/bin/vendortool"
TMP_SECRET = "/tmp/vendor-toolkit/license.key"

DRIVER = r"""
import anyio, json, os, sys
from pathlib import Path
from mcp import Client
from mcp_localtools.config import parse_config
from mcp_localtools.server import build_server

spec = json.loads(sys.argv[1])
home = Path(spec["home"])
for name, text in {**spec["secrets"], **{k: "" for k in spec["tools"]}}.items():
    (home / name).parent.mkdir(parents=True, exist_ok=True)
for name, text in spec["secrets"].items():
    (home / name).write_text(text)
for path, text in [*((str(home / k), v) for k, v in spec["tools"].items()), (spec["tmp_tool"], "vendor-ok")]:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text("#!/bin/sh\necho " + text + "\n")
    Path(path).chmod(0o755)
Path(spec["tmp_secret"]).write_text(spec["tmp_secret_text"])
project = home / "project"
project.mkdir()
# Debian's stock ~/.profile, and what rustup and a vendor's installer append to it: the login
# shell gives commands this PATH; the server itself was started with the system's (a client's).
(home / ".profile").write_text(
    'if [ -d "$HOME/bin" ] ; then PATH="$HOME/bin:$PATH"; fi\n'
    'if [ -d "$HOME/.local/bin" ] ; then PATH="$HOME/.local/bin:$PATH"; fi\n'
    '. "$HOME/.cargo/env"\n'
    'PATH="' + str(Path(spec["tmp_tool"]).parent) + ':$PATH"\n'
)
(home / ".cargo/env").write_text('PATH="$HOME/.cargo/bin:$PATH"\n')
environ = {"HOME": str(home), "PATH": os.environ["PATH"], "LANG": "C.UTF-8", "SHELL": "/bin/bash"}
config = parse_config({"paths": {"allowed_roots": [str(project)]}, "audit": {"enabled": True}})


async def main():
    server = build_server(config, environ=environ)
    async with Client(server, raise_exceptions=True) as client:
        await client.call_tool("statpath", {"path": "."})  # a first line in the audit log
        result = await client.call_tool(
            "shellcommand", {"commands": spec["commands"], "executeParallel": True}
        )
        return result.structured_content


data = anyio.run(main)
audit = home / ".local/state/mcp-localtools/audit.jsonl"
print(json.dumps({"data": data, "audit_written": audit.exists() and audit.stat().st_size > 0}))
"""


def run_in_a_private_home(commands: list[str]) -> dict[str, Any]:
    """Run ``commands`` (one shellcommand call) on a server whose home is the realistic one."""
    spec = {
        "home": HOME,
        "secrets": SECRETS,
        "tools": TOOLS,
        "tmp_tool": TMP_TOOL,
        "tmp_secret": TMP_SECRET,
        "tmp_secret_text": "canary-tmp-license-6d2a",
        "commands": commands,
    }
    # The fresh /home and /tmp hide nothing this run needs: the folders there that hold the
    # checkout, its virtualenv or the interpreter are bound back from the real ones (kept on a
    # tmpfs at /mnt of this private namespace), so the test runs wherever they live.
    needed = {Path(p) for p in (sys.prefix, sys.base_prefix, os.path.realpath(sys.executable), REPO)}
    kept = sorted({str(Path(*p.parts[:3])) for p in needed if p.parts[1:2] in (("tmp",), ("home",))})
    binds = "".join(f" && mkdir -p {k} && mount --bind /mnt{k} {k}" for k in kept)
    script = (
        "mount -t tmpfs tmpfs /mnt && mkdir /mnt/home /mnt/tmp && mount --rbind /home /mnt/home"
        " && mount --rbind /tmp /mnt/tmp && mount -t tmpfs tmpfs /home && mount -t tmpfs tmpfs /tmp"
        f'{binds} && exec "{sys.executable}" -c "$0" "$1"'
    )
    done = subprocess.run(
        ["unshare", "-m", "--propagation", "private", "sh", "-c", script, DRIVER, json.dumps(spec)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd="/",
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return report


def test_no_secret_of_a_real_home_is_readable_and_its_tools_still_run() -> None:
    reads = [f"cat ~/{name}" for name in SECRETS]
    commands = [
        *reads,
        "cat ~/.local/state/mcp-localtools/audit.jsonl",
        f"cat {TMP_SECRET}",
        "ls -a ~ ~/.local ~/.cargo /tmp/vendor-toolkit",
        "mytool && othertool && cargo-fake && vendortool",
    ]
    report = run_in_a_private_home(commands)
    results = report["data"]["results"]
    assert report["data"]["sandbox"] == "bwrap" and report["audit_written"]
    shown = json.dumps(results)
    leaked = [text for text in [*SECRETS.values(), "canary-tmp-license-6d2a", "statpath"] if text in shown]
    assert leaked == [], f"readable inside the sandbox: {leaked}"
    assert [entry["exitCode"] != 0 for entry in results[: len(reads) + 2]] == [True] * (len(reads) + 2)
    listing = results[-2]["stdout"]
    assert ".ssh" not in listing and "license.key" not in listing and "credentials.toml" not in listing
    assert results[-1]["exitCode"] == 0, (results[-1]["stderr"], results[-2])
    assert results[-1]["stdout"].split() == ["mytool-ok", "othertool-ok", "cargo-ok", "vendor-ok"]
