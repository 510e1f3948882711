"""What every process serves: registry changes made at run time, kept in the store.

Components come from code, and the same code runs in every worker process,
so what a module registers when it is imported is served everywhere. A
change made while the app runs happens in one process, yet every process
must serve the same set afterwards. Two kinds of change get there:

* **data** (:meth:`SharedRegistry.disable`, :meth:`SharedRegistry.enable`,
  :meth:`SharedRegistry.remove`):
  written to one record in the session cache, under a revision number. Every
  process reads the record together with each session it loads (one round
  trip), and applies a newer revision before it handles the request. Requests
  that load no session (stateless, REST, CGI) look at most once a second.
* **new functions**, which no store can carry: *loaders* register them.
  A loader is a function that registers components; it runs in every process
  when the app is set up, and again in every process after
  :meth:`SharedRegistry.reload` (the record counts reloads).

A removal is kept in the record too (``gone``): a process that starts later
registers the component at import time like every other, and drops it when
it applies the record. A removed component that a loader registers again is
served again after :meth:`SharedRegistry.reload`, which takes it off the
record.

``list_changed`` goes out once the record is written, so whichever process a
client's next request reaches, it serves the new set. A component registered
with the decorators after the app is set up (outside a loader) is served by
that one process only: with a store several processes share, flask_mcp warns
(:class:`RuntimeRegistrationWarning`) and announces nothing.
"""

from __future__ import annotations

import threading
import time
import typing as t
import warnings

from .lock import store_lock

if t.TYPE_CHECKING:
    from ..components.registry import Kind, Registry

__all__ = ["KEY", "Loader", "RuntimeRegistrationWarning", "SharedRegistry"]

#: The record's key in the session cache.
KEY = "registry"
#: Seconds between looks at the record by requests that load no session.
REFRESH_INTERVAL = 1.0

#: A function that registers run-time components (:meth:`MCP.loader <flask_mcp.MCP.loader>`).
Loader = t.Callable[[], None]


class RuntimeRegistrationWarning(UserWarning):
    """A component was registered at run time in one process of several; the others will not serve it."""


class SharedRegistry:
    """Keeps this process's registry in step with the record in the store.

    :param registry: the registry to keep in step (the extension's).
    :param cache: the session cache (a flask-caching ``Cache``).
    :param loaders: the functions that register run-time components.
    :param announce: sends ``list_changed`` for a kind to every session.
    """

    def __init__(
        self, registry: Registry, cache: t.Any, loaders: t.Sequence[Loader], announce: t.Callable[[Kind], None]
    ) -> None:
        self.registry = registry
        self.cache = cache
        self.loaders = loaders
        self.announce = announce
        self._revision = 0
        self._loads = 0
        self._loaded: set[tuple[Kind, str]] = set()
        #: The removals this process has applied: only newer ones drop anything.
        self._gone: frozenset[tuple[Kind, str]] = frozenset()
        self._refreshed_at = -REFRESH_INTERVAL
        self._lock = threading.RLock()
        #: Set while loaders run, in this thread: what they register is shared, not a one-process change.
        self.loading = threading.local()

    # -- keeping in step -----------------------------------------------------

    def apply(self, record: t.Any) -> None:
        """Serve what *record* (the value at :data:`KEY`, read with a session) says; no I/O when current."""
        revision = record.get("rev", 0) if isinstance(record, dict) else 0
        if revision == self._revision:
            return
        with self._lock:
            if revision == self._revision:
                return
            self.registry.hide((kind, key) for kind, key in record.get("off", ()))
            loads = record.get("loads", 0)
            if loads != self._loads:
                self.run_loaders()
                self._loads = loads
            gone: frozenset[tuple[Kind, str]] = frozenset((kind, key) for kind, key in record.get("gone", ()))
            for kind, key in gone - self._gone:
                self.registry.discard(kind, key)
            self._gone = gone
            self._revision = revision

    def refresh(self) -> None:
        """Read the record and apply it, at most once every :data:`REFRESH_INTERVAL` seconds."""
        now = time.monotonic()
        if now - self._refreshed_at < REFRESH_INTERVAL:
            return
        self._refreshed_at = now
        self.apply(self.cache.get(KEY))

    def run_loaders(self) -> None:
        """Run every loader again: what they registered before is dropped first."""
        with self._lock:
            for kind, key in self._loaded:
                self.registry.discard(kind, key)
            before = {(kind, key) for kind in _KINDS for key in self.registry.registered(kind)}
            self.loading.active = True
            try:
                for loader in self.loaders:
                    loader()
            finally:
                self.loading.active = False
            self._loaded = {(kind, key) for kind in _KINDS for key in self.registry.registered(kind)} - before

    # -- changes -------------------------------------------------------------

    def disable(self, kind: Kind, key: str) -> None:
        """Stop serving a component in every process (it stays registered)."""
        self._change(kind, key, lambda off: off | {(kind, key)})

    def enable(self, kind: Kind, key: str) -> None:
        """Serve a disabled component again, in every process."""
        self._change(kind, key, lambda off: off - {(kind, key)})

    def remove(self, kind: Kind, key: str) -> None:
        """Unregister a component in every process."""
        if key not in self.registry.registered(kind):
            raise KeyError(f"no {kind[:-1]} {key!r} is registered")
        with self._lock, store_lock(self.cache, KEY):
            record = self._read()
            record["gone"] = sorted({(k, name) for k, name in record.get("gone", ())} | {(kind, key)})
            record["off"] = [(k, name) for k, name in record.get("off", ()) if (k, name) != (kind, key)]
            record["rev"] = record.get("rev", 0) + 1
            self.cache.set(KEY, record, timeout=0)
            self.apply(record)
        self.announce(kind)

    def reload(self) -> None:
        """Run the loaders again in every process (this one now, the others at their next request).

        A removed component that the loaders register again is served again.
        """
        with self._lock, store_lock(self.cache, KEY):
            record = self._read()
            self.apply(record)  # catch up first: what the loaders register next is judged against it
            self.run_loaders()
            record["loads"] = self._loads = record.get("loads", 0) + 1
            gone = {(kind, key) for kind, key in record.get("gone", ())}
            record["gone"] = sorted(gone - self._loaded)
            record["rev"] = record.get("rev", 0) + 1
            self.cache.set(KEY, record, timeout=0)
            self.apply(record)
        for kind in _KINDS:
            self.announce(kind)

    def _change(self, kind: Kind, key: str, update: t.Callable[[set[tuple[str, str]]], set[tuple[str, str]]]) -> None:
        if key not in self.registry.registered(kind):
            raise KeyError(f"no {kind[:-1]} {key!r} is registered")
        with self._lock, store_lock(self.cache, KEY):
            record = self._read()
            off = update({(k, key) for k, key in record.get("off", ())})
            record["off"] = sorted(off)
            record["rev"] = record.get("rev", 0) + 1
            self.cache.set(KEY, record, timeout=0)
            self.apply(record)
        self.announce(kind)

    def _read(self) -> dict[str, t.Any]:
        record = self.cache.get(KEY)
        return dict(record) if isinstance(record, dict) else {}

    def warn_unshared(self, kind: Kind) -> None:
        """A component registered outside a loader, after setup, in a process of several."""
        warnings.warn(
            f"a {kind[:-1]} was registered at run time outside a loader: only this process serves it. "
            "Register run-time components in a function decorated with @mcp.loader and call mcp.reload(), "
            "so that every process serves them",
            RuntimeRegistrationWarning,
            stacklevel=5,
        )


_KINDS: tuple[Kind, ...] = ("tools", "resources", "templates", "prompts")
