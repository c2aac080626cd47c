"""Decoding a response body within a budget of decoded bytes.

httpx decodes ``Content-Encoding`` itself, a whole network chunk at a time with no limit on what
one chunk inflates to, and through any number of stacked encodings: a 1,827-byte response of
gzip inside gzip (``Content-Encoding: gzip, gzip``) became 2 GiB in the server. httpget reads the
raw bytes instead and decodes them here, asking zlib for no more than the budget left
(``decompress(data, max_length)``), so a body costs at most the budget of decoded bytes plus
one network chunk, whatever it inflates to. One content encoding is decoded: ``gzip``
(``x-gzip``) or ``deflate`` (zlib-wrapped, or raw as some servers send it); ``identity`` is no
encoding. More than one, or any other (``br``, ``zstd``, ``compress``), is refused: httpget
asks for ``gzip, deflate`` only (``ACCEPT_ENCODING``).
"""

from __future__ import annotations

import zlib
from typing import Any

from mcp_localtools.errors import UnsupportedContent
from mcp_localtools.toolnames import served

__all__ = ["ACCEPT_ENCODING", "BodyDecoder"]

ACCEPT_ENCODING = "gzip, deflate"
"""The ``Accept-Encoding`` httpget sends: the encodings ``BodyDecoder`` decodes."""


class BodyDecoder:
    """Decodes one response body, a raw chunk at a time, never past a budget.

    Args:
        content_encoding: the response's ``Content-Encoding`` values (each header, as sent).
        url: for messages.

    Raises:
        UnsupportedContent: more than one encoding, or one that is not gzip or deflate.
    """

    def __init__(self, content_encoding: list[str], url: str) -> None:
        codings = [
            coding.strip().lower()
            for header in content_encoding
            for coding in header.split(",")
            if coding.strip() and coding.strip().lower() != "identity"
        ]
        named = ", ".join(content_encoding)
        if len(codings) > 1:
            raise UnsupportedContent(
                f"the response from {url} stacks {len(codings)} content encodings ({named!r}); "
                f"{served('httpget')} decodes one content encoding ({ACCEPT_ENCODING}), so a small "
                "response cannot inflate past the budget; fetch it with another client if it is meant so"
            )
        self.coding = codings[0] if codings else None
        self._inflater: Any = None
        self._tail = b""
        self._started = False
        if self.coding in ("gzip", "x-gzip"):
            self._inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        elif self.coding == "deflate":
            self._inflater = zlib.decompressobj()
        elif self.coding is not None:
            raise UnsupportedContent(
                f"the response from {url} is encoded as {named!r}, which {served('httpget')} does not "
                f"decode (it asks for {ACCEPT_ENCODING}); fetch it with another client"
            )

    def decode(self, raw: bytes, room: int) -> bytes:
        """The decoded bytes of ``raw`` (the next raw chunk), at most ``room`` of them; input not
        decoded for want of room is kept for the next call.

        Raises:
            UnsupportedContent: the body is not valid for its encoding.
        """
        if self._inflater is None:
            return raw[:room]
        data = self._tail + raw
        try:
            out: bytes = self._inflater.decompress(data, max(room, 1))
        except zlib.error as exc:
            if self.coding == "deflate" and not self._started:
                # Servers send raw deflate under "deflate" as often as the zlib form it names.
                self._started = True
                self._inflater = zlib.decompressobj(-zlib.MAX_WBITS)
                return self.decode(raw, room)
            raise UnsupportedContent(f"the {self.coding} body is corrupt: {exc}") from exc
        self._started = True
        self._tail = self._inflater.unconsumed_tail
        return out[:room]
