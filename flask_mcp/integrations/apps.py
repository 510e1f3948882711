"""MCP Apps (SEP-1865, ``io.modelcontextprotocol/ui``): a tool's result shown in a view rendered from a template.

``@mcp.tool(app="dashboard.html")`` (or ``app=App("dashboard.html", csp=...,
prefers_border=True)``) renders the Jinja template from the app's template
folder into a ``ui://<tool>/view`` resource of type
``text/html;profile=mcp-app`` and links the tool to it in its ``_meta``
(``ui.resourceUri``, and the older flat ``ui/resourceUri`` key hosts still
read). The host fetches the view with ``resources/read``, shows it in a
sandboxed frame and hands it the tool's input and result over
``postMessage``; the view renders ``structuredContent``.

The template renders inside the Flask request context of the read, with
``tool`` (its name) and ``inline_static(filename)`` (a file of the app's
static folder, inlined: views load nothing from elsewhere unless their CSP
names it). The view's CSP (``connectDomains``, ``resourceDomains``,
``frameDomains``, ``baseUriDomains``) and ``prefersBorder`` go in the
``_meta.ui`` of the content ``resources/read`` answers with, and of its
listing entry.
"""

from __future__ import annotations

import dataclasses
import re
import typing as t
from pathlib import Path

from flask import current_app, render_template
from markupsafe import Markup

from ..components.build import build_resource
from ..core.methods.discover import APP_MIME_TYPE, APPS_EXTENSION

if t.TYPE_CHECKING:
    from ..components.model import Tool
    from ..extension import MCP

__all__ = ["EXTENSION", "MIME_TYPE", "App", "as_app", "inline_static", "link_view", "register_view", "view_uri"]

#: The id of the MCP Apps extension, in ``capabilities.extensions``.
EXTENSION = APPS_EXTENSION
#: The MIME type of an MCP App view.
MIME_TYPE = APP_MIME_TYPE
_CSP_KEYS = frozenset({"connectDomains", "resourceDomains", "frameDomains", "baseUriDomains"})
#: A CSP host source: an optional http(s)/ws(s) scheme, a host (``*.`` may start it), a port, a path.
_HOST_SOURCE = re.compile(
    r"""
    (?:(?:https?|wss?)://)?
    (?:
        (?:{label}\.)*{label}                 # a host
        |\*\.(?:{label}\.)+{label}           # its subdomains: two labels at least after '*.', never '*.com'
        |\[[0-9A-Fa-f:.]+\]                  # an IPv6 address
    )
    (?::(?:[0-9]{1,5}|\*))?
    (?:/[A-Za-z0-9\-._~!$&()*+=:@%/]*)?
    """.replace("{label}", "[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"),
    re.VERBOSE,
)
#: Characters that would end a source and start another, or another directive, in the host's CSP header.
_SEPARATORS = re.compile(r"[\s;,'\"]")


def _csp_source(key: str, source: t.Any, allowed: frozenset[str]) -> str:
    """*source* if it is a host source the view may name under *key*.

    :raises ValueError: anything else: a bare ``*``, a scheme alone
        (``data:``, ``javascript:``, ``https:``), a host that is only ``*``,
        a keyword, or characters that would break the host's CSP, unless
        *allowed* names it deliberately (never the breaking characters).
    """
    if not isinstance(source, str) or not source:
        raise ValueError(f"App csp[{key!r}] holds origins as strings, not {source!r}")
    if _SEPARATORS.search(source):
        raise ValueError(f"App csp[{key!r}]: {source!r} has a space, ';', ',' or a quote: one origin per item")
    if source in allowed:
        return source
    if _HOST_SOURCE.fullmatch(source):
        return source
    raise ValueError(
        f"App csp[{key!r}]: {source!r} is not an origin such as 'https://api.example.com' or "
        "'https://*.example.com'; a bare '*', a scheme alone ('data:', 'blob:', 'https:') and "
        "keywords open the view to everything: name them in allow_unsafe_sources=... to allow them deliberately"
    )


def _csp(csp: t.Any, allowed: frozenset[str]) -> dict[str, tuple[str, ...]] | None:
    """*csp* checked and made plain: each kind's origins as a tuple (a string alone is one origin)."""
    if csp is None:
        return None
    if not isinstance(csp, t.Mapping):
        raise TypeError(f"App csp is a mapping of {', '.join(sorted(_CSP_KEYS))} to origins, not {csp!r}")
    unknown = {str(key) for key in csp} - _CSP_KEYS
    if unknown:
        raise ValueError(f"App csp takes {', '.join(sorted(_CSP_KEYS))}; not {', '.join(sorted(unknown))}")
    checked: dict[str, tuple[str, ...]] = {}
    for key, value in csp.items():
        # A string is one origin: iterating it would make each character an origin (one of them, perhaps, '*').
        sources = (value,) if isinstance(value, str) else value
        if not isinstance(sources, (list, tuple)):
            raise TypeError(f"App csp[{key!r}] is an origin or a list of origins, not {value!r}")
        checked[key] = tuple(_csp_source(key, source, allowed) for source in sources)
    return checked


