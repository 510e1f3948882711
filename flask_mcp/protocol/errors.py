"""Exceptions a handler may raise, and how failures are worded for the client."""

from __future__ import annotations

import typing as t

import marshmallow as ma

from .jsonrpc import RATE_LIMITED, MCPError

__all__ = [
    "NotFoundError",
    "StoreRefused",
    "ToolError",
    "describe_exception",
    "describe_validation_error",
    "is_expected",
]

#: Shown instead of the exception text when details are masked.
MASKED_MESSAGE = "the tool failed unexpectedly (details are in the server log)"


class ToolError(Exception):
    """Raise from a tool to fail with a message the model is meant to see.

    Its message is always sent, even when internal error details are masked::

        @mcp.tool()
        def withdraw(amount: int) -> str:
            if amount > balance():
                raise ToolError("insufficient funds")
    """


class NotFoundError(ToolError):
    """Raise when the requested thing does not exist.

    From a resource handler it becomes the JSON-RPC error for an unknown
    resource: -32002 in the handshake revisions (2025-11-25 and before),
    -32602 with HTTP 400 in 2026-07-28; from a tool, an error result like any
    :class:`ToolError`.
    ``flask.abort(404)`` in a handler is turned into this exception.
    """


class StoreRefused(MCPError):
    """The server will not keep more for this caller now: the JSON-RPC error -31429 (HTTP 429) with ``Retry-After``.

    Raised by :attr:`ctx.state.set <flask_mcp.Context.state>` and the other
    writes a client makes the shared short-lived store keep, when the caller's
    quota of that kind is spent or the store has no room (:doc:`/security`).
    It is a refusal of the request, not a failure of the tool: a tool that
    meets it fails the whole request with it, never with an ``isError``
    result, so the client sees the 429 and when to retry.

    :param message: what was refused, and why.
    :param retry_after: whole seconds to wait (at least 1), ``data.retryAfter``.
    """

    def __init__(self, message: str, retry_after: int) -> None:
        self.retry_after = max(1, int(retry_after))
        super().__init__(RATE_LIMITED, message, {"retryAfter": self.retry_after})


def _flatten(messages: t.Any, path: str = "") -> t.Iterator[str]:
    if isinstance(messages, dict):
        for key, value in messages.items():
            yield from _flatten(value, f"{path}.{key}" if path else str(key))
    elif isinstance(messages, list) and all(isinstance(m, str) for m in messages):
        yield f"{path}: {' '.join(messages)}" if path else " ".join(messages)
    elif isinstance(messages, list):
        for message in messages:
            yield from _flatten(message, path)
    else:
        yield f"{path}: {messages}" if path else str(messages)


def describe_validation_error(error: ma.ValidationError) -> str:
    """One line naming every offending field: ``a: Not a valid integer.; b: ...``."""
    return "; ".join(_flatten(error.messages))


def is_expected(exc: BaseException) -> bool:
    """Whether *exc* is a failure the handler meant to report, rather than a bug."""
    return isinstance(exc, (ToolError, ma.ValidationError, MCPError))


def describe_exception(exc: BaseException, *, expose: bool) -> str:
    """The message sent to the client for an exception raised by a handler.

    :class:`ToolError` and marshmallow validation errors carry messages meant
    for the caller; anything else is a bug whose text may hold internal
    detail, so it is only shown when *expose* is true.
    """
    if isinstance(exc, ToolError):
        return str(exc)
    if isinstance(exc, ma.ValidationError):
        return describe_validation_error(exc)
    if isinstance(exc, MCPError):  # e.g. the client did not answer a sampling request in time
        return exc.message
    if expose:
        return f"{type(exc).__name__}: {exc}"
    return MASKED_MESSAGE
