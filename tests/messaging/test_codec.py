"""Decoding rejects every kind of bad frame with a reason, and never raises anything else."""

from __future__ import annotations

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from warband.exceptions import ProtocolError
from warband.messaging import Order
from warband.messaging.codec import Codec

DEEP = (
    b"\x82"
    + msgpack.packb("type")
    + msgpack.packb("Order")
    + msgpack.packb("junk")
    + b"\x91" * 100_000
    + b"\xc0"
)
GOOD = Codec().encode(Order(recipient="bot-1", sender="squad-a", id="squad-a:1", task="hold"))


@pytest.mark.parametrize(
    ("frame", "reason"),
    [
        (b"\xc1\xc1 garbage", "not a valid MessagePack message"),
        (GOOD[: len(GOOD) // 2], "not a valid MessagePack message"),
        (b"\x81\xa4type\xa5Or\xffer", "not a valid MessagePack message"),
        (DEEP, "recursion depth"),
        (msgpack.packb({"type": "Ordr", "recipient": "x"}), "unknown message type 'Ordr'"),
        (msgpack.packb({"recipient": "x"}), "no 'type' key"),
        (msgpack.packb({"type": "Order", "task": 12}), "wrong shape"),
        (msgpack.packb({"type": "Order"}), "wrong shape"),
        (msgpack.packb([1, 2, 3]), "wrong shape"),
    ],
    ids=[
        "garbage",
        "truncated",
        "invalid-utf8",
        "deep-nesting",
        "unknown-type",
        "no-type",
        "wrong-field-type",
        "missing-field",
        "not-a-map",
    ],
)
def test_bad_frame_is_rejected_with_the_reason(frame: bytes, reason: str) -> None:
    with pytest.raises(ProtocolError, match=reason):
        Codec().decode(frame)


def test_unknown_type_error_lists_the_known_types() -> None:
    with pytest.raises(ProtocolError, match="known types: Order, WithdrawOrder, CompletionReport"):
        Codec().decode(msgpack.packb({"type": "Ordr"}))


def test_oversized_frame_is_rejected_before_decoding() -> None:
    codec = Codec(max_frame_bytes=64)
    big = codec.encode(Order(recipient="bot-1", task="x" * 100))
    with pytest.raises(ProtocolError, match="exceeds the limit of 64 bytes"):
        codec.decode(big)


def test_envelope_of_a_good_frame_names_sender_and_recipient() -> None:
    envelope = Codec().decode_envelope(GOOD)
    assert (envelope.sender, envelope.recipient, envelope.type) == ("squad-a", "bot-1", "Order")


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=256))
def test_arbitrary_bytes_decode_or_raise_protocol_error(frame: bytes) -> None:
    codec = Codec()
    for decode in (codec.decode, codec.decode_envelope):
        try:
            decode(frame)
        except ProtocolError as error:
            assert str(error), "a rejection must say why"


@settings(max_examples=200, deadline=None)
@given(
    st.recursive(
        st.none()
        | st.booleans()
        | st.integers(min_value=-(2**63), max_value=2**64 - 1)
        | st.text(max_size=8)
        | st.binary(max_size=8),
        lambda children: (
            st.lists(children, max_size=4)
            | st.dictionaries(st.text(max_size=6), children, max_size=4)
        ),
        max_leaves=20,
    )
)
def test_arbitrary_messagepack_values_decode_or_raise_protocol_error(value: object) -> None:
    try:
        message = Codec().decode(msgpack.packb(value))
    except ProtocolError as error:
        assert str(error), "a rejection must say why"
    else:
        assert isinstance(value, dict) and value.get("type") == type(message).__name__
