"""Build the Claude Desktop bundle (``.mcpb``) of mcp-localtools with the official ``mcpb`` CLI.

Usage: ``python bundle/build.py [--out DIR] [--stage DIR]``

1. Stages the bundle: ``manifest.json`` and ``server/`` from this folder, and the project
   (``pyproject.toml``, ``README.md``, ``LICENSE``, ``src/mcp_localtools``) beside them. The
   manifest's ``server.type`` is ``uv``: the host installs the dependencies that ``pyproject.toml``
   declares with uv and runs ``server/main.py``, so no compiled wheel travels in the bundle.
2. Installs the pinned ``@anthropic-ai/mcpb`` (``package.json`` and ``package-lock.json`` here)
   with ``npm ci`` when ``node_modules`` lacks it.
3. ``mcpb validate`` the staged manifest, then ``mcpb pack`` it into
   ``DIR/mcp-localtools-VERSION.mcpb`` (default ``dist/``), and prints the bundle's path and size.

Exits non-zero with the tool's own output when a step fails, or when the manifest's version is not
the package's (``src/mcp_localtools/_version.py``).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
PROJECT_FILES = ("pyproject.toml", "README.md", "LICENSE")
IGNORED = shutil.ignore_patterns("__pycache__", "*.pyc", "*.pyo")


def package_version() -> str:
    """The version in ``src/mcp_localtools/_version.py``."""
    text = (REPO / "src" / "mcp_localtools" / "_version.py").read_text(encoding="utf-8")
    found = re.search(r'__version__\s*=\s*"([^"]+)"', text)
    if found is None:
        raise SystemExit("bundle: no __version__ in src/mcp_localtools/_version.py")
    return found.group(1)


def stage(target: Path) -> Path:
    """Lay the bundle's files out in ``target`` (created); returns ``target``."""
    manifest = json.loads((HERE / "manifest.json").read_text(encoding="utf-8"))
    if manifest["version"] != package_version():
        raise SystemExit(
            f"bundle: manifest.json has version {manifest['version']}, the package {package_version()}"
        )
    target.mkdir(parents=True, exist_ok=True)
    shutil.copy2(HERE / "manifest.json", target / "manifest.json")
    shutil.copytree(HERE / "server", target / "server", ignore=IGNORED, dirs_exist_ok=True)
    for name in PROJECT_FILES:
        shutil.copy2(REPO / name, target / name)
    package = REPO / "src" / "mcp_localtools"
    shutil.copytree(package, target / "src" / "mcp_localtools", ignore=IGNORED, dirs_exist_ok=True)
    return target


def mcpb() -> Path:
    """The pinned ``mcpb`` executable, installed with ``npm ci`` if needed."""
    executable = HERE / "node_modules" / ".bin" / "mcpb"
    if not executable.exists():
        npm = shutil.which("npm")
        if npm is None:
            raise SystemExit("bundle: npm is needed to install @anthropic-ai/mcpb (see bundle/package.json)")
        run([npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=HERE)
    return executable


def run(argv: list[str], cwd: Path | None = None) -> str:
    """Run ``argv``; its combined output, or exit with it when the command fails."""
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=600, check=False)
    output = done.stdout + done.stderr
    if done.returncode != 0:
        sys.stderr.write(output)
        raise SystemExit(f"bundle: {' '.join(argv[:2])} failed (exit {done.returncode})")
    return output


def build(out: Path, staged: Path) -> Path:
    """Stage, validate and pack; returns the ``.mcpb`` path."""
    stage(staged)
    tool = mcpb()
    print(run([str(tool), "validate", str(staged / "manifest.json")]).strip())
    out.mkdir(parents=True, exist_ok=True)
    bundle = out / f"mcp-localtools-{package_version()}.mcpb"
    run([str(tool), "pack", str(staged), str(bundle)])
    return bundle


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, default=REPO / "dist", help="where the .mcpb goes (dist/)")
    parser.add_argument("--stage", type=Path, help="stage here and keep it (default: a temporary folder)")
    ns = parser.parse_args(argv)
    if ns.stage is not None:
        bundle = build(ns.out.resolve(), ns.stage.resolve())
    else:
        with tempfile.TemporaryDirectory(prefix="mcp-localtools-bundle.") as folder:
            bundle = build(ns.out.resolve(), Path(folder) / "mcp-localtools")
    print(f"bundle: {bundle} ({bundle.stat().st_size:,} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
