"""Callers that resolve (issue 37, item 3): a call is a caller of a definition when its name
resolves to it through the file's scope and imports; a bare-name match is a possible caller,
listed apart; a call that resolves to another definition of the name (a copy) is not one."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import config_for, connect, text_of

pytestmark = pytest.mark.anyio

PYTHON = {
    "pkg/__init__.py": "from .real import compute_total\n",
    "pkg/real.py": "def compute_total(values):\n    return sum(values)\n",
    "vendor/copy_of_real.py": "def compute_total(values):\n    return sum(values)  # a reference copy\n",
    "app.py": "from pkg.real import compute_total\n\n\ndef main():\n    return compute_total([1])\n",
    "through.py": "from pkg import compute_total\n\n\ndef via_package():\n    return compute_total([2])\n",
    "vendored.py": (
        "from vendor.copy_of_real import compute_total\n\n\ndef side():\n    return compute_total([3])\n"
    ),
    "loose.py": "def loose(report):\n    return report.compute_total([4])\n",
}
JAVASCRIPT = {
    "lib/layer.js": "function Layer(path) {\n  return { path: path };\n}\n\nmodule.exports = Layer;\n",
    "lib/router.js": "var Layer = require('./layer');\n\nfunction route(path) {\n  return Layer(path);\n}\n",
    "copy/layer.js": "function Layer(path) {\n  return { copy: path };\n}\n",
    "copy/use.js": (
        "import Layer from './layer';\n\nexport function copied(path) {\n  return Layer(path);\n}\n"
    ),
}


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")


async def _callers(root: Path, query: str) -> dict[str, list[str]]:
    async with connect(config_for(root)) as client:
        result = await client.call_tool("semanticsearch", {"query": query, "maxResults": 20})
    assert result.structured_content is not None, text_of(result)
    return {
        f"{hit['path']}:{hit.get('symbol')}": hit["callers"] for hit in result.structured_content["results"]
    }


async def test_python_callers_resolve_through_imports(tmp_path: Path) -> None:
    _write(tmp_path, PYTHON)
    callers = await _callers(tmp_path, "compute total")
    assert callers["pkg/real.py:compute_total"] == [
        "app.py:5 main",
        "through.py:5 via_package",
        "loose.py:2 loose (possible)",
    ]
    assert callers["vendor/copy_of_real.py:compute_total"] == [
        "vendored.py:5 side",
        "loose.py:2 loose (possible)",
    ]


async def test_javascript_callers_resolve_through_require_and_import(tmp_path: Path) -> None:
    _write(tmp_path, JAVASCRIPT)
    callers = await _callers(tmp_path, "Layer path")
    assert callers["lib/layer.js:Layer"] == ["lib/router.js:4 route"]
    assert callers["copy/layer.js:Layer"] == ["copy/use.js:4 copied"]


async def test_findsymbol_lists_possible_uses_apart(tmp_path: Path) -> None:
    _write(tmp_path, PYTHON)
    async with connect(config_for(tmp_path)) as client:
        result = await client.call_tool("findsymbol", {"name": "compute_total", "path": "."})
    assert result.structured_content is not None, text_of(result)
    uses = [(use["path"], use["resolved"]) for use in result.structured_content["references"]]
    assert ("app.py", True) in uses and ("vendored.py", True) in uses
    assert uses[-1] == ("loose.py", False)
    assert "possible uses" in text_of(result)
