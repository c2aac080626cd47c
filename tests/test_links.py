"""Everything a reader of the project needs is inside the repository: every relative link in its
Markdown files resolves to a file (and heading) in it, and no file points outside it."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SKIPPED_DIRS = {"node_modules", "__pycache__", "build", "dist"}  # and every directory named .*
TEXT_SUFFIXES = {".md", ".py", ".toml", ".txt", ".json", ".sh", ".yml", ".yaml", ".cfg", ""}
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE = re.compile(r"^\s*\[[^\]]+\]:\s*(\S+)", re.MULTILINE)
OUTSIDE = re.compile(r"\.\./shared/|\bshared/spec/|/work/(?:shared|coord|main|wt-)")


def _files(suffixes: set[str]) -> Iterator[Path]:
    for folder, dirs, names in os.walk(REPO):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") or d in {".ci", ".github"})
        dirs[:] = [d for d in dirs if d not in SKIPPED_DIRS and not d.endswith(".egg-info")]
        for name in sorted(names):
            path = Path(folder, name)
            if path.suffix in suffixes and name != ".git" and path.is_file() and not _binary(path):
                yield path


def _binary(path: Path) -> bool:
    """Whether ``path`` holds a NUL byte in its first 8 KiB: data, not text (coverage's
    ``.coverage`` database, which a coverage run leaves in the checkout)."""
    with path.open("rb") as file:
        return b"\0" in file.read(8192)


def _prose(markdown: str) -> str:
    """The Markdown without fenced code blocks and inline code, where links are not links."""
    without_fences = re.sub(r"^(```|~~~).*?^\1", "", markdown, flags=re.MULTILINE | re.DOTALL)
    return re.sub(r"`[^`\n]*`", "", without_fences)


def _anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[`*_]|\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip()).lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def _anchors(markdown: str) -> set[str]:
    return {_anchor(h) for h in re.findall(r"^#{1,6} (.+)$", _prose(markdown), re.MULTILINE)}


def _links(markdown: str) -> list[str]:
    prose = _prose(markdown)
    return LINK.findall(prose) + REFERENCE.findall(prose)


MARKDOWN = sorted(_files({".md"}))


def test_the_markdown_files_are_found() -> None:
    names = {path.relative_to(REPO).as_posix() for path in MARKDOWN}
    assert {"README.md", "docs/ARCHITECTURE.md", "docs/clients.md"} <= names


@pytest.mark.parametrize("document", MARKDOWN, ids=lambda path: path.relative_to(REPO).as_posix())
def test_every_relative_link_resolves_inside_the_repository(document: Path) -> None:
    text = document.read_text(encoding="utf-8")
    broken: list[str] = []
    for link in _links(text):
        if re.match(r"^[a-z][a-z0-9+.-]*:", link, re.IGNORECASE):  # https:, mailto:
            assert link.startswith(("https://", "http://", "mailto:")), link
            continue
        target, _, fragment = link.partition("#")
        path = (document.parent / target).resolve() if target else document
        if not path.is_relative_to(REPO) or not path.exists():
            broken.append(f"{link}: no such file in the repository")
            continue
        if fragment and path.suffix == ".md" and fragment not in _anchors(path.read_text(encoding="utf-8")):
            broken.append(f"{link}: no heading #{fragment} in {path.relative_to(REPO)}")
    assert not broken, f"{document.relative_to(REPO)}: {broken}"


def test_no_file_of_the_project_refers_to_anything_outside_the_repository() -> None:
    this = Path(__file__).resolve()
    offenders = [
        f"{path.relative_to(REPO)}:{number}: {line.strip()}"
        for path in _files(TEXT_SUFFIXES)
        if path != this
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1)
        if OUTSIDE.search(line)
    ]
    assert not offenders, "point these at the project's own docs/ instead:\n" + "\n".join(offenders)


def test_the_anchor_rule_matches_githubs_for_our_headings() -> None:
    assert _anchor("Profiles: one server, different tool sets per client") == (
        "profiles-one-server-different-tool-sets-per-client"
    )
    assert _anchor("JSON command line and Python API") == "json-command-line-and-python-api"
    assert _anchor("The error contract") == "the-error-contract"
