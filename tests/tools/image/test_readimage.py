"""readimage through the SDK client: paths, formats, metadata, fitting, hostile images."""

from __future__ import annotations

import base64
import io
import os
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.types import CallToolResult, ImageContent
from PIL import Image

from tests.helpers import (
    client_env,
    config_for,
    connect,
    error_code,
    installed_command,
    make_bomb_png,
    make_large_png,
    make_png,
    parser_workers,
    text_of,
)

pytestmark = pytest.mark.anyio

CLIENT_MIME_TYPES = {"image/png", "image/jpeg", "image/gif", "image/webp"}
MiB = 1024 * 1024


def images_of(result: CallToolResult) -> list[ImageContent]:
    return [block for block in result.content if isinstance(block, ImageContent)]


def picture(block: ImageContent) -> Image.Image:
    image = Image.open(io.BytesIO(base64.b64decode(block.data)))
    image.load()
    return image


def encoded(image: Image.Image, fmt: str, **options: Any) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, fmt, **options)
    return buffer.getvalue()


@pytest.fixture(scope="module")
def huge_png() -> bytes:
    """A 10000 x 10000 PNG with many colours (about 300 KB on disk, 400 MB decoded)."""
    return make_large_png(10000, 10000)


# --- paths: roots, missing files, directories, symlinks -------------------------------------------


async def test_an_empty_path_is_an_invalid_path(client: Client) -> None:
    result = await client.call_tool("readimage", {"path": "  "})
    assert error_code(result) == "invalid_path"


async def test_a_path_outside_the_roots_is_refused(client: Client, tmp_path: Path) -> None:
    result = await client.call_tool("readimage", {"path": "../elsewhere.png"})
    assert error_code(result) == "outside_roots"


async def test_a_missing_file_is_exists_false_and_not_an_error(client: Client, tmp_path: Path) -> None:
    result = await client.call_tool("readimage", {"path": "nope.png", "includeBase64Data": True})
    assert not result.is_error
    assert result.structured_content == {
        "path": str(tmp_path / "nope.png"),
        "name": "nope.png",
        "exists": False,
    }
    assert images_of(result) == []


async def test_a_directory_is_refused(client: Client, tmp_path: Path) -> None:
    (tmp_path / "pics").mkdir()
    result = await client.call_tool("readimage", {"path": "pics"})
    assert error_code(result) == "not_a_file"
    assert "expected a file but got a directory" in text_of(result)


