"""URL rules that match every HTTP method and list the ones they serve.

The extension's views answer a method they do not serve with a JSON 405
themselves, so their rules must match every method: a rule with a method
set makes werkzeug raise ``MethodNotAllowed`` during routing, before any
view or blueprint error handler runs, and the client gets an HTML page.
``methods=None`` matches every method but leaves ``flask routes`` with an
empty Methods column. :class:`ServedMethods` is a method set that contains
every method for the router and lists the served ones for everything that
iterates it.
"""

from __future__ import annotations

import typing as t

if t.TYPE_CHECKING:
    from flask import Flask

__all__ = ["ServedMethods", "add_rule"]


class ServedMethods(set[str]):
    """The methods a view serves, as a set that contains every method.

    Membership tests (werkzeug's router asks ``method in rule.methods``) are
    always true; iteration, ``len`` and set arithmetic (what ``flask routes``
    shows) see the served methods only.
    """

    def __contains__(self, method: object) -> bool:
        return True


def add_rule(
    app: Flask, path: str, endpoint: str, view: t.Callable[..., t.Any], methods: t.Iterable[str], **options: t.Any
) -> None:
    """Route *path* to *view* for every HTTP method, listing *methods* as the served ones.

    :param options: further :class:`werkzeug.routing.Rule` arguments (``subdomain``).
    """
    rule = app.url_rule_class(path, endpoint=endpoint, **options)
    rule.methods = ServedMethods(method.upper() for method in methods)
    app.url_map.add(rule)
    app.view_functions[endpoint] = view
