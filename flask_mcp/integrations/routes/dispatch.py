"""One call of a route tool: the request built from the tool's own rule, checked, and handled by the app.

:func:`dispatch` is what every route tool runs (:mod:`flask_mcp.integrations.routes.expose`).
It builds the URL from the one rule the tool was made from, refuses a
value that would make it the URL of anything else, and has the app handle
the request in a context of its own.

What the URL variables may hold:

* a variable of a one-segment converter (``string``, ``int``, ``any``...,
  every converter but ``path``) holds no ``/``, and is neither ``.`` nor
  ``..``;
* a ``path`` variable (or any converter that spans segments) may hold
  ``/``, but no empty, ``.`` or ``..`` segment;
* no variable holds ``?``, ``#`` or a control character (``NUL``, line
  breaks...);
* and then the URL built is matched back by the app's own URL map, for the
  tool's method: unless it leads to the same rule with the same values,
  nothing is dispatched. This catches what the character rules cannot (a
  converter of the app that does not quote what it puts in the URL).

A refusal is a :class:`marshmallow.ValidationError` naming the variable:
``tools/call`` answers it as invalid arguments, REST with a 400.

What the route gets of the MCP request (:class:`Forwarded`): the
``Authorization`` and ``Cookie`` headers, the address of the caller as the
app sees it (``REMOTE_ADDR``, after any ``ProxyFix``) and the scheme and host
the MCP request came to; nothing else (no ``X-Forwarded-*`` header the caller
could write). :func:`forwarded_digest` digests the same, for the key of cached
results.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import typing as t
import unicodedata
from html.parser import HTMLParser
from urllib.parse import urlencode

import marshmallow as ma
from flask import Flask, has_request_context, request
from werkzeug.exceptions import HTTPException
from werkzeug.routing import RoutingException
from werkzeug.routing import ValidationError as ConverterRefused
from werkzeug.test import EnvironBuilder

from ...protocol.errors import ToolError

if t.TYPE_CHECKING:
    from werkzeug.routing import BaseConverter, MapAdapter, Rule

__all__ = [
    "BODY_METHODS",
    "FORWARDED_HEADERS",
    "Forwarded",
    "check_values",
    "dispatch",
    "forwarded",
    "forwarded_digest",
]

#: Methods whose arguments travel as a JSON body; the others' as the query string.
BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})
#: Request headers of the MCP caller handed on to the route: its credentials.
FORWARDED_HEADERS = ("Authorization", "Cookie")
#: Keys the digest of forwarded credentials when the app has no ``SECRET_KEY``.
_DIGEST_KEY = b"flask-mcp forwarded credentials"


class Forwarded(t.NamedTuple):
    """What a route is handed of the MCP request besides the tool's arguments."""

    #: ``(name, value)`` of each :data:`FORWARDED_HEADERS` the caller sent.
    headers: tuple[tuple[str, str], ...] = ()
    #: The caller's address as the app sees it (``request.remote_addr``).
    remote_addr: str | None = None
    #: Scheme, host and script root the MCP request came to; ``None`` outside a request.
    base_url: str | None = None


def forwarded() -> Forwarded:
    """What the current MCP request hands a route; nothing outside a request (stdio, the CLI, a task's worker)."""
    if not has_request_context():
        return Forwarded()
    headers = tuple((name, request.headers[name]) for name in FORWARDED_HEADERS if name in request.headers)
    return Forwarded(headers, request.remote_addr, request.host_url.rstrip("/") + request.script_root)


