"""Encoding messages to MessagePack bytes and decoding (and validating) them back.

Decoding never trusts the bytes: a frame that is not MessagePack, is truncated, holds invalid
UTF-8, nests too deep, is too large, has an unknown ``type`` or the wrong shape for its type
raises :class:`~warband.exceptions.ProtocolError` with a reason a person can act on.
"""

from __future__ import annotations

from typing import Any

import msgspec

from ..exceptions import ProtocolError
from .catalog import ALL_MESSAGES, MESSAGE_TYPES, Message

DEFAULT_MAX_FRAME_BYTES = 1 << 20
"""Frames larger than this (1 MiB) are rejected unread; configurable per codec."""

_KNOWN_TYPES = ", ".join(cls.__name__ for cls in ALL_MESSAGES if not cls.__name__.startswith("_"))


class Envelope(msgspec.Struct, frozen=True):
    """The routing part of a frame, read by the broker without decoding the whole body."""

    type: str
    sender: str = ""
    recipient: str = ""
    id: str = ""
    tick: int = 0
    trace: str | None = None
    """The sender's W3C traceparent, read only by a broker that exports spans (``--otel``)."""


class Route(msgspec.Struct, frozen=True):
    """What the broker's fast path reads of a frame: less to decode than the whole envelope."""

    type: str
    sender: str = ""
    recipient: str = ""
    trace: str | None = None


class _LooseEnvelope(msgspec.Struct):
    """The envelope keys with any value, so one key of the wrong type spoils no other."""

    type: Any = ""
    sender: Any = ""
    recipient: Any = ""
    id: Any = ""
    tick: Any = 0


class Codec:
    """Turns messages into frames and frames into validated messages."""

    def __init__(self, *, max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES) -> None:
        self.max_frame_bytes = max_frame_bytes
        self._encoder = msgspec.msgpack.Encoder()
        self._decoder: msgspec.msgpack.Decoder[Any] = msgspec.msgpack.Decoder(type=_message_union())
        self._envelope_decoder = msgspec.msgpack.Decoder(type=Envelope)
        self.read_route = msgspec.msgpack.Decoder(type=Route).decode
        """The :class:`Route` of a frame, with no size limit and no check of its ``type``: for
        the broker's fast path, which checks both itself (use :meth:`decode_envelope`
        elsewhere); raises msgspec's errors."""
        self._loose_decoder = msgspec.msgpack.Decoder(type=_LooseEnvelope)

    def encode(self, message: Message) -> bytes:
        """Return the MessagePack bytes of ``message``."""
        return self._encoder.encode(message)

    def decode(self, frame: bytes) -> Message:
        """Return the message in ``frame``; raise ProtocolError saying why it is not acceptable."""
        if len(frame) > self.max_frame_bytes:  # inline: decode runs for every message received
            self._check_size(frame)
        try:
            message: Message = self._decoder.decode(frame)
        except msgspec.ValidationError as error:
            raise ProtocolError(_explain_validation_error(frame, error)) from None
        except (msgspec.DecodeError, UnicodeDecodeError, RecursionError) as error:
            raise ProtocolError(f"not a valid MessagePack message: {_short(error)}") from None
        return message

    def decode_envelope(self, frame: bytes) -> Envelope:
        """Read just the routing fields; raise ProtocolError if even those are not there."""
        self._check_size(frame)
        try:
            envelope = self._envelope_decoder.decode(frame)
        except msgspec.ValidationError as error:
            raise ProtocolError(f"bad envelope: {_short(error)}") from None
        except (msgspec.DecodeError, UnicodeDecodeError, RecursionError) as error:
            raise ProtocolError(f"not a valid MessagePack message: {_short(error)}") from None
        if envelope.type not in MESSAGE_TYPES:
            raise ProtocolError(_unknown_type(envelope.type))
        return envelope

    def salvage_envelope(self, frame: bytes) -> Envelope | None:
        """The envelope keys of a rejected frame that can still be read, or None.

        For notices about frames that failed :meth:`decode_envelope` (unknown type, a key of
        the wrong type, part of a multipart message, over the size limit): each key of the
        right type is kept, the others read as their defaults, so the notice can name the
        frame's ``id``. None when the frame is not a MessagePack map at all.
        """
        try:
            loose = self._loose_decoder.decode(frame)
        except (msgspec.DecodeError, msgspec.ValidationError, UnicodeDecodeError, RecursionError):
            return None
        return Envelope(
            type=_text(loose.type),
            sender=_text(loose.sender),
            recipient=_text(loose.recipient),
            id=_text(loose.id),
            tick=loose.tick if type(loose.tick) is int else 0,
        )

    def _check_size(self, frame: bytes) -> None:
        if len(frame) > self.max_frame_bytes:
            raise ProtocolError(
                f"frame of {len(frame)} bytes exceeds the limit of {self.max_frame_bytes} bytes"
            )


def _message_union() -> Any:
    union: Any = ALL_MESSAGES[0]
    for cls in ALL_MESSAGES[1:]:
        union = union | cls
    return union


def _explain_validation_error(frame: bytes, error: msgspec.ValidationError) -> str:
    text = str(error)
    if "`$.type`" in text or "missing required field `type`" in text:
        try:
            raw = msgspec.msgpack.decode(frame)
        except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
            raw = None
        if isinstance(raw, dict) and "type" in raw:
            return _unknown_type(raw["type"])
        return f"message has no 'type' key; known types: {_KNOWN_TYPES}"
    return f"wrong shape: {text}"


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _unknown_type(type_name: object) -> str:
    return f"unknown message type {type_name!r}; known types: {_KNOWN_TYPES}"


def _short(error: BaseException) -> str:
    text = str(error) or type(error).__name__
    return text if len(text) <= 200 else text[:200] + "..."
