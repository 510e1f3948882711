"""The names of the keys flask_mcp keeps in its store, and the hash tag each one carries.

Redis Cluster spreads keys over its masters by *slot*: the CRC16 of the key
or, when the key holds a hash tag (the text between its first ``{`` and the
next ``}``), of the tag alone. A command that names several keys (``MGET``,
a multi-key ``DEL``) is refused unless they share a slot. So every key that
belongs to something carries that thing's tag, made here and nowhere else,
and whatever is read, written or locked together belongs to one thing:

=====================================  ===============================================
keys                                   tag
=====================================  ===============================================
``session``, ``subs``                  the session id
``await``, ``answer``, ``inflight``,   the session id
``cancel`` (mailbox)
``ev``, ``evn``, ``evq``                the session id; ``*`` for the broadcast stream,
(events)                               the stream for a request without a session
``owner`` (a principal's sessions)     the principal's subject
``ctxstate``                           the scope of ``ctx.state`` (digest)
``quota``                              the caller (digest)
``ratelimit``                          the budget counted (caller, tool, rule)
``task``, ``task-cancel``              the task id
``tasks-of``                           the account (digest)
``rc-gen`` (result cache)              the tool
``rc``, ``spill``                      the entry itself
``sess-end``, ``sess-end-n``,          the window of sessions' ends (its number)
``sess-sweep`` (session ends)
``sess-ended``                         the session id
=====================================  ===============================================

A lock (:func:`~flask_mcp.stores.lock.store_lock`) is its record's key with
``:lock`` after it: same tag, same node. The few keys of the whole server
(``registry``, ``tasks-total``, ``request-state-key``, ``sess-sweep-at``)
carry no tag and are only ever used one at a time. Spread over sessions, tasks and callers,
the tags shard the store evenly; on a single Redis they change nothing.

A ``CACHE_KEY_PREFIX`` comes before every key: it must hold no ``{``, or
its tag would be the first one and put every key on one node.
"""

from __future__ import annotations

import functools
import hashlib
import re

__all__ = [
    "SESSION_SWEEP_CURSOR",
    "key",
    "session_end_count",
    "session_end_entry",
    "session_ended",
    "session_sweep_claim",
    "tag",
]

# What a tag may hold as it is: the alphabet of the ids the server mints, of bounded length.
# Anything else (a client's id, a subject) is hashed, so that no "}" ends a tag early.
_PLAIN = re.compile(r"[A-Za-z0-9_.:*=+/-]{1,64}")


def tag(owner: str) -> str:
    """``{owner}``: the hash tag of everything that belongs to *owner*.

    An *owner* outside the alphabet of minted ids, or longer than 64
    characters, is replaced by its SHA-256 digest (the same owner always
    gets the same tag).
    """
    return _short_tag(owner) if len(owner) <= 64 else _tag(owner)


def _tag(owner: str) -> str:
    if _PLAIN.fullmatch(owner) is None:
        owner = hashlib.sha256(owner.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return f"{{{owner}}}"


# The tags of the owners seen lately: a session's every request builds several keys of its own.
# Only short owners are kept, so that what a client sends costs the process at most a few hundred KB.
_short_tag = functools.lru_cache(maxsize=4096)(_tag)


def key(family: str, owner: str, *rest: object) -> str:
    """``family:{owner}:rest...``: a key of *family* belonging to *owner*, with *rest* after the tag."""
    if not rest:  # most keys: a family and an owner
        return f"{family}:{tag(owner)}"
    return ":".join([family, tag(owner), *(str(part) for part in rest)])


# -- the ends of handshake sessions, awaited in windows of time (flask_mcp.stores.session_ends) -----

#: The last window of sessions' ends swept: one key for the whole server, read once a window.
SESSION_SWEEP_CURSOR = "sess-sweep-at"


def session_end_entry(window: int, number: int) -> str:
    """``sess-end:{window}:number``: one session's expected end, in the window of its expiry."""
    return key("sess-end", str(window), number)


def session_end_count(window: int) -> str:
    """``sess-end-n:{window}``: how many entry numbers of *window* were handed out."""
    return key("sess-end-n", str(window))


def session_sweep_claim(window: int) -> str:
    """``sess-sweep:{window}``: taken (``add``) by the one process that sweeps the windows due at *window*."""
    return key("sess-sweep", str(window))


def session_ended(session_id: str) -> str:
    """``sess-ended:{session}``: taken (``add``) by whoever measures the end of the session, once."""
    return key("sess-ended", session_id)
