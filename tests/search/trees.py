"""Generated directory trees for the search tests: everything an engine has to get right."""

from __future__ import annotations

import os
import random
from pathlib import Path

WORDS = ["alpha", "Beta", "gamma", "class", "Error", "foo", "bar", "TODO", "x", "   ", "é", "def", "(", ")"]

IGNORE_LINES = [
    "*.log",
    "!keep.log",
    "build/",
    "/top-only.txt",
    "deep/**/gen",
    "*.tmp",
    "!important.tmp",
    "cache",
    "docs/*.md",
    "!.hidden-kept",
    "# a comment",
    "",
    "sub*/skip?.txt",
    "[ab]ad.txt",
]


def _line(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 8)))


def _content(rng: random.Random) -> bytes:
    kind = rng.random()
    lines = [_line(rng) for _ in range(rng.randint(0, 30))]
    if kind < 0.1:
        return b""
    if kind < 0.2:  # a long line with a match in the middle
        lines.insert(
            rng.randint(0, len(lines)), "z" * rng.randint(300, 900) + " class FooError( " + "y" * 500
        )
    text = "\n".join(lines)
    if rng.random() < 0.7:
        text += "\n"
    if rng.random() < 0.15:
        text = text.replace("\n", "\r\n")
    data = text.encode("utf-8")
    if rng.random() < 0.08:  # binary: a NUL at the start or after some matching text
        data = (b"\x00" + data) if rng.random() < 0.5 else data + b"\nclass E(\x00 tail\n"
    return data


def make_tree(root: Path, seed: int, *, files: int = 120) -> Path:
    """Fill ``root`` with a reproducible tree of ``files`` files, ignore files at several levels,
    hidden entries, a ``.git`` directory, binaries, CRLF, long lines, symlinks and a FIFO."""
    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    names = ["src", "lib", "build", "deep", "docs", "sub1", "sub2", ".hid", "cache", "node_modules", "gen"]
    directories = [root]
    for _ in range(25):
        parent = rng.choice(directories)
        child = parent / rng.choice(names)
        child.mkdir(exist_ok=True)
        if child not in directories:
            directories.append(child)
    file_names = [
        "a.py", "b.txt", "keep.log", "x.log", "top-only.txt", "t.tmp", "important.tmp", "readme.md",
        ".hidden", ".hidden-kept", "skip1.txt", "bad.txt", "dad.txt", "data.bin", "Z.PY", "notes",
    ]  # fmt: skip
    for _ in range(files):
        (rng.choice(directories) / rng.choice(file_names)).write_bytes(_content(rng))
    for directory in rng.sample(directories, k=min(6, len(directories))):
        name = rng.choice([".gitignore", ".gitignore", ".ignore", ".rgignore"])
        lines = rng.sample(IGNORE_LINES, k=rng.randint(1, 5))
        (directory / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    (root / ".git" / "objects").mkdir(parents=True, exist_ok=True)
    (root / ".git" / "config").write_text("class GitError(\n", encoding="utf-8")
    nested = rng.choice(directories[1:]) if len(directories) > 1 else root
    (nested / ".git").mkdir(exist_ok=True)  # a nested repository: parent .gitignore files stop here
    (root / "big.txt").write_bytes(b"class BigError(\n" * 8000)
    (root / "link-to-file").symlink_to(root / "big.txt")
    (root / "link-to-dir").symlink_to(directories[-1])
    (root / "loop").symlink_to(root)
    os.mkfifo(root / "pipe.fifo")
    return root
