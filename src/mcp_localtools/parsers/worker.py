"""The parser worker: decodes one untrusted image, SVG or PDF in a short-lived, confined process.

``runner.py`` starts it as ``python -I -B worker.py OP MEMORY_BYTES CPU_SECONDS`` and kills it
when the call's time is up. The server never imports this module: it is a script that uses only
the standard library plus the one parser library its operation needs, so a decoder that hangs,
crashes or exhausts memory takes this process down and nothing else.

Before it reads a byte of the file it confines itself: ``MEMORY_BYTES`` of address space,
``CPU_SECONDS`` of CPU, no file writes, no core dumps, few file descriptors, and its stdout
moved aside so that nothing but the response can reach the server.

Protocol (one request, one response, then exit):

* stdin: one JSON line ``{"size": N, ...operation parameters}`` of at most 64 KiB, then exactly N
  bytes of file data.
* stdout: one JSON line ``{"ok": true, "result": {...}, "payloadSize": M}`` followed by M bytes
  (a re-encoded image or UTF-8 text), or ``{"ok": false, "kind": KIND, "message": REASON}`` where
  KIND is ``unsupported``, ``too_large`` or ``invalid_arguments`` and REASON completes the
  sentence "cannot read <file>: ...".
"""

from __future__ import annotations

import io
import json
import os
import re
import struct
import sys
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, BinaryIO, NoReturn, cast

if TYPE_CHECKING:
    from PIL.Image import Image
    from PIL.ImageFile import ImageFile

MAX_IMAGE_PIXELS = 2**27
"""Largest canvas decoded: 134,217,728 pixels (11585 px square, 16384 x 8192). A file declaring
more is refused before any pixel is decoded (the decompression-bomb guard)."""

CLIENT_FORMATS = {"PNG": "image/png", "JPEG": "image/jpeg", "GIF": "image/gif", "WEBP": "image/webp"}
"""Formats that MCP clients and model APIs accept as image content."""

_EXCLUDED_FORMATS = frozenset({"EPS"})  # Pillow runs Ghostscript, an external program, to read EPS
_QUALITIES = (85, 75, 60, 45)  # JPEG/WebP qualities tried, best first, before shrinking further
_CONVERT_BEFORE_RESIZE = 32_000_000  # pixels: palette images above this resize by nearest neighbour
_MAX_HEADER = 64 * 1024
# What decoders raise on damaged input, for the optional metadata that must not sink the rest.
_DAMAGED = (OSError, ValueError, SyntaxError, struct.error, KeyError, IndexError, TypeError, EOFError)

Result = tuple[dict[str, Any], bytes]