@dataclasses.dataclass(frozen=True)
class App:
    """A tool's view: a template of the app's template folder, and what the host should know of it.

    Everything is checked when it is made, so a mistake fails at registration, never in a host.

    :param template: the Jinja template's name (``"dashboard.html"``).
    :param csp: the origins the view may reach, by kind (``connectDomains``,
        ``resourceDomains``, ``frameDomains``, ``baseUriDomains``); nothing by
        default. Each is a list of origins (``"https://api.example.com"``,
        ``"https://*.example.com"``), or one origin as a string.
    :param prefers_border: whether the host should draw a border around it (``None``: the host decides).
    :param allow_unsafe_sources: sources *csp* may name although they open
        the view widely (``"data:"``, ``"blob:"``, ``"*"``): refused unless named here.
    :raises TypeError: a *csp* that is not a mapping of origins, a *prefers_border* that is not a boolean.
    :raises ValueError: an unknown kind, or a source that is not an origin (see above).
    """

    template: str
    csp: t.Mapping[str, t.Sequence[str]] | None = None
    prefers_border: bool | None = None
    allow_unsafe_sources: t.Collection[str] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.template, str) or not self.template:
            raise TypeError(f"App template is a template's name, not {self.template!r}")
        if self.prefers_border is not None and not isinstance(self.prefers_border, bool):
            raise TypeError(f"App prefers_border is True, False or None, not {self.prefers_border!r}")
        allowed = self.allow_unsafe_sources
        if isinstance(allowed, str) or not all(isinstance(source, str) for source in allowed):
            raise TypeError(f"App allow_unsafe_sources is a list of sources, not {allowed!r}")
        object.__setattr__(self, "allow_unsafe_sources", frozenset(allowed))
        object.__setattr__(self, "csp", _csp(self.csp, frozenset(allowed)))

    def ui_meta(self) -> dict[str, t.Any]:
        """The view's ``_meta.ui``."""
        meta: dict[str, t.Any] = {}
        if self.csp:
            meta["csp"] = {key: list(value) for key, value in self.csp.items()}
        if self.prefers_border is not None:
            meta["prefersBorder"] = self.prefers_border
        return meta


def as_app(app: App | str) -> App:
    """*app* as an :class:`App`: a template name is ``App(name)``.

    :raises TypeError: neither.
    """
    if isinstance(app, App):
        return app
    if isinstance(app, str):
        return App(app)
    raise TypeError(f"app= takes a template name or an App, not {app!r}")


def view_uri(tool: str) -> str:
    """The URI of *tool*'s view."""
    return f"ui://{tool}/view"


def inline_static(filename: str) -> Markup:
    """A file of the current app's static folder, to inline in a view (``{{ inline_static("chart.js") }}``).

    :raises ValueError: a name leading out of the static folder.
    """
    folder = Path(t.cast(str, current_app.static_folder)).resolve()
    path = (folder / filename).resolve()
    if not path.is_relative_to(folder) or not path.is_file():
        raise ValueError(f"{filename!r} is not a file of the app's static folder")
    return Markup(path.read_text(encoding="utf-8"))


def link_view(tool: Tool) -> None:
    """Point *tool* at its view in its ``_meta``, before it is registered (its descriptor is built from it)."""
    uri = view_uri(tool.name)
    tool.meta = {**(tool.meta or {}), "ui": {"resourceUri": uri}, "ui/resourceUri": uri}


def register_view(mcp: MCP, tool: Tool, app: App | str) -> None:
    """Serve the view of *tool*, a registered tool :func:`link_view` linked to it.

    The view follows its tool: it has the tool's permissions and tags, is
    served only while the tool is (not while it is disabled or left out by
    its tags) and is removed with it (:meth:`~flask_mcp.components.registry.Registry.discard`).
    """
    view = as_app(app)
    uri = view_uri(tool.name)

    def render() -> str:
        return render_template(view.template, tool=tool.name, inline_static=inline_static)

    render.__name__ = f"{tool.name}_view"
    ui = view.ui_meta()
    resource = build_resource(
        render,
        uri,
        name=f"{tool.name} view",
        description=f"The view of the tool {tool.name!r} (an MCP App)",
        mime_type=MIME_TYPE,
        meta={"ui": ui} if ui else None,
        permissions=list(tool.permissions) if tool.permissions is not None else None,
        always_listed=tool.always_listed,
        tags=tool.tags,
    )
    resource.content_meta = {"ui": ui} if ui else None  # type: ignore[union-attr]
    resource.follows_tool = tool.name  # type: ignore[union-attr]
    mcp.registry.add_resource(resource)