async def test_a_fifo_is_refused_without_hanging(client: Client, tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.png")
    with anyio.fail_after(30):
        result = await client.call_tool("readimage", {"path": "pipe.png"})
    assert error_code(result) == "not_a_file"
    assert "expected a regular file" in text_of(result)


async def test_a_symlink_is_refused_even_when_symlinks_are_allowed(client: Client, tmp_path: Path) -> None:
    (tmp_path / "real.png").write_bytes(make_png())
    (tmp_path / "alias.png").symlink_to(tmp_path / "real.png")
    result = await client.call_tool("readimage", {"path": "alias.png"})
    assert error_code(result) == "symlink_refused"
    assert "refusing to operate on symlink file" in text_of(result)
    assert not (await client.call_tool("readimage", {"path": "real.png"})).is_error


async def test_a_path_through_a_file_is_exists_false(client: Client, tmp_path: Path) -> None:
    (tmp_path / "a.png").write_bytes(make_png())
    result = await client.call_tool("readimage", {"path": "a.png/b.png"})
    assert not result.is_error, text_of(result)
    assert result.structured_content == {
        "path": str(tmp_path / "a.png" / "b.png"),
        "name": "b.png",
        "exists": False,
    }


async def test_a_dangling_symlink_is_refused_as_a_symlink(client: Client, tmp_path: Path) -> None:
    (tmp_path / "alias.png").symlink_to(tmp_path / "later.png")
    result = await client.call_tool("readimage", {"path": "alias.png"})
    assert error_code(result) == "symlink_refused"
    assert f"refusing to operate on symlink file: {tmp_path / 'alias.png'}" in text_of(result)


# --- metadata and bytes ---------------------------------------------------------------------------


def _sample(mode: str, size: tuple[int, int]) -> Image.Image:
    return Image.linear_gradient("L").resize(size).convert(mode)


FORMATS: list[tuple[str, str, str, str, dict[str, Any]]] = [
    # file name, Pillow save format, mode saved, mode reported, save options
    ("a.png", "PNG", "RGBA", "RGBA", {}),
    ("a.jpg", "JPEG", "RGB", "RGB", {}),
    ("cmyk.jpg", "JPEG", "CMYK", "CMYK", {}),
    ("a.gif", "GIF", "P", "P", {}),
    ("a.webp", "WEBP", "RGB", "RGB", {}),
    ("a.bmp", "BMP", "RGB", "RGB", {}),
    ("a.tiff", "TIFF", "RGB", "RGB", {}),
    ("grey16.tiff", "TIFF", "I;16", "I;16", {}),
    ("a.ico", "ICO", "RGBA", "RGBA", {}),
    ("a.tga", "TGA", "RGB", "RGB", {}),
    ("a.ppm", "PPM", "RGB", "RGB", {}),
    ("a.pcx", "PCX", "RGB", "RGB", {}),
]


@pytest.mark.parametrize(("name", "fmt", "mode", "reported_mode", "options"), FORMATS)
async def test_every_format_round_trips_its_metadata_and_comes_back_as_client_image_content(
    client: Client,
    tmp_path: Path,
    name: str,
    fmt: str,
    mode: str,
    reported_mode: str,
    options: dict[str, Any],
) -> None:
    (tmp_path / name).write_bytes(
        encoded(_sample(mode, (48, 32) if fmt != "ICO" else (32, 32)), fmt, **options)
    )
    with Image.open(tmp_path / name) as expected:
        expected.load()

    meta = await client.call_tool("readimage", {"path": name})
    data = meta.structured_content
    assert not meta.is_error, text_of(meta)
    assert (data["width"], data["height"]) == expected.size
    assert data["format"] == (expected.format or "").lower()
    assert data["mode"] == reported_mode == expected.mode
    assert data["mimeType"].startswith("image/")
    assert data["frameCount"] == 1 and data["sizeBytes"] == (tmp_path / name).stat().st_size
    assert images_of(meta) == []

    full = await client.call_tool("readimage", {"path": name, "includeBase64Data": True})
    [block] = images_of(full)
    returned = full.structured_content["returned"]
    assert block.mime_type in CLIENT_MIME_TYPES and block.mime_type == returned["mimeType"]
    assert picture(block).size == expected.size == (returned["width"], returned["height"])
    assert len(base64.b64decode(block.data)) == returned["sizeBytes"]
    assert returned["reencoded"] is (fmt not in ("PNG", "JPEG", "GIF", "WEBP") or mode == "CMYK")


async def test_metadata_has_frames_dpi_and_orientation_when_the_file_has_them(
    client: Client, tmp_path: Path
) -> None:
    frames = [Image.new("RGB", (20, 10), colour) for colour in ("red", "green", "blue")]
    frames[0].save(tmp_path / "anim.gif", save_all=True, append_images=frames[1:], duration=50)
    exif = Image.Exif()
    exif[0x0112] = 8
    (tmp_path / "photo.jpg").write_bytes(
        encoded(Image.new("RGB", (30, 20)), "JPEG", dpi=(300, 300), exif=exif)
    )

    anim = (await client.call_tool("readimage", {"path": "anim.gif"})).structured_content
    photo = (await client.call_tool("readimage", {"path": "photo.jpg"})).structured_content
    assert anim["frameCount"] == 3 and anim["format"] == "gif" and "orientation" not in anim
    assert photo["dpi"] == [300.0, 300.0] and photo["orientation"] == 8
    assert (photo["width"], photo["height"]) == (30, 20)  # as stored; orientation says how to show it
    as_webp = await client.call_tool(
        "readimage", {"path": "anim.gif", "includeBase64Data": True, "format": "webp"}
    )
    assert as_webp.structured_content["note"] == "the image content is the first of 3 frames"


async def test_a_png_name_with_garbage_bytes_is_a_clear_error(client: Client, tmp_path: Path) -> None:
    (tmp_path / "fake.png").write_bytes(b"this is not a png at all" * 10)
    result = await client.call_tool("readimage", {"path": "fake.png"})
    assert error_code(result) == "unsupported_content"
    assert f"cannot read image {tmp_path / 'fake.png'}: it is not an image" in text_of(result)


async def test_a_text_file_is_not_an_image(client: Client, tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello\n", encoding="utf-8")
    result = await client.call_tool("readimage", {"path": "notes.txt"})
    assert error_code(result) == "unsupported_content"
    assert "not an image" in text_of(result)


async def test_an_image_that_fits_comes_back_byte_for_byte(client: Client, tmp_path: Path) -> None:
    png = make_png(5, 7)
    (tmp_path / "p.png").write_bytes(png)
    result = await client.call_tool("readimage", {"path": "p.png", "includeBase64Data": True})
    [block] = images_of(result)
    assert base64.b64decode(block.data) == png and block.mime_type == "image/png"
    assert result.structured_content["returned"] == {
        "width": 5,
        "height": 7,
        "sizeBytes": len(png),
        "mimeType": "image/png",
        "reencoded": False,
        "resized": False,
    }


async def test_an_image_over_the_read_cap_is_refused_when_its_bytes_are_asked_for(tmp_path: Path) -> None:
    (tmp_path / "big.png").write_bytes(make_large_png(400, 400) + b"\0" * 8000)
    async with connect(config_for(tmp_path, limits={"max_read_bytes": 4096})) as client:
        result = await client.call_tool("readimage", {"path": "big.png", "includeBase64Data": True})
    assert error_code(result) == "too_large"


async def test_metadata_of_a_file_over_the_read_cap_comes_from_its_head(tmp_path: Path) -> None:
    noise = Image.effect_noise((200, 150), 80).convert("RGB")
    (tmp_path / "noisy.jpg").write_bytes(encoded(noise, "JPEG", quality=95))
    assert (tmp_path / "noisy.jpg").stat().st_size > 4096
    async with connect(config_for(tmp_path, limits={"max_read_bytes": 4096})) as client:
        result = await client.call_tool("readimage", {"path": "noisy.jpg"})
    data = result.structured_content
    assert not result.is_error, text_of(result)
    assert (data["width"], data["height"], data["format"]) == (200, 150, "jpeg")
    assert "first 4096 bytes" in data["note"]


async def test_a_1x1_png_reports_its_size_and_readfile_binary_gives_image_content(
    client: Client, tmp_path: Path
) -> None:
    (tmp_path / "dot.png").write_bytes(make_png(1, 1))
    meta = (await client.call_tool("readimage", {"path": "dot.png"})).structured_content
    assert meta["exists"] is True and (meta["width"], meta["height"]) == (1, 1)
    binary = await client.call_tool("readfile", {"path": "dot.png", "encoding": "binary"})
    assert [block.mime_type for block in images_of(binary)] == ["image/png"]


# --- images fitted to what clients accept ---------------------------------------------------------


@pytest.mark.slow
async def test_a_10000px_png_comes_back_within_1568px_and_1mib_with_both_sizes_reported(
    client: Client, tmp_path: Path, huge_png: bytes
) -> None:
    (tmp_path / "huge.png").write_bytes(huge_png)
    with anyio.fail_after(300):
        result = await client.call_tool("readimage", {"path": "huge.png", "includeBase64Data": True})
    assert not result.is_error, text_of(result)
    data = result.structured_content
    returned = data["returned"]
    assert (data["width"], data["height"], data["sizeBytes"]) == (10000, 10000, len(huge_png))
    assert max(returned["width"], returned["height"]) <= 1568
    assert returned["resized"] is True and returned["reencoded"] is True
    [block] = images_of(result)
    assert len(block.data) <= 1_000_000 < MiB  # what a client counts: the base64
    assert len(base64.b64decode(block.data)) == returned["sizeBytes"]
    assert picture(block).size == (returned["width"], returned["height"])
    assert len(result.model_dump_json(by_alias=True)) < MiB  # the whole result fits Claude Desktop's limit


async def test_an_exif_rotated_jpeg_comes_back_upright(client: Client, tmp_path: Path) -> None:
    stored = Image.new("RGB", (40, 20), "red")
    stored.paste(Image.new("RGB", (20, 20), "blue"), (20, 0))  # left red, right blue
    exif = Image.Exif()
    exif[0x0112] = 6  # shown rotated 90 degrees clockwise: the left (red) column becomes the top
    (tmp_path / "side.jpg").write_bytes(encoded(stored, "JPEG", exif=exif, quality=95))
    result = await client.call_tool("readimage", {"path": "side.jpg", "includeBase64Data": True})
    data = result.structured_content
    upright = picture(images_of(result)[0]).convert("RGB")
    assert (data["width"], data["height"], data["orientation"]) == (40, 20, 6)
    assert upright.size == (20, 40) == (data["returned"]["width"], data["returned"]["height"])
    top, bottom = upright.getpixel((10, 5)), upright.getpixel((10, 35))
    assert isinstance(top, tuple) and isinstance(bottom, tuple)
    assert top[0] > 200 and top[2] < 60, top
    assert bottom[2] > 200 and bottom[0] < 60, bottom
    assert data["returned"]["reencoded"] is True and data["returned"]["resized"] is False


async def test_transparency_and_few_colours_stay_png_and_photos_become_jpeg(
    client: Client, tmp_path: Path
) -> None:
    glass = Image.linear_gradient("L").resize((2400, 1200))
    clear = Image.new("RGBA", (2400, 1200), "navy")
    clear.putalpha(glass)
    (tmp_path / "alpha.png").write_bytes(encoded(clear, "PNG"))
    flat = Image.new("RGB", (2400, 1200), "white")
    flat.paste(Image.new("RGB", (800, 400), "black"), (100, 100))
    (tmp_path / "diagram.png").write_bytes(encoded(flat, "PNG"))
    (tmp_path / "photo.png").write_bytes(make_large_png(2400, 1200))

    kinds = {}
    for name in ("alpha.png", "diagram.png", "photo.png"):
        result = await client.call_tool("readimage", {"path": name, "includeBase64Data": True})
        returned = result.structured_content["returned"]
        assert (returned["width"], returned["height"]) == (1568, 784)
        kinds[name] = images_of(result)[0].mime_type
    assert kinds == {"alpha.png": "image/png", "diagram.png": "image/png", "photo.png": "image/jpeg"}


async def test_the_call_can_ask_for_a_format_a_smaller_size_and_fewer_bytes(
    client: Client, tmp_path: Path
) -> None:
    (tmp_path / "g.png").write_bytes(make_large_png(800, 600))
    as_webp = await client.call_tool(
        "readimage", {"path": "g.png", "includeBase64Data": True, "format": "webp"}
    )
    small = await client.call_tool(
        "readimage", {"path": "g.png", "includeBase64Data": True, "maxDimension": 100}
    )
    tight = await client.call_tool(
        "readimage", {"path": "g.png", "includeBase64Data": True, "maxBytes": 16384}
    )
    assert images_of(as_webp)[0].mime_type == "image/webp"
    assert picture(images_of(small)[0]).size == (100, 75)
    assert len(images_of(tight)[0].data) <= 16384  # maxBytes counts the base64 that clients count
    assert (
        len(base64.b64decode(images_of(tight)[0].data)) == tight.structured_content["returned"]["sizeBytes"]
    )


@pytest.mark.parametrize(
    ("arguments", "field"), [({"maxDimension": 9000}, "maxDimension"), ({"maxBytes": 6 * MiB}, "maxBytes")]
)
async def test_limits_above_the_hard_maxima_are_refused(
    client: Client, tmp_path: Path, arguments: dict[str, int], field: str
) -> None:
    (tmp_path / "p.png").write_bytes(make_png())
    result = await client.call_tool("readimage", {"path": "p.png", **arguments})
    assert error_code(result) == "invalid_arguments"
    assert field in text_of(result)


# --- SVG: metadata only ---------------------------------------------------------------------------


async def test_svg_gives_width_height_and_viewbox(client: Client, tmp_path: Path) -> None:
    (tmp_path / "logo.svg").write_text(
        '<?xml version="1.0"?>\n<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" '
        '"http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd">\n'
        '<svg xmlns="http://www.w3.org/2000/svg" width="120px" height="1in" viewBox="0 0 12 9.6"/>\n',
        encoding="utf-8",
    )
    (tmp_path / "box.svg").write_text('<svg viewBox="0,0,300,150"><rect/></svg>', encoding="utf-8")
    logo = (await client.call_tool("readimage", {"path": "logo.svg"})).structured_content
    box = (await client.call_tool("readimage", {"path": "box.svg"})).structured_content
    assert (logo["format"], logo["mimeType"], logo["width"], logo["height"]) == (
        "svg",
        "image/svg+xml",
        120,
        96,
    )
    assert logo["viewBox"] == [0, 0, 12, 9.6]
    assert (box["width"], box["height"]) == (300, 150)


async def test_svg_with_base64_requested_returns_no_image_and_says_so(client: Client, tmp_path: Path) -> None:
    (tmp_path / "i.svg").write_text('<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"/>', "utf-8")
    result = await client.call_tool("readimage", {"path": "i.svg", "includeBase64Data": True})
    assert not result.is_error
    assert images_of(result) == []
    assert "no image content" in result.structured_content["note"]


async def test_an_svg_declaring_entities_is_refused(client: Client, tmp_path: Path) -> None:
    laughs = "".join(f'<!ENTITY l{n} "{f"&l{n - 1};" * 10}">' for n in range(1, 10))
    (tmp_path / "lol.svg").write_text(
        f'<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY l0 "lol">{laughs}]><svg width="&l9;"/>', "utf-8"
    )
    with anyio.fail_after(60):
        result = await client.call_tool("readimage", {"path": "lol.svg"})
    assert error_code(result) == "unsupported_content"
    assert "entities" in text_of(result)


# --- hostile images -------------------------------------------------------------------------------


@pytest.mark.parametrize("side", [12_000, 40_000])
async def test_a_decompression_bomb_is_refused_quickly_without_decoding(
    client: Client, tmp_path: Path, side: int
) -> None:
    (tmp_path / "bomb.png").write_bytes(make_bomb_png(side, side))
    for arguments in ({"path": "bomb.png"}, {"path": "bomb.png", "includeBase64Data": True}):
        with anyio.fail_after(60):
            result = await client.call_tool("readimage", arguments)
        # refused by the size its header declares: decoding it would need {side}**2 * 4 bytes
        assert error_code(result) == "too_large"
        assert f"declares {side * side:,} pixels" in text_of(result)
        assert "decompression-bomb" in text_of(result)


async def test_a_truncated_png_is_a_clear_error(client: Client, tmp_path: Path) -> None:
    whole = encoded(Image.effect_noise((300, 200), 60).convert("RGB"), "PNG")
    (tmp_path / "cut.png").write_bytes(whole[: len(whole) // 2])
    for arguments in ({"path": "cut.png"}, {"path": "cut.png", "includeBase64Data": True}):
        with anyio.fail_after(60):
            result = await client.call_tool("readimage", arguments)
        assert error_code(result) == "unsupported_content"
        assert f"cannot read image {tmp_path / 'cut.png'}" in text_of(result)
        assert "runcated" in text_of(result)


@pytest.mark.slow
async def test_a_slow_parse_does_not_block_a_concurrent_statpath(
    client: Client, tmp_path: Path, huge_png: bytes
) -> None:
    (tmp_path / "huge.png").write_bytes(huge_png)
    (tmp_path / "a.txt").write_text("a", encoding="utf-8")
    finished: list[str] = []

    async def parse() -> None:
        result = await client.call_tool("readimage", {"path": "huge.png", "includeBase64Data": True})
        assert not result.is_error, text_of(result)
        finished.append("readimage")

    with anyio.fail_after(300):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(parse)
            while not parser_workers():  # the decode is under way in its worker
                await anyio.sleep(0.01)
            stat = await client.call_tool("statpath", {"path": "a.txt"})
            finished.append("statpath")
            still_parsing = bool(parser_workers())
    assert not stat.is_error and stat.structured_content["exists"] is True
    assert still_parsing, "the parse ended before statpath was answered; the test proved nothing"
    assert finished == ["statpath", "readimage"]
    assert parser_workers() == []


async def test_readimage_is_listed_in_the_image_group_and_can_be_disabled(tmp_path: Path) -> None:
    async with connect(config_for(tmp_path)) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
    async with connect(config_for(tmp_path, tools={"disabled": ["image"]})) as client:
        without = {tool.name for tool in (await client.list_tools()).tools}
    assert "readimage" in names and "readimage" not in without and "readfile" in without


async def test_a_desktop_client_over_stdio_gets_a_photo_as_image_content_it_accepts(tmp_path: Path) -> None:
    (tmp_path / "photo.png").write_bytes(make_large_png(3000, 2000))
    params = StdioServerParameters(
        command=installed_command(), args=["--root", str(tmp_path)], cwd=str(tmp_path), env=client_env()
    )
    with anyio.fail_after(120):
        async with Client(params, mode="legacy") as client:
            result = await client.call_tool("readimage", {"path": "photo.png", "includeBase64Data": True})
    [block] = images_of(result)
    assert block.mime_type == "image/jpeg"
    assert picture(block).size == (1568, 1045)
    assert len(block.data) <= 1_000_000


async def test_a_jpeg_with_thousands_of_scans_is_refused_before_decoding(
    client: Client, tmp_path: Path
) -> None:
    """10,000 progressive scans took 15-16 s of CPU to decode; the scans are counted first."""
    buffer = io.BytesIO()
    Image.new("RGB", (16, 16), "red").save(buffer, "JPEG", progressive=True)
    normal = buffer.getvalue()
    assert 1 < normal.count(b"\xff\xda") < 20  # what an encoder writes
    head, _, tail = normal.rpartition(b"\xff\xd9")
    scan = normal[normal.rindex(b"\xff\xda") : len(head)]
    (tmp_path / "bomb.jpg").write_bytes(head + scan * 10_000 + b"\xff\xd9" + tail)
    with anyio.fail_after(60):
        result = await client.call_tool("readimage", {"path": "bomb.jpg", "includeBase64Data": True})
    assert error_code(result) == "unsupported_content"  # the scans are counted before any decoding
    assert "scans (over 500)" in text_of(result) and "re-encode" in text_of(result)
    (tmp_path / "fine.jpg").write_bytes(normal)
    assert not (await client.call_tool("readimage", {"path": "fine.jpg", "includeBase64Data": True})).is_error
