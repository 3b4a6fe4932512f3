"""Bluetooth LE boards: the generic link over bleak, and the virtual radio used without hardware.

- :mod:`drivers.ble.link`: one :class:`~drivers.link.BoardLink` for every BLE family, described by
  a :class:`~drivers.ble.link.BleFamily` (its GATT UUIDs, start-up commands, codec, LEDs);
- :mod:`drivers.ble.radio`: the *virtual radio*, a local socket on which emulated boards serve
  their GATT services (docs/virtual-radio.md describes its JSON-lines messages);
- :mod:`drivers.ble.backend`: bleak backends (a ``BaseBleakClient`` and a ``BaseBleakScanner``)
  speaking to that socket, passed through bleak's own ``backend=`` argument.

Only ``link`` and ``backend`` import bleak, and only BLE board URIs and ``chessbridge scan``
import them; the radio (the emulators' side) needs no Bluetooth stack at all.
"""
