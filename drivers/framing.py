"""What every codec shares: the events of one ``feed`` call, with dropped bytes reported once.

A codec never raises on board bytes; what it cannot use it drops, counts and reports as
:class:`~drivers.events.FrameDropped`. Drops that follow each other within one ``feed`` call
are merged into one report, so that a burst of line noise is one event, not hundreds.
"""

from __future__ import annotations

from typing import Final, Generic, TypeVar

from drivers.events import FrameDropped

MAX_RAW_REPORTED: Final = 64
"""``FrameDropped.raw`` keeps at most this many bytes of a dropped run."""

E = TypeVar("E")


class Batch(Generic[E]):
    """The events of one ``feed`` call, stamped ``at``; consecutive drops merge into one."""

    def __init__(self, at: float) -> None:
        self.at = at
        self.events: list[E | FrameDropped] = []
        self._reason = ""
        self._raw = bytearray()
        self._more = -1  # drops merged into the pending one; -1 = nothing pending

    def drop(self, reason: str, raw: bytes) -> None:
        """Report ``raw`` as dropped for ``reason`` (merged with the drops just before)."""
        if self._more < 0:
            self._reason = reason
        self._more += 1
        self._raw += raw[: MAX_RAW_REPORTED - len(self._raw)]

    def emit(self, event: E) -> None:
        """Add a decoded event, after any pending drop report."""
        self.flush()
        self.events.append(event)

    def flush(self) -> None:
        """Close the pending drop report, if any (call at the end of ``feed``)."""
        if self._more < 0:
            return
        reason = self._reason if not self._more else f"{self._reason} (+{self._more} more)"
        self.events.append(FrameDropped(reason=reason, raw=bytes(self._raw), at=self.at))
        self._raw = bytearray()
        self._more = -1
