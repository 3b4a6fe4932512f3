"""Millennium ChessLink over Bluetooth LE: the serial family's codec on a BLE link, and an
emulator on the virtual radio."""
