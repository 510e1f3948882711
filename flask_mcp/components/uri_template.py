"""RFC 6570 URI templates (``notes://{note_id}``), matched in reverse.

These expressions are understood:

* ``{var}`` (level 1): one percent-encoded value, so never a ``/``, ``?``
  or ``#``; matching takes the longest run of characters up to the next
  literal part.
* ``{+path}`` (reserved expansion): a value that may hold ``/`` (a path),
  up to the query or fragment.
* ``{path*}`` and ``{/path*}`` (explode): one or more path segments,
  ``a/b/c`` and ``/a/b/c``; the variable receives them joined by ``/``.
  ``{/name}`` is one segment after a ``/``.
* ``{?query,limit}`` and ``{&page}`` (form-style query): ``?query=x&limit=5``
  in any order; a variable the URI leaves out is absent from the match (the
  handler's default applies), a parameter the template does not name makes
  the URI not match. They come last in a template.

The promise holds after decoding, so a handler never receives a value that
walks out of a directory. Values are decoded exactly once:

* a one-value variable (``{var}``, ``{/var}``, a query parameter) never
  decodes to something with a path separator (``%2F``, ``%5C``), a NUL, or
  to ``.`` or ``..`` (``%252F`` is the harmless text ``%2F``);
* a value that may hold ``/`` (``{+path}``, ``{path*}``, ``{/path*}``)
  has no ``.`` or ``..`` segment, no empty segment, does not start with
  ``/`` or a drive (``C:``), and holds no backslash or NUL; its raw form has
  no encoded dot, slash, backslash or NUL (``%2e``, ``%2f``, ``%5c``,
  ``%00``), and its decoded form none either, nor ``%25``: double encoding
  (``%252e%252e``) is refused rather than left for a second decoding.

A URI that breaks these rules does not match: the client gets "resource not
found" and the handler never runs.
"""

from __future__ import annotations

import dataclasses
import re
import typing as t
from urllib.parse import quote, unquote

__all__ = ["URITemplate"]

_EXPRESSION = re.compile(r"\{([^{}]*)\}")
_VARSPEC = re.compile(r"^(?P<name>[A-Za-z0-9_]+)(?P<explode>\*?)$")
#: What no decoded one-value variable may contain: path separators and NUL.
_UNSAFE = re.compile(r"[/\\\x00]")
#: What no decoded path value may contain: backslashes and NUL.
_UNSAFE_IN_PATH = re.compile(r"[\\\x00]")
#: Percent-escapes of a dot, slash, backslash or NUL, refused in a path value as it comes.
_ENCODED = re.compile(r"%(?:2e|2f|5c|00)", re.IGNORECASE)
#: The same and an escaped percent sign, refused once decoded: double encoding.
_DOUBLE_ENCODED = re.compile(r"%(?:2e|2f|5c|00|25)", re.IGNORECASE)
_DRIVE = re.compile(r"^[A-Za-z]:")
#: The operators understood, and those of query expressions.
_OPERATORS = ("", "+", "/", "?", "&")
_QUERY = ("?", "&")
#: Characters ``{+var}`` leaves as they are: RFC 3986's reserved set but the query and fragment marks.
_RESERVED_SAFE = "/:@!$&'()*+,;=[]"

Kind = t.Literal["value", "path"]


@dataclasses.dataclass(frozen=True)
class _Expression:
    operator: str
    #: ``(name, explode)`` of each variable.
    variables: tuple[tuple[str, bool], ...]


