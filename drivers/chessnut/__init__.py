"""Chessnut Air, Air+, Pro and Go over Bluetooth LE: protocol tables, codec, link, emulator."""
