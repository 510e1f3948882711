"""How many times this process's line was forked: connections made before a fork are the parent's.

Comparing a number kept with a connection against :func:`forks` tells a
child from its parent without the ``getpid()`` system call a request would
otherwise make.
"""

from __future__ import annotations

import os

__all__ = ["forks"]

_count = [0]


def _forked() -> None:
    _count[0] += 1


os.register_at_fork(after_in_child=_forked)


def forks() -> int:
    """The forks so far between the first process and this one (0 in the first)."""
    return _count[0]
