"""A ``Host`` header the router cannot use, answered in JSON on an MCP server's paths.

werkzeug's router encodes the request's host name with IDNA before any
view runs. A name it cannot encode (an empty label, as in ``a..b``) makes
Flask answer its HTML 400 page, whatever the URL, and no blueprint's error
handler sees it: the request matched no rule yet. On an MCP server's paths
a client gets the JSON 400 every other bad header gets; anywhere else the
app answers as it would without flask_mcp: with its own handler for the
error if it has one, else with Flask's page.
"""

from __future__ import annotations

import typing as t

from flask import current_app, request
from werkzeug.exceptions import BadHost

from .errors import error_response

if t.TYPE_CHECKING:
    from flask import Flask
    from flask.typing import ResponseReturnValue

__all__ = ["MESSAGE", "answer_bad_hosts"]

#: What the JSON 400 says.
MESSAGE = "Bad Request: the Host header is not a host name the server can route by"


def answer_bad_hosts(app: Flask, served: t.Callable[[Flask, str], bool]) -> None:
    """Answer :class:`~werkzeug.exceptions.BadHost` in JSON on the paths *served* says are an MCP server's.

    :param served: whether a path of the app (the app and the path given) is an MCP server's.

    Registered once per app, whichever server asks first. A handler the app
    registered for :class:`~werkzeug.exceptions.BadHost` before still answers
    its other paths; one it registers after takes the place of this one.
    """
    handlers = app.error_handler_spec[None].get(BadHost.code, {})
    # The app's own handler for BadHost itself, which ours takes the place of: it answers the app's paths.
    previous = handlers.get(BadHost)
    if getattr(previous, "answers_bad_hosts", False):
        return

    def answer(error: BadHost) -> ResponseReturnValue:
        if served(current_app, request.path):
            return error_response(400, MESSAGE)
        handler = previous if previous is not None else _app_handler(current_app, error, answer)
        return current_app.ensure_sync(handler)(error) if handler is not None else error

    answer.answers_bad_hosts = True  # type: ignore[attr-defined]
    app.register_error_handler(BadHost, answer)


def _app_handler(
    app: Flask, error: BadHost, ours: t.Callable[[BadHost], ResponseReturnValue]
) -> t.Callable[..., t.Any] | None:
    # The handler Flask would find without ours: the app's, by status code then by class,
    # most specific first (Flask.find_error_handler's order, no blueprint having matched).
    for code in (error.code, None):
        found = app.error_handler_spec[None].get(code)
        if not found:
            continue
        for cls in type(error).__mro__:
            handler = found.get(cls)
            if handler is not None and handler is not ours:
                return handler
    return None
