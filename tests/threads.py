"""What a call raises when a thread of its own makes it: for what must be done in the thread it belongs to."""

from __future__ import annotations

import queue
import threading
import typing as t


def raised_in_another_thread(call: t.Callable[[], object]) -> BaseException | None:
    """Make *call* in a new thread and wait for it; what it raised, or ``None``."""
    raised: queue.Queue[BaseException] = queue.Queue()

    def make() -> None:
        try:
            call()
        except BaseException as exc:  # whatever it raised is the answer
            raised.put(exc)

    thread = threading.Thread(target=make)
    thread.start()
    thread.join()
    return None if raised.empty() else raised.get_nowait()
