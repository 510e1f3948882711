"""The collection of registered components, with paged listings.

Listings are served from descriptor lists built once per change of the
registry, so a ``*/list`` request only slices a prepared list.
"""

from __future__ import annotations

import base64
import binascii
import typing as t

from ..policies.tool import ToolDefaults
from ..protocol import jsonrpc
from ..protocol.numerals import parse_numeral
from .model import Prompt, Resource, ResourceTemplate, Tool

__all__ = ["MAX_CURSOR_OFFSET", "InvalidCursor", "Page", "Registry", "decode_cursor", "encode_cursor", "paginate"]

Kind = t.Literal["tools", "resources", "templates", "prompts"]
#: The member of the ``*/list`` result that holds each kind.
RESULT_KEYS: dict[Kind, str] = {
    "tools": "tools",
    "resources": "resources",
    "templates": "resourceTemplates",
    "prompts": "prompts",
}


class InvalidCursor(ValueError):
    """A pagination cursor that this server did not issue."""


class Page(t.NamedTuple):
    """One page of descriptors and the cursor of the next page, if any."""

    items: list[dict[str, t.Any]]
    next_cursor: str | None


def encode_cursor(offset: int) -> str:
    """Opaque cursor for a list offset."""
    return base64.urlsafe_b64encode(f"o{offset}".encode()).decode().rstrip("=")


#: The largest offset a cursor may hold; a cursor longer than its encoding is not even decoded.
MAX_CURSOR_OFFSET = 2**53
_MAX_CURSOR_LENGTH = len(encode_cursor(MAX_CURSOR_OFFSET))


def decode_cursor(cursor: str) -> int:
    """Offset from a cursor made by :func:`encode_cursor`; raises :class:`InvalidCursor`.

    The offset is read by :func:`~flask_mcp.protocol.numerals.parse_numeral`: ASCII
    digits only, no larger than :data:`MAX_CURSOR_OFFSET`.
    """
    if len(cursor) > _MAX_CURSOR_LENGTH:
        raise InvalidCursor(cursor)
    try:
        raw = base64.b64decode(cursor + "=" * (-len(cursor) % 4), altchars=b"-_", validate=True).decode()
        if not raw.startswith("o"):
            raise ValueError("not an offset")
        return parse_numeral(raw[1:], MAX_CURSOR_OFFSET)
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise InvalidCursor(cursor) from None


def paginate(listing: list[dict[str, t.Any]], cursor: str | None, size: int | None) -> Page:
    """One page of *listing* from *cursor* (an offset into it).

    :raises InvalidCursor: when *cursor* is not one this server issued.
    """
    start = decode_cursor(cursor) if cursor is not None else 0
    if start > len(listing):
        raise InvalidCursor(cursor)
    if size is None:
        return Page(listing[start:], None)
    end = start + size
    return Page(listing[start:end], encode_cursor(end) if end < len(listing) else None)


