"""Signing in to the arbiters' page (pure: tokens and ``now`` come in).

One password for the venue's arbiters (``[relay] password`` or ``CHESSBRIDGE_RELAY_PASSWORD``),
and a name each arbiter gives, which the alert history shows beside what they acknowledged.
Without a password configured nobody can sign in and the page is read-only for everyone.

Guessing is slowed twice over: each client address may fail :data:`ATTEMPTS` times in
:data:`WINDOW` seconds, and all clients together :data:`ALL_ATTEMPTS` times (against guessing
from many addresses); past that, sign-in answers "wait" without even checking the password.

A session is a random token (made by the shell) in an HttpOnly, SameSite=Strict cookie, with its
own CSRF token that every action must send back in a header. The MQTT credentials stay in the
relay: nothing here or in any page carries them.
"""

from __future__ import annotations

import hashlib
import hmac
from collections import deque
from dataclasses import dataclass
from typing import Final, Literal

ATTEMPTS: Final = 5
"""Failed sign-ins allowed per client address in :data:`WINDOW`."""
ALL_ATTEMPTS: Final = 50
"""Failed sign-ins allowed from all addresses together in :data:`WINDOW`."""
WINDOW: Final = 300.0
SESSION_TTL: Final = 12 * 3600.0
"""A session lasts a playing day."""
MAX_SESSIONS: Final = 1000
MAX_NAME: Final = 40

Verdict = Literal["ok", "wrong", "wait", "disabled"]


@dataclass(frozen=True, slots=True)
class Session:
    """One signed-in arbiter."""

    name: str
    csrf: str
    expires: float


class SignIn:
    """The password check with its rate limits, and the open sessions."""

    def __init__(self, password: str | None) -> None:
        self._digest = None if not password else _digest(password)
        self._failures: dict[str, deque[float]] = {}
        self._all: deque[float] = deque()
        self._sessions: dict[str, Session] = {}

    @property
    def enabled(self) -> bool:
        """Whether a password is configured (otherwise the page is read-only)."""
        return self._digest is not None

    def retry_after(self, client: str, now: float) -> float:
        """Seconds until ``client`` may try again (0: now)."""
        self._forget(now)
        waits = []
        mine = self._failures.get(client)
        if mine is not None and len(mine) >= ATTEMPTS:
            waits.append(mine[0] + WINDOW - now)
        if len(self._all) >= ALL_ATTEMPTS:
            waits.append(self._all[0] + WINDOW - now)
        return max([0.0, *waits])

    def check(self, client: str, password: str, now: float) -> Verdict:
        """Whether ``password`` is right; failures count against ``client`` and everyone."""
        if self._digest is None:
            return "disabled"
        if self.retry_after(client, now) > 0:
            return "wait"
        if hmac.compare_digest(_digest(password), self._digest):
            return "ok"
        self._failures.setdefault(client, deque()).append(now)
        self._all.append(now)
        return "wrong"

    def _forget(self, now: float) -> None:
        for client in list(self._failures):
            times = self._failures[client]
            while times and times[0] + WINDOW <= now:
                times.popleft()
            if not times:
                del self._failures[client]
        while self._all and self._all[0] + WINDOW <= now:
            self._all.popleft()

    # -- sessions ----------------------------------------------------------------------------

    def open(self, token: str, name: str, csrf: str, now: float) -> Session:
        """A new session under ``token`` (the oldest goes when there are too many)."""
        self._sessions = {t: s for t, s in self._sessions.items() if s.expires > now}
        while len(self._sessions) >= MAX_SESSIONS:
            self._sessions.pop(next(iter(self._sessions)))
        session = Session(name=name, csrf=csrf, expires=now + SESSION_TTL)
        self._sessions[token] = session
        return session

    def session(self, token: str | None, now: float) -> Session | None:
        """The live session of ``token``, or ``None``."""
        if not token:
            return None
        session = self._sessions.get(token)
        if session is None or session.expires <= now:
            self._sessions.pop(token, None)
            return None
        return session

    def close(self, token: str | None) -> None:
        """Sign out."""
        if token:
            self._sessions.pop(token, None)


def clean_name(name: str) -> str | None:
    """An arbiter's name as shown (printable, trimmed, at most :data:`MAX_NAME`), or ``None``."""
    text = " ".join("".join(c for c in name if c.isprintable()).split())[:MAX_NAME]
    return text or None


def csrf_ok(session: Session, sent: str | None) -> bool:
    """Whether the CSRF token sent with an action is the session's."""
    return sent is not None and hmac.compare_digest(sent.encode(), session.csrf.encode())


def _digest(password: str) -> bytes:
    return hashlib.sha256(password.encode()).digest()