class URITemplate:
    """A URI template of the forms the module's description lists.

    :param template: for example ``"users://{user_id}/profile"`` or
        ``"files:///{+path}{?rev}"``.
    :raises ValueError: for other operators (``{#x}``, ``{.x}``, ``{;x}``),
        prefix modifiers (``{x:3}``), several variables outside a query
        (``{a,b}``), malformed braces, a variable used twice, or a literal
        after a query expression.
    """

    def __init__(self, template: str) -> None:
        self.template = template
        #: Every variable, in the order of the template.
        self.variables: list[str] = []
        #: The variables of query expressions: a URI may leave them out.
        self.query_variables: list[str] = []
        #: How each variable that is not a query parameter is checked: one value, or a path.
        self._kinds: dict[str, Kind] = {}
        self._parts: list[str | _Expression] = []
        pattern: list[str] = []
        query_prefix: str | None = None
        position = 0
        for match in _EXPRESSION.finditer(template):
            literal = template[position : match.start()]
            self._literal(literal, query_prefix)
            expression = self._parse(match.group(1))
            self._parts += [literal, expression]
            pattern.append(re.escape(literal))
            if expression.operator in _QUERY:
                query_prefix = query_prefix or expression.operator
            else:
                pattern.append(self._pattern(expression))
            position = match.end()
        tail = template[position:]
        self._literal(tail, query_prefix)
        self._parts.append(tail)
        pattern.append(re.escape(tail))
        if query_prefix is not None:
            pattern.append(f"(?:{re.escape(query_prefix)}(?P<query>[^#]*))?")
        self._regex = re.compile("".join(pattern) + r"\Z")

    def _literal(self, literal: str, query_prefix: str | None) -> None:
        if "{" in literal or "}" in literal:
            raise ValueError(f"unbalanced braces in URI template {self.template!r}")
        if literal and query_prefix is not None:
            raise ValueError(f"URI template {self.template!r}: nothing may follow a query expression but another")

    def _parse(self, body: str) -> _Expression:
        operator = body[:1] if body[:1] in _OPERATORS[1:] else ""
        specs = body[len(operator) :].split(",")
        variables = []
        for spec in specs:
            found = _VARSPEC.match(spec)
            if found is None:
                raise ValueError(f"URI template {self.template!r}: {{{body}}} is not an expression flask_mcp matches")
            name, explode = found.group("name"), bool(found.group("explode"))
            if name in self.variables:
                raise ValueError(f"URI template {self.template!r} uses {{{name}}} twice")
            self.variables.append(name)
            variables.append((name, explode))
        if operator in _QUERY:
            if any(explode for _, explode in variables):
                raise ValueError(f"URI template {self.template!r}: {{{body}}} cannot explode a query parameter")
            self.query_variables += [name for name, _ in variables]
        elif len(variables) > 1 or (operator == "+" and variables[0][1]):
            raise ValueError(f"URI template {self.template!r}: {{{body}}} is not an expression flask_mcp matches")
        else:
            name, explode = variables[0]
            self._kinds[name] = "path" if operator == "+" or explode else "value"
        return _Expression(operator, tuple(variables))

    def _pattern(self, expression: _Expression) -> str:
        name, explode = expression.variables[0]
        group = f"(?P<v{self.variables.index(name)}>"
        if expression.operator == "+":
            return group + "[^?#]+)"
        segments = "[^/?#]+(?:/[^/?#]+)*" if explode else "[^/?#]+"
        return ("/" if expression.operator == "/" else "") + group + segments + ")"

    def match(self, uri: str) -> dict[str, str] | None:
        """Return the decoded variables if *uri* matches, else ``None``.

        A query variable the URI leaves out is absent. A value that breaks
        the rules of the module's description, or decodes to bytes that are
        not UTF-8, does not match.
        """
        found = self._regex.match(uri)
        if found is None:
            return None
        values: dict[str, str] = {}
        for index, name in enumerate(self.variables):
            raw = found.group(f"v{index}") if name in self._kinds else None
            if raw is None:
                continue
            value = _path(raw) if self._kinds[name] == "path" else _value(raw)
            if value is None:
                return None
            values[name] = value
        query = found.group("query") if self.query_variables else None
        if query is not None:
            parameters = self._query(query)
            if parameters is None:
                return None
            values.update(parameters)
        return values

    def _query(self, query: str) -> dict[str, str] | None:
        values: dict[str, str] = {}
        for pair in query.split("&") if query else ():
            name, equals, raw = pair.partition("=")
            if not equals or name not in self.query_variables or name in values:
                return None
            value = _value(raw) if raw else ""
            if value is None:
                return None
            values[name] = value
        return values

    def expand(self, **values: t.Any) -> str:
        """Build a concrete URI, percent-encoding each value.

        A path variable (``{+path}``, ``{path*}``, ``{/path*}``) takes a
        string whose ``/`` separate segments, or a list of segments; query
        variables may be left out (or ``None``).
        """
        built: list[str] = []
        query_started = False
        for part in self._parts:
            if isinstance(part, str):
                built.append(part)
                query_started = query_started or "?" in part
                continue
            if part.operator in _QUERY:
                pairs = [
                    f"{name}={quote(str(values[name]), safe='')}"
                    for name, _ in part.variables
                    if values.get(name) is not None
                ]
                if pairs:
                    built.append(("&" if query_started else "?") + "&".join(pairs))
                    query_started = True
                continue
            name, explode = part.variables[0]
            value = values[name]
            if part.operator == "+":
                built.append(quote(str(value), safe=_RESERVED_SAFE))
                continue
            segments = value if isinstance(value, (list, tuple)) else str(value).split("/") if explode else [value]
            joined = "/".join(quote(str(segment), safe="") for segment in segments)
            built.append(("/" if part.operator == "/" else "") + joined)
        return "".join(built)

    def __repr__(self) -> str:
        return f"URITemplate({self.template!r})"


def _decoded(raw: str) -> str | None:
    try:
        return unquote(raw, errors="strict")
    except UnicodeDecodeError:  # "%FF": no text at all
        return None


def _value(raw: str) -> str | None:
    """One value: never a separator, a NUL, ``.`` or ``..`` once decoded."""
    value = _decoded(raw)
    if value is None or _UNSAFE.search(value) or value in (".", ".."):
        return None
    return value


def _path(raw: str) -> str | None:
    """A value that may hold ``/``: the rules of the module's description."""
    if _ENCODED.search(raw):
        return None
    value = _decoded(raw)
    if value is None or _UNSAFE_IN_PATH.search(value) or _DOUBLE_ENCODED.search(value) or _DRIVE.match(value):
        return None
    if any(segment in ("", ".", "..") for segment in value.split("/")):
        return None
    return value
