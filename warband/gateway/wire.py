"""The gateway's JSON form of a warband message, one-to-one with its MessagePack frame.

A WebSocket client speaks JSON text, one message per WebSocket text message; the run speaks
MessagePack frames (PROTOCOL.md, section 2). The two forms carry the same map: the same keys
(the envelope and the type's fields, every one of them, in the catalog's order) and the same
values, translated value by value:

=====================  ==============================================================
MessagePack            JSON
=====================  ==============================================================
map (str keys)         object
array                  array
str                    string
int (64-bit)           number without a fraction or exponent (``7``, ``-3``)
float (64-bit)         number with a fraction or exponent (``7.0``, ``0.25``, ``1e+300``)
bool                   ``true`` / ``false``
nil                    ``null``
=====================  ==============================================================

So ``1`` and ``1.0`` stay apart, as warband's values keep ``True``, ``1`` and ``1.0`` apart: a
float is always written with a fraction or exponent, and a JSON number with either is read as
a float. Two caveats a client author must know: a JSON reader with one number type
(JavaScript, GDScript) cannot tell ``1.0`` from ``1``, so what it sends back arrives as the int
``1`` (a field typed float takes it, PROTOCOL.md section 3; in a ``Value`` it stays an int);
and JSON has no NaN or infinity, so a non-finite float, which warband never sends, would be
written ``null``.

Both directions go through the catalog's typed struct, so JSON that is not a catalog message
of the right shape is refused with a :class:`~warband.exceptions.ProtocolError` saying why,
exactly as a bad MessagePack frame is (:mod:`warband.messaging.codec`).
"""

from __future__ import annotations

from typing import Any

import msgspec

from ..exceptions import ProtocolError
from ..messaging.catalog import ALL_MESSAGES, MESSAGE_TYPES, Message
from ..messaging.codec import Codec

MAX_TEXT_BYTES = 1 << 20
"""The largest JSON message taken from a client (1 MiB, the broker's frame limit)."""

_KNOWN_TYPES = ", ".join(cls.__name__ for cls in ALL_MESSAGES)


def _message_union() -> Any:
    union: Any = ALL_MESSAGES[0]
    for cls in ALL_MESSAGES[1:]:
        union = union | cls
    return union


class JsonCodec:
    """Turns messages into JSON text and JSON text into validated messages; translates
    MessagePack frames to JSON and back (see the module docstring for the mapping)."""

    def __init__(self, *, max_text_bytes: int = MAX_TEXT_BYTES) -> None:
        self.max_text_bytes = max_text_bytes
        self._encoder = msgspec.json.Encoder()
        self._decoder: msgspec.json.Decoder[Any] = msgspec.json.Decoder(type=_message_union())
        self._frames = Codec()

    def encode(self, message: Message) -> str:
        """The JSON text of ``message``."""
        return self._encoder.encode(message).decode()

    def decode(self, text: str | bytes) -> Message:
        """The message in ``text``; raises ProtocolError saying why it is not one."""
        data = text.encode() if isinstance(text, str) else text
        if len(data) > self.max_text_bytes:
            raise ProtocolError(
                f"message of {len(data)} bytes exceeds the limit of {self.max_text_bytes} bytes"
            )
        try:
            message: Message = self._decoder.decode(data)
        except msgspec.ValidationError as error:
            raise ProtocolError(_explain(data, error)) from None
        except msgspec.DecodeError as error:
            raise ProtocolError(f"not JSON: {_short(error)}") from None
        return message

    def frame_to_json(self, frame: bytes) -> str:
        """The JSON text of a MessagePack ``frame`` (validated on the way)."""
        return self.encode(self._frames.decode(frame))

    def json_to_frame(self, text: str | bytes) -> bytes:
        """The MessagePack frame of JSON ``text`` (validated on the way)."""
        return self._frames.encode(self.decode(text))


def _explain(data: bytes, error: msgspec.ValidationError) -> str:
    text = str(error)
    if text.startswith("Expected `object`"):
        return f"not a JSON object: a message is an object with a 'type' key ({text})"
    if "`$.type`" in text or "missing required field `type`" in text:
        try:
            raw = msgspec.json.decode(data)
        except msgspec.DecodeError:
            raw = None
        if not isinstance(raw, dict):
            return f"not a JSON object: a message is an object with a 'type' key ({text})"
        kind = raw.get("type")
        if kind is None:
            return f"message has no 'type' key; known types: {_KNOWN_TYPES}"
        if kind not in MESSAGE_TYPES:
            return f"unknown message type {kind!r}; known types: {_KNOWN_TYPES}"
    return f"wrong shape: {text}"


def _short(error: BaseException) -> str:
    text = str(error) or type(error).__name__
    return text if len(text) <= 200 else text[:200] + "..."


__all__ = ["MAX_TEXT_BYTES", "JsonCodec"]
