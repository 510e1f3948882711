"""What :attr:`~flask_mcp.Context.state` keeps: small JSON values per session or principal.

The core defines the :class:`StateStore` it needs; the Flask layer hands one
over with :func:`use_state_store` (``stores/context_state.py`` keeps the
values in the extension's cache, so every process sees them).
"""

from __future__ import annotations

import json
import typing as t

if t.TYPE_CHECKING:
    from .server import Server

__all__ = ["MAX_STATE_KEY_BYTES", "ContextState", "StateStore", "StateUnavailable", "state_store_of", "use_state_store"]


class StateStore(t.Protocol):
    """Where :attr:`~flask_mcp.Context.state` keeps its values: JSON text by scope and key, each with a time to live."""

    def get(self, scope: str, key: str) -> str | None:
        """The JSON text under *key* in *scope*, or ``None`` (never set, deleted or expired)."""

    def set(self, scope: str, key: str, text: str, ttl: int | None, caller: str | None = None) -> None:
        """Keep *text* for *ttl* seconds (``None``: the store's default); :class:`ValueError` past its bound.

        *caller* (:attr:`Call.caller <flask_mcp.core.client.Call.caller>`) is whose quota the write
        spends; a store may refuse it with :class:`~flask_mcp.protocol.errors.StoreRefused`.
        """

    def delete(self, scope: str, key: str, caller: str | None = None) -> None:
        """Forget *key* in *scope*; nothing happens if it is not there. *caller* as for :meth:`set`."""


#: The attribute of a :class:`~flask_mcp.core.server.Server` that holds its :class:`StateStore`.
_STORE_ATTRIBUTE = "_context_state_store"
#: The longest :attr:`~flask_mcp.Context.state` key, in UTF-8 bytes.
MAX_STATE_KEY_BYTES = 256


def use_state_store(server: Server, store: StateStore | None) -> None:
    """Give *server*'s handlers a :attr:`~flask_mcp.Context.state` kept in *store* (``None``: none)."""
    setattr(server, _STORE_ATTRIBUTE, store)


def state_store_of(server: Server) -> StateStore | None:
    """The :class:`StateStore` given to *server*, or ``None``."""
    return t.cast("StateStore | None", getattr(server, _STORE_ATTRIBUTE, None))


class StateUnavailable(RuntimeError):
    """:attr:`~flask_mcp.Context.state` has nothing to keep its values in, or no one to keep them for."""


class ContextState:
    """A small key/value store of JSON values, per session or per principal (:attr:`~flask_mcp.Context.state`).

    :param store: where values live, or ``None`` when the server has none.
    :param scope: whom the values belong to (``"session:<id>"`` or
        ``"principal:<subject>"``), or ``None`` for an anonymous caller without a session.
    """

    def __init__(self, store: StateStore | None, scope: str | None, caller: str | None = None) -> None:
        self._store = store
        self.scope = scope
        #: Whose store quota a write spends (:attr:`Call.caller <flask_mcp.core.client.Call.caller>`).
        self.caller = caller

    @property
    def available(self) -> bool:
        """Whether :meth:`get`, :meth:`set` and :meth:`delete` can work for this request."""
        return self._store is not None and self.scope is not None

    def _where(self, key: str) -> tuple[StateStore, str]:
        if not isinstance(key, str) or not key or len(key.encode("utf-8")) > MAX_STATE_KEY_BYTES:
            raise ValueError(f"a state key is a non-empty string of at most {MAX_STATE_KEY_BYTES} bytes")
        if self._store is None:
            raise StateUnavailable("ctx.state needs a state store; the MCP extension's cache provides one")
        if self.scope is None:
            raise StateUnavailable(
                "ctx.state is kept per session or per authenticated principal, and this request has neither "
                "(an anonymous caller without a session): configure authentication, or use a session"
            )
        return self._store, self.scope

    def get(self, key: str, default: t.Any = None) -> t.Any:
        """The value set under *key*, or *default* when there is none (or it expired)."""
        store, scope = self._where(key)
        text = store.get(scope, key)
        return default if text is None else json.loads(text)

    def set(self, key: str, value: t.Any, ttl: int | None = None) -> None:
        """Keep *value* under *key* for *ttl* seconds (default ``MCP_CONTEXT_STATE_TTL``).

        The value is stored as JSON and read back as JSON (a tuple comes back a list).

        :raises TypeError: *value* is not JSON-serialisable (``NaN`` included).
        :raises ValueError: an invalid key or ttl, or the state would grow past ``MCP_CONTEXT_STATE_MAX_BYTES``.
        :raises ~flask_mcp.protocol.errors.StoreRefused: the caller's quota of ``ctx.state`` is spent, or the
            shared store has no room: the request fails with HTTP 429 and ``Retry-After``.
        """
        store, scope = self._where(key)
        if ttl is not None and (isinstance(ttl, bool) or not isinstance(ttl, int) or ttl <= 0):
            raise ValueError(f"ttl must be a positive number of seconds, not {ttl!r}")
        try:
            text = json.dumps(value, allow_nan=False, separators=(",", ":"), ensure_ascii=False)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"ctx.state keeps JSON values only; {key!r} cannot be stored: {exc}") from None
        store.set(scope, key, text, ttl, caller=self.caller)

    def delete(self, key: str) -> None:
        """Forget *key*; nothing happens if it is not set."""
        store, scope = self._where(key)
        store.delete(scope, key, caller=self.caller)