def forwarded_digest(app: Flask) -> str:
    """A digest of what the current request hands a route: the part of a cached result's key the caller brings.

    An HMAC keyed by the app's ``SECRET_KEY`` (a fixed key without one), so
    the credentials are never part of a key in clear.
    """
    secret = app.secret_key
    key = secret.encode() if isinstance(secret, str) else secret if isinstance(secret, bytes) else _DIGEST_KEY
    text = json.dumps(list(forwarded()), separators=(",", ":"))
    return hmac.new(key, text.encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()[:40]


def _segment_problem(value: str, isolated: bool) -> str | None:
    # Why *value* cannot be put in the URL as the value of one variable, or None.
    if any(unicodedata.category(char) == "Cc" for char in value):
        return "may not hold a control character"
    for char in "?#":
        if char in value:
            return f"may not hold {char!r}: it would end the path of the URL"
    if isolated:
        if "/" in value:
            return "may not hold '/': it is one segment of the URL, and a '/' would make it another route's"
        if value in (".", ".."):
            return "may not be '.' or '..'"
        return None
    if any(segment in ("", ".", "..") for segment in value.split("/")):
        return "may not have an empty, '.' or '..' segment (a leading, trailing or doubled '/')"
    return None


def check_values(rule: Rule, values: t.Mapping[str, t.Any]) -> None:
    """Refuse a value of *rule*'s variables that could not stay that variable's value in the URL.

    :raises marshmallow.ValidationError: naming each refused variable and why.
    """
    problems: dict[str, list[str]] = {}
    for name, value in values.items():
        converter: BaseConverter | None = rule._converters.get(name)  # werkzeug keeps them per rule, by variable
        if converter is None or not isinstance(value, str):
            continue
        problem = _segment_problem(value, getattr(converter, "part_isolating", True))
        if problem is not None:
            problems[name] = [problem]
    if problems:
        raise ma.ValidationError(problems)


def _expected(rule: Rule, values: t.Mapping[str, t.Any]) -> dict[str, t.Any] | None:
    # The view arguments matching the URL must give back: the values as the converters read them.
    expected = dict(rule.defaults or {})
    try:
        for name, value in values.items():
            converter = rule._converters[name]
            expected[name] = converter.to_python(value if isinstance(value, str) else converter.to_url(value))
    except (ConverterRefused, ValueError, TypeError):
        return None
    return expected


def _refused(rule: Rule, method: str, values: t.Mapping[str, t.Any], why: str) -> ma.ValidationError:
    message = f"{why}: it does not lead back to the route {method} {rule.rule} with these values"
    return ma.ValidationError({name: [message] for name in sorted(values)} or {"_schema": [message]})


def _environ(path: str, method: str, query: t.Sequence[tuple[str, str]], body: t.Any) -> dict[str, t.Any]:
    given = forwarded()
    builder = EnvironBuilder(
        path=path,
        base_url=given.base_url,
        method=method,
        query_string=urlencode(list(query)),
        headers=list(given.headers),
        json=body if method in BODY_METHODS and body is not None else None,
        # The address the app saw for the MCP request: per-address views (rate limits) tell callers apart.
        environ_overrides={"REMOTE_ADDR": given.remote_addr} if given.remote_addr is not None else None,
    )
    try:
        return builder.get_environ()
    finally:
        builder.close()


def dispatch(
    app: Flask,
    rule: Rule,
    method: str,
    path_values: t.Mapping[str, t.Any],
    query: t.Sequence[tuple[str, str]] = (),
    body: t.Any = None,
) -> t.Any:
    """Have *app* handle the request for *rule* and *method* in a context of its own; the 2xx answer's value.

    :raises marshmallow.ValidationError: a value of *path_values* that would
        not stay in *rule* (see the module's rules); nothing was dispatched.
    :raises ~flask_mcp.ToolError: any other status than 2xx, with the view's message.
    """
    check_values(rule, path_values)
    built = rule.build(dict(path_values), append_unknown=False)
    expected = _expected(rule, path_values)
    if built is None or expected is None:
        raise _refused(rule, method, path_values, "the route's converters refuse these values")
    path = built[1]
    environ = _environ(path, method, query, body)
    # Matched as the app will match it, for the tool's method, before anything runs.
    try:
        adapter = t.cast("MapAdapter", app.create_url_adapter(app.request_class(environ)))
        matched, arguments = adapter.match(return_rule=True)
    except (HTTPException, RoutingException) as exc:
        why = f"the URL {path} is not this route's ({type(exc).__name__})"
        raise _refused(rule, method, path_values, why) from None
    if matched is not rule or dict(arguments) != expected:
        raise _refused(rule, method, path_values, f"the URL {path} is another route's or holds other values")
    # A fresh app context too: the route sees its own ``g``, not the MCP request's.
    with app.app_context(), app.request_context(environ):
        response = app.full_dispatch_request()
    payload = _payload(response.get_data(as_text=True), response.mimetype or "")
    if 200 <= response.status_code < 300:
        return payload
    raise ToolError(f"{method} {path} answered {response.status}: {_message(payload)}")


def _payload(text: str, mimetype: str) -> t.Any:
    if mimetype == "application/json" or mimetype.endswith("+json"):
        try:
            return json.loads(text) if text else None
        except ValueError:
            return text
    if mimetype in {"text/html", "application/xhtml+xml"}:
        # An HTML error page (werkzeug's for abort(404, description=...)): the model gets its words.
        return _html_text(text)
    return text


class _PageText(HTMLParser):
    """The text of an HTML page: its paragraphs apart, the rest (less title, scripts and styles) beside."""

    _HIDDEN = frozenset({"title", "script", "style", "head"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.paragraphs: list[str] = []
        self.other: list[str] = []
        self._open: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "p":
            self.paragraphs.append("")
        self._open.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in self._open:
            del self._open[len(self._open) - 1 - self._open[::-1].index(tag) :]

    def handle_data(self, data: str) -> None:
        if self._HIDDEN.intersection(self._open):
            return
        if "p" in self._open and self.paragraphs:
            self.paragraphs[-1] += data
        else:
            self.other.append(data)


def _html_text(page: str) -> str:
    """What an HTML error page says, as plain text: its paragraphs (werkzeug puts the description in one)."""
    parser = _PageText()
    parser.feed(page)
    parser.close()
    words = [" ".join(p.split()) for p in parser.paragraphs] or [" ".join(" ".join(parser.other).split())]
    return " ".join(word for word in words if word)


def _message(payload: t.Any) -> str:
    # What APIs put their message under: flask-smorest's and APIFlask's "message", Flask-JWT-Extended's "msg".
    if isinstance(payload, dict):
        for key in ("message", "msg", "error", "description", "detail"):
            if isinstance(payload.get(key), str):
                return t.cast(str, payload[key])
        return json.dumps(payload)
    return str(payload).strip()[:500] or "no body"
