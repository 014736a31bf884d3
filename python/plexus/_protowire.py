"""The two pieces of protobuf's wire format that hand-written messages need (Event, tf.train.Example)."""

from __future__ import annotations


def varint(n: int) -> bytes:
    """n as a base-128 varint (negative int64 values as their two's complement)."""
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def length_delimited(number: int, payload: bytes) -> bytes:
    """Field `number` holding bytes (wire type 2)."""
    return varint(number << 3 | 2) + varint(len(payload)) + payload
