"""DGT electronic boards over serial, USB or classic Bluetooth (board-protocols.md §1)."""
