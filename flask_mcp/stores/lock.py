"""A lock kept in the store, for read-modify-write of shared records across processes.

flask-caching offers no compare-and-set, but ``add`` (Redis ``SET NX``) stores
a key only if it is absent: exactly one writer gets it. The lock key expires
by itself, so a holder that dies never locks the record for good.
"""

from __future__ import annotations

import contextlib
import secrets
import typing as t
from time import monotonic, sleep

__all__ = ["LockTimeout", "store_lock"]

#: Seconds a holder keeps a lock at most (writers hold it for a few round trips).
LOCK_TTL = 5
#: Seconds a writer waits for a lock before giving up.
LOCK_WAIT = 10.0


class LockTimeout(TimeoutError):
    """Another writer held the lock for longer than :data:`LOCK_WAIT`."""


@contextlib.contextmanager
def store_lock(cache: t.Any, key: str) -> t.Iterator[None]:
    """Hold the lock named *key* in *cache* (a flask-caching ``Cache``) for the ``with`` block.

    :raises LockTimeout: the lock stayed taken for :data:`LOCK_WAIT` seconds.
    """
    lock, token = key + ":lock", secrets.token_hex(8)
    deadline = monotonic() + LOCK_WAIT
    while not cache.add(lock, token, timeout=LOCK_TTL):
        if monotonic() >= deadline:
            raise LockTimeout(f"{key!r} stayed locked for {LOCK_WAIT:g} s")
        sleep(0.002)
    taken = monotonic()
    try:
        yield
    finally:
        # Held for well under its lifetime, the lock is still ours; held longer, it may have expired and
        # been taken by another writer, whose lock must stay.
        if monotonic() - taken < LOCK_TTL / 2 or cache.get(lock) == token:
            cache.delete(lock)