class Refusal(Exception):
    """The file cannot be handled; ``kind`` selects the server's error type."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


# --- confinement -------------------------------------------------------------------------------


def confine(memory_bytes: int, cpu_seconds: int) -> None:
    """Apply resource limits to this process; best effort where the OS refuses one (macOS has
    no working ``RLIMIT_AS``)."""
    if sys.platform != "win32":  # Windows has no ``resource``: only the runner's timeout and kill apply
        import resource
        import signal

        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write then fails with EFBIG instead of killing
        wanted = [
            (resource.RLIMIT_AS, memory_bytes, memory_bytes),
            (resource.RLIMIT_CPU, cpu_seconds, cpu_seconds + 1),  # SIGXCPU, then SIGKILL a second later
            (resource.RLIMIT_FSIZE, 0, 0),
            (resource.RLIMIT_CORE, 0, 0),
            (resource.RLIMIT_NOFILE, 32, 32),
        ]
        for which, soft, hard in wanted:
            try:
                _, current_hard = resource.getrlimit(which)
                if current_hard != resource.RLIM_INFINITY:
                    soft, hard = min(soft, current_hard), min(hard, current_hard)
                resource.setrlimit(which, (soft, hard))
            except (ValueError, OSError):
                pass


def private_stdout() -> io.BufferedWriter:
    """Keep a private duplicate of stdout for the response and point fd 1 at /dev/null, so a
    library that prints cannot corrupt the response."""
    response = os.fdopen(os.dup(1), "wb")
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.close(devnull)
    return response


# --- images ------------------------------------------------------------------------------------


def _bomb_message(exc: Exception) -> str:
    match = re.search(r"\((\d+) pixels\)", str(exc))
    declared = f"{int(match.group(1)):,} pixels" if match else "more pixels than allowed"
    return (
        f"it declares {declared}, more than the limit of {MAX_IMAGE_PIXELS:,}; refused without "
        "decoding (decompression-bomb guard)"
    )


def _open_image(data: bytes) -> ImageFile:
    from PIL import Image, ImageFile, UnidentifiedImageError

    Image.MAX_IMAGE_PIXELS = MAX_IMAGE_PIXELS
    ImageFile.LOAD_TRUNCATED_IMAGES = False
    # Pillow only warns between the limit and twice the limit: here the limit is an error.
    warnings.simplefilter("error", Image.DecompressionBombWarning)
    try:
        # No ``formats`` list: Pillow then tries its common plugins before importing all of them,
        # which keeps the worker's start-up short for PNG, JPEG, GIF, BMP and TIFF.
        im = Image.open(io.BytesIO(data))
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        raise Refusal("too_large", _bomb_message(exc)) from exc
    except UnidentifiedImageError as exc:
        raise Refusal(
            "unsupported",
            "it is not an image in a format this server reads (PNG, JPEG, GIF, WebP, BMP, TIFF, ICO, ...)",
        ) from exc
    if im.format in _EXCLUDED_FORMATS:  # refused after reading the header, before any decoding
        im.close()
        raise Refusal("unsupported", f"{im.format} is not decoded: Pillow would run an external program")
    return im


def _orientation(im: Image) -> int | None:
    try:
        value = im.getexif().get(0x0112)
    except _DAMAGED:  # a malformed EXIF block must not hide the rest of the metadata
        return None
    return value if isinstance(value, int) and 1 <= value <= 8 else None


def _dpi(im: Image) -> list[float] | None:
    try:
        x, y = (round(float(v), 2) for v in im.info["dpi"])
    except (KeyError, TypeError, ValueError):
        return None
    return [x, y] if x > 0 and y > 0 else None


def _frame_count(im: Image) -> int | None:
    try:
        return int(getattr(im, "n_frames", 1))
    except _DAMAGED:  # counting frames walks the file; a cut-off or damaged file may not allow it
        return None


def _has_alpha(im: Image) -> bool:
    """True when the image has transparency that is actually used."""
    if im.mode in ("RGBA", "LA"):
        low, _ = cast(tuple[int, int], im.getchannel("A").getextrema())
        return low < 255
    return im.mode == "P" and "transparency" in im.info


def _displayable(im: Image) -> Image:
    """Exotic modes (16-bit, float, CMYK, YCbCr, ...) as L, RGB or RGBA; common ones unchanged."""
    if im.mode in ("L", "RGB") and "transparency" in im.info:
        return im.convert("RGBA")
    if im.mode in ("L", "RGB", "RGBA", "LA", "P"):
        return im
    if im.mode == "1":
        return im.convert("L")
    if im.mode.startswith("I") or im.mode == "F":  # stretch the used range to 8 bits
        wide = im.convert("F")
        low, high = cast(tuple[float, float], wide.getextrema())
        scale = 255.0 / (high - low) if high > low else 1.0
        return wide.point(lambda v: v * scale - low * scale).convert("L")
    return im.convert("RGBA" if "A" in im.getbands() else "RGB")


def _choose_format(im: Image, wanted: str) -> str:
    if wanted != "auto":
        return wanted.upper()
    if im.mode == "P" or _has_alpha(im):
        return "PNG"
    return "PNG" if im.getcolors(256) is not None else "JPEG"  # few colours: drawings, screenshots


def _encode(im: Image, fmt: str, quality: int) -> bytes:
    from PIL import Image

    if fmt == "JPEG" and im.mode not in ("L", "RGB"):
        rgba = im.convert("RGBA")
        flat = Image.new("RGB", rgba.size, "white")  # JPEG has no alpha: flatten onto white
        flat.paste(rgba, mask=rgba.getchannel("A"))
        im = flat
    elif fmt == "WEBP" and im.mode not in ("RGB", "RGBA"):
        im = im.convert("RGBA" if _has_alpha(im) else "RGB")
    buffer = io.BytesIO()
    if fmt == "PNG":
        im.save(buffer, "PNG", compress_level=6)
    else:
        im.save(buffer, fmt, quality=quality)
    return buffer.getvalue()


def _fit(im: Image, data: bytes, request: dict[str, Any], orientation: int | None) -> Result:
    """The image as clients accept it: upright, long side at most ``maxDimension``, encoded in
    at most ``maxBytes``. The file's own bytes when they already qualify."""
    from PIL import Image

    max_dimension: int = request["maxDimension"]
    max_bytes: int = request["maxBytes"]
    wanted: str = request["format"]
    upright = orientation in (None, 1)
    rotated = orientation in (5, 6, 7, 8)
    upright_size = (im.height, im.width) if rotated else (im.width, im.height)
    original_format = im.format or ""
    if (
        upright
        and max(im.size) <= max_dimension
        and len(data) <= max_bytes
        and original_format in CLIENT_FORMATS
        and im.mode != "CMYK"  # CMYK JPEGs show with wrong colours in many viewers and model APIs
        and wanted in ("auto", original_format.lower())
    ):
        im.load()  # the bytes go out unchanged, but only once they are known to decode
        returned = {"width": im.width, "height": im.height, "mimeType": CLIENT_FORMATS[original_format]}
        return {**returned, "sizeBytes": len(data), "reencoded": False, "resized": False}, b""

    if im.mode in ("1", "P") and im.width * im.height <= _CONVERT_BEFORE_RESIZE:
        # Palette and bilevel images resize by nearest neighbour only; convert while affordable.
        im = im.convert("RGBA" if "transparency" in im.info else ("L" if im.mode == "1" else "RGB"))
    if max(im.size) > max_dimension:
        im.thumbnail((max_dimension, max_dimension), Image.Resampling.LANCZOS)  # JPEG: DCT-scaled decode
    else:
        im.load()
    if not upright:
        im = im.transpose(_transposition(orientation or 1))
    im = _displayable(im)
    fmt = _choose_format(im, wanted)
    qualities = (0,) if fmt == "PNG" else _QUALITIES
    for _ in range(12):
        for quality in qualities:
            blob = _encode(im, fmt, quality)
            if len(blob) <= max_bytes:
                returned = {"width": im.width, "height": im.height, "mimeType": CLIENT_FORMATS[fmt]}
                resized = im.size != upright_size
                return {**returned, "sizeBytes": len(blob), "reencoded": True, "resized": resized}, blob
        factor = max(0.5, min(0.9, 0.95 * (max_bytes / len(blob)) ** 0.5))
        size = (max(1, round(im.width * factor)), max(1, round(im.height * factor)))
        if max(size) < 16:
            break
        im = im.resize(size, Image.Resampling.LANCZOS)
    raise Refusal("too_large", f"it cannot be encoded in {max_bytes} bytes even when shrunk to 16 px")


