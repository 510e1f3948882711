"""RFC 6570 level-1 URI templates (``notes://{note_id}``), matched in reverse.

Level 1 is simple string expansion: each ``{var}`` stands for one
percent-encoded value, so a value never contains a reserved character such as
``/``, ``?`` or ``#``. Matching a concrete URI therefore takes, for each
variable, the longest run of characters up to the next literal part.

The promise holds after decoding too: a URI whose variable would decode to
something with a path separator (``%2F``, ``%5C``), a NUL, or to ``.`` or
``..`` does not match, so a handler never receives a value that walks out of
a directory. Values are decoded exactly once (``%252F`` is the text ``%2F``).
"""

from __future__ import annotations

import re
import typing as t
from urllib.parse import quote, unquote

__all__ = ["URITemplate"]

_EXPRESSION = re.compile(r"\{([^{}]*)\}")
#: What no decoded value may contain: path separators and NUL.
_UNSAFE = re.compile(r"[/\\\x00]")
_VARNAME = re.compile(r"^[A-Za-z0-9_]+$")


class URITemplate:
    """A level-1 URI template.

    :param template: for example ``"users://{user_id}/profile"``.
    :raises ValueError: for operators of higher levels (``{+x}``, ``{?x}``, ...),
        malformed braces or a variable used twice.
    """

    def __init__(self, template: str) -> None:
        self.template = template
        self.variables: list[str] = []
        pattern = []
        position = 0
        for match in _EXPRESSION.finditer(template):
            literal = template[position : match.start()]
            if "{" in literal or "}" in literal:
                raise ValueError(f"unbalanced braces in URI template {template!r}")
            name = match.group(1)
            if not _VARNAME.match(name):
                raise ValueError(
                    f"URI template {template!r}: {{{name}}} is not a level-1 expression (a plain variable name)"
                )
            if name in self.variables:
                raise ValueError(f"URI template {template!r} uses {{{name}}} twice")
            self.variables.append(name)
            pattern.append(re.escape(literal))
            pattern.append(f"(?P<{name}>[^/?#]+)")
            position = match.end()
        tail = template[position:]
        if "{" in tail or "}" in tail:
            raise ValueError(f"unbalanced braces in URI template {template!r}")
        pattern.append(re.escape(tail))
        self._regex = re.compile("".join(pattern) + r"\Z")

    def match(self, uri: str) -> dict[str, str] | None:
        """Return the decoded variables if *uri* matches, else ``None``.

        A value that decodes to a path separator, a NUL, ``.`` or ``..``, or
        to bytes that are not UTF-8, does not match (see the module's description).
        """
        found = self._regex.match(uri)
        if found is None:
            return None
        try:
            values = {name: unquote(value, errors="strict") for name, value in found.groupdict().items()}
        except UnicodeDecodeError:  # "%FF": no text at all
            return None
        if any(_UNSAFE.search(value) or value in (".", "..") for value in values.values()):
            return None
        return values

    def expand(self, **values: t.Any) -> str:
        """Build a concrete URI, percent-encoding each value."""

        def substitute(match: re.Match[str]) -> str:
            return quote(str(values[match.group(1)]), safe="")

        return _EXPRESSION.sub(substitute, self.template)

    def __repr__(self) -> str:
        return f"URITemplate({self.template!r})"
