"""The JSON form of every catalog message is one-to-one with its MessagePack frame (PROTOCOL.md
section 15): generated messages of every type go frame -> JSON -> frame and JSON -> frame ->
JSON unchanged, and the JSON holds, key for key and type for type, what the `msgpack` library
reads from the frame (ints stay ints, floats stay floats)."""

from __future__ import annotations

import json
import math
from typing import Any

import msgpack
import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from warband.exceptions import ProtocolError
from warband.gateway.wire import JsonCodec
from warband.messaging.catalog import ALL_MESSAGES, Message
from warband.messaging.codec import Codec

JSON = JsonCodec()
FRAMES = Codec()

_TEXT = st.text(max_size=12)
_INT = st.integers(min_value=-(2**63), max_value=2**63 - 1)
# JSON writes no NaN or infinity (the module docstring): finite floats only.
_FLOAT = st.floats(allow_nan=False, allow_infinity=False)


def _strategy(info: Any) -> st.SearchStrategy[Any]:
    """Values of a msgspec type (as :func:`msgspec.inspect.type_info` describes it)."""
    inspect = msgspec.inspect
    if isinstance(info, inspect.StrType):
        return _TEXT
    if isinstance(info, inspect.BoolType):
        return st.booleans()
    if isinstance(info, inspect.IntType):
        return _INT
    if isinstance(info, inspect.FloatType):
        return _FLOAT
    if isinstance(info, inspect.NoneType):
        return st.none()
    if isinstance(info, inspect.UnionType):
        return st.one_of(*(_strategy(t) for t in info.types))
    if isinstance(info, inspect.ListType):
        return st.lists(_strategy(info.item_type), max_size=4)
    if isinstance(info, inspect.VarTupleType):  # a list Value: an array, read as a tuple
        return st.lists(_strategy(info.item_type), max_size=4).map(tuple)
    if isinstance(info, inspect.DictType):
        return st.dictionaries(_TEXT, _strategy(info.value_type), max_size=4)
    if isinstance(info, inspect.AnyType):  # _Stats.final_state: any plain data
        scalars = st.one_of(st.none(), st.booleans(), _INT, _FLOAT, _TEXT)
        return st.recursive(
            scalars,
            lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=3),
            max_leaves=6,
        )
    if isinstance(info, inspect.StructType):
        return st.fixed_dictionaries({f.name: _strategy(f.type) for f in info.fields}).map(
            lambda fields: info.cls(**fields)
        )
    raise AssertionError(f"no strategy for {info!r}: the catalog grew a new kind of field")


def messages_of(cls: type[Message]) -> st.SearchStrategy[Message]:
    strategy: st.SearchStrategy[Message] = _strategy(msgspec.inspect.type_info(cls))
    return strategy


def same(a: Any, b: Any) -> bool:
    """Equal values of equal types all the way down (``1 != 1.0 != True`` here)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    return bool(a == b)


@pytest.mark.parametrize("cls", ALL_MESSAGES, ids=lambda cls: cls.__name__)
@settings(max_examples=20, deadline=None)
@given(data=st.data())
def test_every_catalog_type_goes_from_frame_to_json_and_back_unchanged(
    cls: type[Message], data: st.DataObject
) -> None:
    message = data.draw(messages_of(cls))
    frame = FRAMES.encode(message)
    text = JSON.frame_to_json(frame)
    assert frame == JSON.json_to_frame(text)
    assert text == JSON.frame_to_json(JSON.json_to_frame(text))
    assert message == JSON.decode(text)
    # What a plain JSON reader and a plain MessagePack reader see is the same map.
    assert same(msgpack.unpackb(frame), json.loads(text))
    assert cls.__name__ == json.loads(text)["type"]


def test_whole_floats_keep_their_fraction_and_ints_have_none() -> None:
    from warband.messaging.catalog import StatusReport

    text = JSON.encode(StatusReport(status="s", details={"f": 2.0, "i": 2, "big": 1e300}))
    details = json.loads(text)["details"]
    assert '"f":2.0' in text and '"i":2' in text
    assert same({"f": 2.0, "i": 2, "big": 1e300}, details)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("{oops", "not JSON"),
        ("[1, 2]", "not a JSON object"),
        ('{"recipient": "a"}', "message has no 'type' key; known types: Order, "),
        ('{"type": "Ordr"}', "unknown message type 'Ordr'; known types: Order, "),
        ('{"type": "Order"}', "wrong shape: Object missing required field `task`"),
        ('{"type": "Order", "task": 3}', "wrong shape: Expected `str`, got `int` - at `$.task`"),
        ('{"type": "Tick", "tick": 1.5}', "wrong shape: Expected `int`, got `float`"),
    ],
)
def test_json_that_is_not_a_catalog_message_is_refused_saying_why(text: str, reason: str) -> None:
    with pytest.raises(ProtocolError) as refused:
        JSON.decode(text)
    assert str(refused.value).startswith(reason)
