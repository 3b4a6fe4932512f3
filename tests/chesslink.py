"""Millennium ChessLink messages as the tests write them, from board-protocols.md §4 alone."""

from __future__ import annotations


def wire(text: str) -> bytes:
    """``text`` plus its block check (XOR of the characters, 2 hex digits), each byte with its
    odd-parity bit in bit 7: what travels on the line."""
    check = 0
    for char in text:
        check ^= ord(char)
    out = bytearray()
    for char in text + f"{check:02X}":
        byte = ord(char)
        out.append(byte | 0x80 if bin(byte).count("1") % 2 == 0 else byte)
    return bytes(out)
