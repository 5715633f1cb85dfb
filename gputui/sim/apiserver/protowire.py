"""The protobuf wire format: varints and tagged fields, read and written without a schema.

Only what Kubernetes messages use: wire types 0 (varint), 1 (64-bit), 2 (length-delimited)
and 5 (32-bit). Groups (3, 4) are long deprecated and never produced by Go's generator, so
they are an error like any truncated or overlong input. Knowing which field is a string, a
nested message or a map is the caller's job (:mod:`gputui.sim.apiserver.kubeproto`).
"""

from __future__ import annotations

from collections.abc import Iterator

VARINT, FIXED64, LENGTH, FIXED32 = 0, 1, 2, 5
_MAX_VARINT_BYTES = 10  # a 64-bit value needs at most ten 7-bit groups


class ProtoError(ValueError):
    """Bytes that are not a well-formed protobuf message."""


def read_varint(data: bytes, pos: int) -> tuple[int, int]:
    """The unsigned varint at ``pos`` and the position after it."""
    value = 0
    for index in range(_MAX_VARINT_BYTES):
        if pos + index >= len(data):
            raise ProtoError("truncated varint")
        byte = data[pos + index]
        value |= (byte & 0x7F) << (7 * index)
        if not byte & 0x80:
            if value >= 1 << 64:
                raise ProtoError("varint overflows 64 bits")
            return value, pos + index + 1
    raise ProtoError("varint longer than 10 bytes")


def signed64(value: int) -> int:
    """A varint read as Go's int64/int32 (two's complement; negatives take ten bytes)."""
    return value - (1 << 64) if value >= 1 << 63 else value


def fields(data: bytes) -> Iterator[tuple[int, int, int | bytes]]:
    """Each ``(field number, wire type, value)`` of a message, in wire order.

    Varint and fixed-width values come as ``int`` (unsigned), length-delimited ones as
    ``bytes``. Repeated fields simply occur several times.
    """
    pos = 0
    while pos < len(data):
        key, pos = read_varint(data, pos)
        number, wire = key >> 3, key & 7
        if number == 0:
            raise ProtoError("field number 0")
        value: int | bytes
        if wire == VARINT:
            value, pos = read_varint(data, pos)
        elif wire == LENGTH:
            size, pos = read_varint(data, pos)
            if pos + size > len(data):
                raise ProtoError(f"field {number} runs past the end of the message")
            value, pos = data[pos:pos + size], pos + size
        elif wire in (FIXED64, FIXED32):
            width = 8 if wire == FIXED64 else 4
            if pos + width > len(data):
                raise ProtoError(f"truncated fixed-width field {number}")
            value, pos = int.from_bytes(data[pos:pos + width], "little"), pos + width
        else:
            raise ProtoError(f"unsupported wire type {wire} in field {number}")
        yield number, wire, value


def varint(value: int) -> bytes:
    """``value`` as a varint; negative numbers as Go writes int64 (ten bytes)."""
    if value < 0:
        value += 1 << 64
    out = bytearray()
    while True:
        low = value & 0x7F
        value >>= 7
        if value:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)


def tag(number: int, wire: int) -> bytes:
    return varint(number << 3 | wire)


def length_field(number: int, payload: bytes) -> bytes:
    """A length-delimited field: a string, bytes, a nested message or a map entry."""
    return tag(number, LENGTH) + varint(len(payload)) + payload


def varint_field(number: int, value: int) -> bytes:
    return tag(number, VARINT) + varint(value)
