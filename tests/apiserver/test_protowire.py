"""The protobuf wire reader and writer: varints, tagged fields, and refusing bad input."""

from __future__ import annotations

import pytest

from gputui.sim.apiserver.protowire import (
    FIXED32,
    FIXED64,
    LENGTH,
    VARINT,
    ProtoError,
    fields,
    length_field,
    read_varint,
    signed64,
    varint,
    varint_field,
)


@pytest.mark.parametrize(("value", "encoded"), [
    (0, b"\x00"), (1, b"\x01"), (127, b"\x7f"), (128, b"\x80\x01"), (300, b"\xac\x02"),
    ((1 << 64) - 1, b"\xff" * 9 + b"\x01"),
])
def test_varints_match_the_protobuf_encoding(value: int, encoded: bytes) -> None:
    assert varint(value) == encoded
    assert read_varint(encoded + b"tail", 0) == (value, len(encoded))


def test_negative_int64_takes_ten_bytes_and_reads_back_signed() -> None:
    encoded = varint(-5)
    assert len(encoded) == 10
    raw, end = read_varint(encoded, 0)
    assert end == 10 and signed64(raw) == -5


@pytest.mark.parametrize(("data", "why"), [
    (b"\x80", "truncated varint"),
    (b"\xff" * 10 + b"\x01", "longer than 10 bytes"),
    (b"\xff" * 9 + b"\x7f", "overflows 64 bits"),
])
def test_bad_varints_are_refused(data: bytes, why: str) -> None:
    with pytest.raises(ProtoError, match=why):
        read_varint(data, 0)


def test_fields_of_every_wire_type_in_order() -> None:
    message = (varint_field(1, 150) + length_field(2, b"testing")
               + bytes([3 << 3 | FIXED64]) + (7).to_bytes(8, "little")
               + bytes([4 << 3 | FIXED32]) + (9).to_bytes(4, "little")
               + length_field(2, b""))
    assert list(fields(message)) == [(1, VARINT, 150), (2, LENGTH, b"testing"),
                                     (3, FIXED64, 7), (4, FIXED32, 9), (2, LENGTH, b"")]


def test_the_protobuf_documentation_example_decodes() -> None:
    # field 1 = 150 and field 2 = "testing", as in the encoding guide
    assert list(fields(bytes.fromhex("08960112077465737469 6e67".replace(" ", "")))) == [
        (1, VARINT, 150), (2, LENGTH, b"testing")]


@pytest.mark.parametrize(("data", "why"), [
    (length_field(1, b"abc")[:-1], "runs past the end"),
    (bytes([1 << 3 | 3]), "unsupported wire type 3"),
    (bytes([1 << 3 | FIXED64]) + b"\x00" * 7, "truncated fixed-width"),
    (b"\x00\x00", "field number 0"),
    (bytes([1 << 3 | VARINT]), "truncated varint"),
])
def test_malformed_messages_are_refused(data: bytes, why: str) -> None:
    with pytest.raises(ProtoError, match=why):
        list(fields(data))


def test_long_length_delimited_fields_use_multi_byte_lengths() -> None:
    payload = b"x" * 1000
    encoded = length_field(5, payload)
    assert encoded[1:3] == varint(1000)
    assert list(fields(encoded)) == [(5, LENGTH, payload)]