def _transposition(orientation: int) -> Any:
    from PIL.Image import Transpose

    return {
        2: Transpose.FLIP_LEFT_RIGHT,
        3: Transpose.ROTATE_180,
        4: Transpose.FLIP_TOP_BOTTOM,
        5: Transpose.TRANSPOSE,
        6: Transpose.ROTATE_270,
        7: Transpose.TRANSVERSE,
        8: Transpose.ROTATE_90,
    }[orientation]


def image(data: bytes, request: dict[str, Any]) -> Result:
    """Metadata of a raster image, and with ``encode`` the image fitted for a client.

    Request: ``encode`` (bool), ``partial`` (the data is only the start of the file),
    ``maxDimension``, ``maxBytes``, ``format`` (``auto``, ``png``, ``jpeg``, ``webp``).
    """
    from PIL.Image import DecompressionBombError, DecompressionBombWarning

    try:
        return _image(data, request)
    except (DecompressionBombError, DecompressionBombWarning) as exc:  # a later frame or tile
        raise Refusal("too_large", _bomb_message(exc)) from exc


def _image(data: bytes, request: dict[str, Any]) -> Result:
    im = _open_image(data)
    with im:
        orientation = _orientation(im)
        meta: dict[str, Any] = {
            "format": (im.format or "").lower(),
            "mimeType": im.get_format_mimetype(),
            "width": im.width,
            "height": im.height,
            "mode": im.mode,
            "frameCount": _frame_count(im),
            "dpi": _dpi(im),
            "orientation": orientation,
        }
        if not request["encode"]:
            if not request["partial"]:
                # Cheap structural check without decoding pixels (PNG: every chunk's CRC to IEND).
                with _open_image(data) as probe:
                    probe.verify()
            return meta, b""
        if meta["frameCount"]:
            im.seek(0)
        returned, payload = _fit(im, data, request, orientation)
    return {**meta, "returned": returned}, payload


