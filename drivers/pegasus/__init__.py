"""DGT Pegasus over Bluetooth LE: protocol tables, codec, link, emulator."""
