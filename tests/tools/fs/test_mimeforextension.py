"""mimeforextension through the SDK client: the extension table, unknown and empty extensions."""

from __future__ import annotations

import pytest
from mcp import Client

from tests.helpers import error_code

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("given", ["", "   ", "."])
async def test_an_empty_extension_is_invalid(client: Client, given: str) -> None:
    result = await client.call_tool("mimeforextension", {"extension": given})
    assert error_code(result) == "invalid_path"


async def test_an_unknown_extension_is_not_an_error(client: Client) -> None:
    data = (await client.call_tool("mimeforextension", {"extension": "qqqzz"})).structured_content
    assert data == {
        "extension": "qqqzz",
        "normalizedExtension": ".qqqzz",
        "mimeType": "application/octet-stream",
        "baseMIMEType": "application/octet-stream",
        "mode": "default",
        "known": False,
    }


@pytest.mark.parametrize(
    ("given", "mime", "mode"),
    [
        ("png", "image/png", "image"),
        (".PNG", "image/png", "image"),
        (" .txt ", "text/plain", "text"),
        ("pdf", "application/pdf", "document"),
        ("tiff", "image/tiff", "image"),
    ],
)
async def test_known_extensions_map_to_their_type_and_mode(
    client: Client, given: str, mime: str, mode: str
) -> None:
    data = (await client.call_tool("mimeforextension", {"extension": given})).structured_content
    assert data["baseMIMEType"] == mime and data["mode"] == mode and data["known"] is True
    assert data["extension"] == given.strip()