# --- SVG ---------------------------------------------------------------------------------------

_LENGTH = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*(px|pt|pc|mm|cm|in)?\s*$")
_PX_PER_UNIT = {None: 1.0, "px": 1.0, "pt": 4 / 3, "pc": 16.0, "mm": 96 / 25.4, "cm": 96 / 2.54, "in": 96.0}


class _RootFound(Exception):
    def __init__(self, name: str, attributes: dict[str, str]) -> None:
        super().__init__(name)
        self.name = name
        self.attributes = attributes


def _length_px(value: str | None) -> float | None:
    match = _LENGTH.match(value or "")
    return float(match.group(1)) * _PX_PER_UNIT[match.group(2)] if match else None


def svg(data: bytes, request: dict[str, Any]) -> Result:
    """Width, height and viewBox of an SVG from its root element, parsed the way defusedxml
    does it: entity declarations refused, no external entity or DTD loaded, parsing stops at the
    root element."""
    from xml.parsers import expat

    parser = expat.ParserCreate()
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)

    def refuse_entities(*_: object) -> NoReturn:
        raise Refusal("unsupported", "it declares XML entities, which are refused (entity-expansion guard)")

    def found_root(name: str, attributes: dict[str, str]) -> None:
        raise _RootFound(name, attributes)

    parser.EntityDeclHandler = refuse_entities
    parser.UnparsedEntityDeclHandler = refuse_entities
    parser.ExternalEntityRefHandler = refuse_entities
    parser.StartElementHandler = found_root
    try:
        parser.Parse(data, True)
    except _RootFound as root:
        if root.name.rpartition(":")[2] != "svg":
            raise Refusal("unsupported", f"it is XML but not SVG (root element <{root.name}>)") from None
        attributes = root.attributes
    except expat.ExpatError as exc:
        raise Refusal("unsupported", f"it is not well-formed XML ({exc})") from exc
    else:
        raise Refusal("unsupported", "it has no root element")
    view_box: list[float] | None = None
    try:
        numbers = [float(v) for v in re.split(r"[\s,]+", attributes.get("viewBox", "").strip())]
        view_box = numbers if len(numbers) == 4 and numbers[2] > 0 and numbers[3] > 0 else None
    except ValueError:
        view_box = None
    width = _length_px(attributes.get("width")) or (view_box[2] if view_box else None)
    height = _length_px(attributes.get("height")) or (view_box[3] if view_box else None)
    meta = {
        "format": "svg",
        "mimeType": "image/svg+xml",
        "width": round(width) if width else None,
        "height": round(height) if height else None,
        "viewBox": view_box,
    }
    return meta, b""


# --- PDF ---------------------------------------------------------------------------------------


def _select_pages(ranges: list[list[int]] | None, page_count: int) -> list[int]:
    if ranges is None:
        return list(range(1, page_count + 1))
    last = max((high for _, high in ranges), default=0)
    if last > page_count:
        raise Refusal(
            "invalid_arguments",
            f"invalid pages: page {last} was asked for but the document has {page_count} pages",
        )
    return sorted({number for low, high in ranges for number in range(low, high + 1)})


