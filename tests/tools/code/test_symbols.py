"""symbols: the outline of a real file in each supported language, and of a directory."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.helpers import config_for, connect, error_code, text_of

pytestmark = pytest.mark.anyio

FIXTURES = Path(__file__).parent / "fixtures"

EXPECTED = {
    "inventory.py": ("python", ["MAX_ITEMS", "Inventory", "Inventory.__init__", "Inventory.add", "restock"]),
    "cart.js": ("javascript", ["Cart", "Cart.addLine", "cartTotal", "emptyCart"]),
    "users.ts": ("typescript", ["User", "Role", "UserId", "UserStore", "UserStore.fetchUser", "loadUser"]),
    "Button.tsx": ("tsx", ["ButtonProps", "Button", "IconButton"]),
    "server.go": ("go", ["DefaultPort", "Server", "NewServer", "Server.routes", "Server.health"]),
    "queue.rs": (
        "rust", ["JobQueue", "DEFAULT_LIMIT", "JobQueue", "JobQueue.new", "JobQueue.push", "Runner"]
    ),
    "Account.java": (
        "java",
        [
            "Account", "Account.balance", "Account.Account", "Account.transfer", "Account.withdraw",
            "Account.deposit", "Audited", "Audited.audit", "Currency",
        ],
    ),
    "ring.c": ("c", ["RING_SIZE", "ring", "ring_t", "ring_new", "ring_push"]),
    "matrix.cpp": (
        "cpp",
        [
            "linalg", "linalg.Matrix", "linalg.Matrix.Matrix", "linalg.Matrix.at", "linalg.Matrix.multiply",
            "linalg.Matrix.multiply", "trace",
        ],
    ),
    "Invoice.cs": (
        "csharp",
        [
            "Billing", "Billing.Invoice", "Billing.Invoice.Total", "Billing.Invoice.Invoice",
            "Billing.Invoice.ApplyDiscount", "Billing.Invoice.Round", "Billing.ISender",
            "Billing.ISender.Send", "Billing.Status",
        ],
    ),
    "greeter.rb": (
        "ruby",
        [
            "Greetings", "Greetings.Greeter", "Greetings.Greeter.initialize", "Greetings.Greeter.greet",
            "Greetings.Greeter.salutation",
        ],
    ),
    "Router.php": (
        "php",
        [
            "App\\Http", "Middleware", "Middleware.handle", "Router", "Router.routes", "Router.add",
            "Router.dispatch", "router",
        ],
    ),
    "deploy.sh": ("bash", ["build_archive", "upload"]),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(EXPECTED))
async def test_each_language_outlines_a_real_file(tmp_path: Path, name: str) -> None:
    shutil.copy(FIXTURES / name, tmp_path / name)
    language, qualified = EXPECTED[name]
    async with connect(config_for(tmp_path)) as client:
        result = await client.call_tool("symbols", {"path": name, "maxDepth": 5})
    assert not result.is_error, text_of(result)
    assert result.structured_content is not None
    [outline] = result.structured_content["files"]
    assert outline["language"] == language
    assert [s["qualifiedName"] for s in outline["symbols"]] == qualified


async def test_a_symbol_has_kind_lines_signature_and_doc(tmp_path: Path) -> None:
    shutil.copy(FIXTURES / "inventory.py", tmp_path / "inventory.py")
    async with connect(config_for(tmp_path)) as client:
        result = await client.call_tool("symbols", {"path": "inventory.py"})
    assert result.structured_content is not None
    add = next(s for s in result.structured_content["files"][0]["symbols"] if s["name"] == "add")
    assert add == {
        "kind": "method",
        "name": "add",
        "qualifiedName": "Inventory.add",
        "startLine": 12,
        "endLine": 14,
        "signature": "def add(self, name: str, count: int = 1) -> None:",
        "doc": "Put count items of name in stock.",
    }
    assert "12-14 method def add(self, name: str, count: int = 1) -> None:  # Put count items" in text_of(
        result
    )


async def test_max_depth_zero_shows_only_the_top_level(tmp_path: Path) -> None:
    shutil.copy(FIXTURES / "inventory.py", tmp_path / "inventory.py")
    async with connect(config_for(tmp_path)) as client:
        result = await client.call_tool("symbols", {"path": "inventory.py", "maxDepth": 0})
    assert result.structured_content is not None
    names = [s["name"] for s in result.structured_content["files"][0]["symbols"]]
    assert names == ["MAX_ITEMS", "Inventory", "restock"]


async def test_a_directory_outlines_its_files_by_path(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    for name in ("inventory.py", "server.go", "deploy.sh"):
        shutil.copy(FIXTURES / name, tmp_path / "pkg" / name)
    (tmp_path / "pkg" / "notes.md").write_text("# Notes\n\nnothing to outline\n", encoding="utf-8")
    async with connect(config_for(tmp_path)) as client:
        result = await client.call_tool("symbols", {"path": "pkg", "maxDepth": 0})
    assert not result.is_error, text_of(result)
    assert result.structured_content is not None
    paths = [f["path"] for f in result.structured_content["files"]]
    assert paths == ["pkg/deploy.sh", "pkg/inventory.py", "pkg/server.go"]


async def test_a_file_without_a_grammar_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("plain text\n", encoding="utf-8")
    async with connect(config_for(tmp_path)) as client:
        result = await client.call_tool("symbols", {"path": "notes.txt"})
    assert error_code(result) == "unsupported_content"
    assert "no grammar" in text_of(result)


async def test_a_broken_file_still_outlines_what_parses(tmp_path: Path) -> None:
    (tmp_path / "half.py").write_text("def good():\n    return 1\n\ndef bad(:\n    pass\n", encoding="utf-8")
    async with connect(config_for(tmp_path)) as client:
        result = await client.call_tool("symbols", {"path": "half.py"})
    assert not result.is_error
    assert result.structured_content is not None
    assert "good" in [s["name"] for s in result.structured_content["files"][0]["symbols"]]


async def test_a_huge_outline_is_cut_to_the_budget(tmp_path: Path) -> None:
    source = "".join(f"def function_number_{n}(argument_{n}):\n    return {n}\n\n" for n in range(3000))
    (tmp_path / "big.py").write_text(source, encoding="utf-8")
    async with connect(config_for(tmp_path, limits={"max_result_chars": 20000})) as client:
        result = await client.call_tool("symbols", {"path": "big.py"})
    assert result.structured_content is not None
    assert result.structured_content["truncated"] is True
    assert result.structured_content["totalSymbols"] == 3000
    assert "[truncated:" in text_of(result)