class Registry:
    """Tools, static resources, resource templates and prompts, by name or URI.

    Registration order is listing order. Adding a component with a name (or
    URI) already taken raises :class:`ValueError`, so two view functions can
    never silently shadow each other.

    Components can be *hidden* (:meth:`hide`), or left out by their tags
    (:meth:`configure_tags`): they stay registered but are neither listed nor
    found, exactly as if they were not there. The tables (:attr:`tools`, ...)
    only ever hold what is served, decided when the registry changes.
    """

    def __init__(self) -> None:
        self.tools: dict[str, Tool] = {}
        self.resources: dict[str, Resource] = {}
        self.templates: dict[str, ResourceTemplate] = {}
        self.prompts: dict[str, Prompt] = {}
        self._listings: dict[Kind, list[dict[str, t.Any]]] = {}
        self._results: dict[tuple[Kind, int, int | None], jsonrpc.Encoded] = {}
        self._listeners: list[t.Callable[[Kind], None]] = []
        self._registration_listeners: list[t.Callable[[Kind], None]] = []
        self._guards: dict[Kind, tuple[int, bool, bool]] = {}
        self._hints: dict[Kind, tuple[int | None, bool, bool]] = {}
        #: Every registered component by kind and key, served or hidden, in registration order.
        self._all: dict[Kind, dict[str, t.Any]] = {"tools": {}, "resources": {}, "templates": {}, "prompts": {}}
        self._hidden: frozenset[tuple[Kind, str]] = frozenset()
        #: ``(include, exclude)`` tags, set by the first app (:meth:`configure_tags`).
        self._tag_filter: tuple[frozenset[str] | None, frozenset[str]] | None = None
        #: Set by the first app the extension is set up on.
        self._tool_defaults: ToolDefaults | None = None
        #: :attr:`Tool.completions` when the cached tool listings were made.
        self._completions = Tool.completions
        #: The served tools whose input schema may yet be completed (:meth:`Tool.complete`); ``None``: to be found.
        self._incomplete: list[Tool] | None = None

    def on_change(self, listener: t.Callable[[Kind], None]) -> None:
        """Call *listener* with the kind whenever what is served of it changes from now on.

        A registration, :meth:`hide`, :meth:`discard` or :meth:`configure_tags`.
        """
        self._listeners.append(listener)

    def on_register(self, listener: t.Callable[[Kind], None]) -> None:
        """Call *listener* with the kind of every component registered from now on."""
        self._registration_listeners.append(listener)

    def configure_tools(self, defaults: ToolDefaults) -> None:
        """Apply the server-wide tool defaults (``MCP_*`` keys) to every tool, now and later.

        Every app an extension is set up on shares its registry, so they
        must agree on these settings.

        :raises ~flask_mcp.ConfigurationError: a registered tool
            whose options contradict the settings.
        :raises RuntimeError: another app set different defaults.
        """
        if self._tool_defaults is not None and self._tool_defaults != defaults:
            raise RuntimeError(
                "apps sharing one MCP extension must agree on the tool settings (MCP_OUTPUT_FORMAT, "
                "MCP_INCLUDE_*, MCP_TOOL_TIMEOUT, ...); use one MCP per app to differ"
            )
        self._tool_defaults = defaults
        for tool in self.tools.values():
            tool.use_defaults(defaults)
            tool.resolved  # noqa: B018 - resolving raises for a conflict, at setup rather than on a call
        self._listings.pop("tools", None)
        self._results = {k: v for k, v in self._results.items() if k[0] != "tools"}

    def configure_tags(self, include: t.Iterable[str] | None, exclude: t.Iterable[str]) -> None:
        """Serve only components with an *include* tag (when given), and none with an *exclude* tag.

        :raises RuntimeError: another app sharing the registry set different tags.
        """
        tags = (None if not include else frozenset(include), frozenset(exclude))
        if self._tag_filter is not None and self._tag_filter != tags:
            raise RuntimeError(
                "apps sharing one MCP extension must agree on include_tags and exclude_tags (MCP_INCLUDE_TAGS, "
                "MCP_EXCLUDE_TAGS); use one MCP per app to differ"
            )
        if self._tag_filter is None:
            self._tag_filter = tags
            self.hide(self._hidden, force=True)

    def selected(self, component: t.Any) -> bool:
        """Whether *component*'s tags let it be served (``include_tags``, ``exclude_tags``)."""
        if self._tag_filter is None:
            return True
        include, exclude = self._tag_filter
        tags: frozenset[str] = component.tags
        return (include is None or not include.isdisjoint(tags)) and exclude.isdisjoint(tags)

    def add_tool(self, tool: Tool) -> None:
        """Register *tool* under its name."""
        if self._tool_defaults is not None:
            tool.use_defaults(self._tool_defaults)
            tool.resolved  # noqa: B018 - a conflict with the settings is refused at registration
        self._add("tools", self.tools, tool.name, tool)

    def add_resource(self, resource: Resource | ResourceTemplate) -> None:
        """Register a static resource by URI, or a template by its URI template."""
        if isinstance(resource, ResourceTemplate):
            self._add("templates", self.templates, resource.template.template, resource)
        else:
            self._add("resources", self.resources, resource.uri, resource)

    def add_prompt(self, prompt: Prompt) -> None:
        """Register *prompt* under its name."""
        self._add("prompts", self.prompts, prompt.name, prompt)

    def _add(self, kind: Kind, table: dict[str, t.Any], key: str, component: t.Any) -> None:
        registered = self._all[kind]
        if key in registered:
            raise ValueError(f"{kind[:-1]} {key!r} is already registered (by {registered[key].func.__qualname__})")
        registered[key] = component
        if self._serves(kind, key, component):
            table[key] = component
        self._changed(kind)
        for listener in self._registration_listeners:
            listener(kind)

    def _serves(self, kind: Kind, key: str, component: t.Any) -> bool:
        """Whether the registered *component* is served: not hidden, selected by its tags, and its tool served.

        A resource that follows a tool (an MCP App's view) is served only
        while that tool is: hidden, left out by its tags or removed with it.
        """
        if (kind, key) in self._hidden or not self.selected(component):
            return False
        follows = getattr(component, "follows_tool", None)
        return follows is None or follows in self.tools

    def _follow_tools(self) -> None:
        """Serve again exactly the resources whose tool is served, after the tools changed."""
        registered = self._all["resources"]
        if not any(getattr(c, "follows_tool", None) is not None for c in registered.values()):
            return
        served = {key: c for key, c in registered.items() if self._serves("resources", key, c)}
        if served.keys() != self.resources.keys():
            self.resources = served
            self._changed("resources")

    def replace(self, kind: Kind, removed: t.Iterable[str], added: t.Mapping[str, t.Any]) -> None:
        """Forget the components *removed* of *kind* and register *added* (by key), in one step.

        The table is replaced whole, so a request reading it in another
        thread finds every old component or every new one, never neither:
        a component both removed and added is served without a gap.

        :raises ValueError: a key of *added* is registered and not in *removed*; then nothing changes.
        """
        registered = self._all[kind]
        removed = set(removed)
        for key in added:
            if key in registered and key not in removed:
                raise ValueError(f"{kind[:-1]} {key!r} is already registered (by {registered[key].func.__qualname__})")
        kept = {key: c for key, c in registered.items() if key not in removed}
        self._all[kind] = {**kept, **added}
        setattr(self, kind, {key: c for key, c in self._all[kind].items() if self._serves(kind, key, c)})
        self._changed(kind)
        for listener in self._registration_listeners:
            listener(kind)

    def _complete_tools(self, kind: Kind) -> None:
        # Each tool whose schema may yet be completed (a route's URL variables, known late) tries
        # now, where the listing is asked for; if one was completed since the tool listings were
        # made, they are made again. What is served did not change, so nobody is notified.
        if kind != "tools":
            return
        if self._incomplete is None:
            self._incomplete = [tool for tool in self.tools.values() if tool.completion is not None]
        if self._incomplete:
            for tool in self._incomplete:
                tool.complete()
            self._incomplete = [tool for tool in self._incomplete if tool.completion is not None]
        if self._completions != Tool.completions:
            self._completions = Tool.completions
            self._listings.pop("tools", None)
            self._results = {k: v for k, v in self._results.items() if k[0] != "tools"}

    def _changed(self, kind: Kind) -> None:
        if kind == "tools":
            self._incomplete = None
        self._listings.pop(kind, None)
        self._results = {k: v for k, v in self._results.items() if k[0] != kind}
        self._guards.pop(kind, None)
        self._hints.pop(kind, None)
        for listener in self._listeners:
            listener(kind)
        if kind == "tools":
            self._follow_tools()

    def cache_hints(self, kind: Kind) -> tuple[int | None, bool, bool]:
        """What the served components of *kind* say about caching their listing.

        ``(shortest ttl set, whether every one sets a ttl, whether any is private)``,
        computed once per change of the kind.
        """
        found = self._hints.get(kind)
        if found is None:
            components = getattr(self, kind).values()
            ttls = [c.cache_ttl_ms for c in components if c.cache_ttl_ms is not None]
            private = any(c.cache_scope == "private" for c in components)
            found = self._hints[kind] = (min(ttls) if ttls else None, len(ttls) == len(components), private)
        return found

    def registered(self, kind: Kind) -> t.Mapping[str, t.Any]:
        """Every component of *kind*, hidden ones included."""
        return self._all[kind]

    def hide(self, hidden: t.Iterable[tuple[Kind, str]], *, force: bool = False) -> set[Kind]:
        """Serve every registered (and :meth:`selected`) component except *hidden*; return the kinds changed.

        The tables are replaced, not changed in place, so a request reading
        them in another thread sees either the old or the new set, whole.
        *force* rebuilds every table (the tag filter changed).
        """
        hidden = frozenset(hidden)
        changed = {kind for kind, _ in hidden.symmetric_difference(self._hidden)}
        if force:
            changed = set(self._all)
        self._hidden = hidden
        for kind in [kind for kind in self._all if kind in changed]:  # tools first: views follow them
            served = {key: c for key, c in self._all[kind].items() if self._serves(kind, key, c)}
            setattr(self, kind, served)
            self._changed(kind)
        return changed

    def discard(self, kind: Kind, key: str) -> None:
        """Forget the component *key* of *kind* altogether (it may be registered again).

        A tool's views (resources that follow it) go with it.
        """
        if self._all[kind].pop(key, None) is not None:
            setattr(self, kind, {k: c for k, c in getattr(self, kind).items() if k != key})
            if kind == "tools":
                followers = [k for k, c in self._all["resources"].items() if getattr(c, "follows_tool", None) == key]
                for follower in followers:
                    self.discard("resources", follower)
            self._changed(kind)

    def page(self, kind: Kind, cursor: str | None, size: int | None) -> Page:
        """Return one page of the *kind* listing.

        :raises InvalidCursor: when *cursor* is not one this server issued.
        """
        self._complete_tools(kind)
        listing = self._listings.get(kind)
        if listing is None:
            table: dict[str, t.Any] = getattr(self, kind)
            listing = self._listings[kind] = [component.descriptor for component in table.values()]
        return paginate(listing, cursor, size)

    def guarded(self, kind: Kind, defaults: bool) -> bool:
        """Whether a *kind* listing may differ between callers.

        True when a component has permissions of its own, or gives none
        while the server has default permissions (*defaults*). Filtered
        listings take the shared, cached path when it is false.
        """
        table: dict[str, t.Any] = getattr(self, kind)
        # Additions grow the table; anything else clears the cached answer (_changed).
        known = self._guards.get(kind)
        if known is None or known[0] != len(table):
            explicit = any(c.permissions for c in table.values())
            unset = any(c.permissions is None for c in table.values())
            known = self._guards[kind] = (len(table), explicit, unset)
        return known[1] or (defaults and known[2])

    def list_result(self, kind: Kind, cursor: str | None, size: int | None) -> jsonrpc.Encoded:
        """The ``*/list`` result object for one page, encoded once and then reused.

        :raises InvalidCursor: when *cursor* is not one this server issued.
        """
        start = decode_cursor(cursor) if cursor is not None else 0
        self._complete_tools(kind)
        cached = self._results.get((kind, start, size))
        if cached is None:
            page = self.page(kind, cursor, size)
            result: dict[str, t.Any] = {RESULT_KEYS[kind]: page.items}
            if page.next_cursor is not None:
                result["nextCursor"] = page.next_cursor
            cached = self._results[(kind, start, size)] = jsonrpc.Encoded(result, jsonrpc.dumps(result))
        return cached

    def find_resource(self, uri: str) -> tuple[Resource | ResourceTemplate, dict[str, str]] | None:
        """The static resource with *uri*, else the first template matching it, with its variables."""
        resource = self.resources.get(uri)
        if resource is not None:
            return resource, {}
        for template in self.templates.values():
            variables = template.template.match(uri)
            if variables is not None:
                return template, variables
        return None

    def has_completions(self) -> bool:
        """Whether any prompt argument or template variable can be completed."""
        return any(p.completers for p in self.prompts.values()) or any(r.completers for r in self.templates.values())