def pdf(data: bytes, request: dict[str, Any]) -> Result:
    """The text layer of the selected pages, each introduced by ``--- page N ---``.

    Request: ``ranges`` (``[[first, last], ...]``, 1-based inclusive, or null for all) and
    ``maxChars`` (extraction stops after the page that passes it).
    """
    import logging

    logging.getLogger("pypdf").setLevel(logging.CRITICAL)  # damaged files warn once per object
    warnings.simplefilter("ignore")
    from pypdf import PdfReader
    from pypdf.errors import DependencyError, LimitReachedError

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            try:
                opened = reader.decrypt("")
            except DependencyError as exc:
                raise Refusal(
                    "unsupported", f"it is encrypted in a way that cannot be opened ({exc})"
                ) from exc
            if not opened:
                raise Refusal("unsupported", "it is encrypted with a password")
        page_count = len(reader.pages)
        selected = _select_pages(request["ranges"], page_count)
        parts: list[str] = []
        empty: list[int] = []
        done: list[int] = []
        size = 0
        for number in selected:
            page = reader.pages[number - 1]
            text = (page.extract_text() or "").strip()
            if not text:
                empty.append(number)
                text = _why_no_text(page, LimitReachedError)
            parts.append(f"--- page {number} ---\n{text}\n")
            done.append(number)
            size += len(parts[-1])
            if size > request["maxChars"]:
                break
    except LimitReachedError as exc:
        raise Refusal("too_large", f"it exceeds a PDF parser safety limit ({exc})") from exc
    result = {"pageCount": page_count, "pages": done, "emptyPages": empty, "cut": done != selected}
    return result, "".join(parts).encode("utf-8", errors="replace")


def _why_no_text(page: Any, limit_error: type[Exception]) -> str:
    """What an empty page's text says: no text layer, or a content stream that pypdf stopped
    decoding at its safety limit (75 MB decoded per stream: a decompression bomb), which
    ``extract_text`` passes over in silence."""
    try:
        page.get_contents()
    except limit_error:
        return "[this page's content stream exceeds the PDF parser's safety limit (75 MB decoded): not read]"
    except Exception:  # noqa: BLE001, S110 - damaged content: extract_text said all there is to say
        pass
    return "[no text layer on this page]"


# --- the process -------------------------------------------------------------------------------

OPERATIONS: dict[str, Callable[[bytes, dict[str, Any]], Result]] = {"image": image, "svg": svg, "pdf": pdf}
_PRELOAD = {"image": ("PIL.Image",), "svg": ("xml.parsers.expat",), "pdf": ("pypdf",)}


def _respond(out: io.BufferedWriter, header: dict[str, Any], payload: bytes = b"") -> None:
    out.write(json.dumps({**header, "payloadSize": len(payload)}).encode() + b"\n")
    out.write(payload)
    out.flush()


def read_request(stream: BinaryIO) -> tuple[dict[str, Any], bytes]:
    """Read the request: its JSON header line (at most ``_MAX_HEADER`` bytes), then the data.

    Raises:
        Refusal: the header is over the limit or not a JSON object with a size, or the data
            ended early.
    """
    line = stream.readline(_MAX_HEADER + 1)
    if len(line) > _MAX_HEADER:
        raise Refusal(
            "invalid_arguments", f"the request's parameters are over the parser's {_MAX_HEADER} bytes"
        )
    try:
        request = json.loads(line)
    except ValueError:
        request = None
    size = request.get("size") if isinstance(request, dict) else None
    if not isinstance(size, int) or size < 0:
        raise Refusal("unsupported", "the parser received a malformed request")
    data = stream.read(size)
    if len(data) != size:
        raise Refusal("unsupported", "the request was cut short")
    return cast(dict[str, Any], request), data


def main(argv: list[str]) -> int:
    """Run one operation; see the module docstring for the protocol."""
    op, memory_bytes, cpu_seconds = argv[0], int(argv[1]), int(argv[2])
    out = private_stdout()
    for module in _PRELOAD[op]:  # import before the memory limit: libraries map a lot of address space
        __import__(module)
    confine(memory_bytes, cpu_seconds)
    try:
        request, data = read_request(sys.stdin.buffer)
        result, payload = OPERATIONS[op](data, request)
    except Refusal as refusal:
        _respond(out, {"ok": False, "kind": refusal.kind, "message": refusal.message})
    except MemoryError:
        message = f"decoding it needs more than the parser's memory limit of {memory_bytes // 2**20} MiB"
        _respond(out, {"ok": False, "kind": "too_large", "message": message})
    except RecursionError:
        _respond(out, {"ok": False, "kind": "unsupported", "message": "it is nested too deeply to parse"})
    except Exception as exc:  # noqa: BLE001 - this process's one boundary: decoders raise anything on damaged input
        message = f"it is damaged or malformed ({type(exc).__name__}: {exc})"
        _respond(out, {"ok": False, "kind": "unsupported", "message": message})
    else:
        _respond(out, {"ok": True, "result": result}, payload)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
