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
import typing as t
from pathlib import Path

from flask import current_app, render_template
from markupsafe import Markup

from .components.build import build_resource
from .core.methods.discover import APP_MIME_TYPE, APPS_EXTENSION

if t.TYPE_CHECKING:
    from .components.model import Tool
    from .extension import MCP

__all__ = ["EXTENSION", "MIME_TYPE", "App", "inline_static", "link_view", "register_view", "view_uri"]

#: The id of the MCP Apps extension, in ``capabilities.extensions``.
EXTENSION = APPS_EXTENSION
#: The MIME type of an MCP App view.
MIME_TYPE = APP_MIME_TYPE
_CSP_KEYS = frozenset({"connectDomains", "resourceDomains", "frameDomains", "baseUriDomains"})


@dataclasses.dataclass(frozen=True)
class App:
    """A tool's view: a template of the app's template folder, and what the host should know of it.

    :param template: the Jinja template's name (``"dashboard.html"``).
    :param csp: the origins the view may reach, by kind (``connectDomains``,
        ``resourceDomains``, ``frameDomains``, ``baseUriDomains``); nothing by default.
    :param prefers_border: whether the host should draw a border around it (``None``: the host decides).
    """

    template: str
    csp: t.Mapping[str, t.Sequence[str]] | None = None
    prefers_border: bool | None = None

    def __post_init__(self) -> None:
        unknown = set(self.csp or ()) - _CSP_KEYS
        if unknown:
            raise ValueError(f"App csp takes {', '.join(sorted(_CSP_KEYS))}; not {', '.join(sorted(unknown))}")

    def ui_meta(self) -> dict[str, t.Any]:
        """The view's ``_meta.ui``."""
        meta: dict[str, t.Any] = {}
        if self.csp:
            meta["csp"] = {key: list(value) for key, value in self.csp.items()}
        if self.prefers_border is not None:
            meta["prefersBorder"] = self.prefers_border
        return meta


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
    """Serve the view of *tool*, a registered tool :func:`link_view` linked to it."""
    view = App(app) if isinstance(app, str) else app
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
    )
    resource.content_meta = {"ui": ui} if ui else None  # type: ignore[union-attr]
    mcp.registry.add_resource(resource)
