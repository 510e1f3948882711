"""Who may use a tool, resource or prompt.

A component's ``permissions=[...]`` (or the server's ``default_permissions``
when it gives none) are checked by the protocol core before the arguments
are validated and the handler runs, for ``tools/call``, ``resources/read``,
``prompts/get`` and ``completion/complete``. Every permission must allow the
call (they are AND-combined); a denial is the JSON-RPC error
:data:`~flask_mcp.protocol.jsonrpc.PERMISSION_DENIED` with the scopes that would
allow it in ``data.requiredScopes``.

A permission is any object with ``has_permission(context) -> bool`` and
``required_scopes() -> list[str]`` (:class:`Permission`); a plain callable
``f(context) -> bool`` is wrapped by :func:`permission`, and a permission
class that takes no arguments (:class:`Authenticated`) may be given as the
class itself.
"""

from __future__ import annotations

import dataclasses
import typing as t
import warnings

from ..protocol.jsonrpc import PERMISSION_DENIED, MCPError
from .principal import Principal

__all__ = [
    "Authenticated",
    "CallablePermission",
    "GuardedComponent",
    "Permission",
    "PermissionContext",
    "PermissionLike",
    "ScopeRequired",
    "UnprotectedToolError",
    "UnprotectedToolWarning",
    "check_permissions",
    "check_protected",
    "denied_by",
    "normalize_permissions",
    "permission",
]


class GuardedComponent(t.Protocol):
    """What every guarded component has: a :class:`~flask_mcp.components.model.Tool`, a
    :class:`~flask_mcp.components.model.Resource`, a
    :class:`~flask_mcp.components.model.ResourceTemplate` or a
    :class:`~flask_mcp.components.model.Prompt` (narrow with ``isinstance`` for the rest).
    """

    @property
    def name(self) -> str:
        """The component's name."""
        ...

    @property
    def title(self) -> str | None:
        """Its human-readable title."""
        ...

    @property
    def description(self) -> str | None:
        """Its description."""
        ...

    @property
    def meta(self) -> dict[str, t.Any] | None:
        """Its ``_meta``."""
        ...

    @property
    def func(self) -> t.Callable[..., t.Any]:
        """The function it runs."""
        ...

    @property
    def permissions(self) -> tuple[Permission, ...] | None:
        """Its own ``permissions=`` (``None``: it gave none)."""
        ...


#: What a permission is checked for.
ComponentKind = t.Literal["tool", "resource", "prompt"]


@dataclasses.dataclass(frozen=True)
class PermissionContext:
    """What a permission looks at to decide."""

    #: The authenticated caller; ``None`` without an auth backend or for an anonymous caller.
    principal: Principal | None
    #: The :class:`~flask_mcp.components.model.Tool`, resource, resource template or prompt.
    component: GuardedComponent
    #: ``"tool"``, ``"resource"`` (static or template) or ``"prompt"``.
    kind: ComponentKind
    #: The call's arguments (tool arguments, prompt arguments, template
    #: variables) before validation; ``None`` when filtering a listing.
    arguments: t.Mapping[str, t.Any] | None = None


@t.runtime_checkable
class Permission(t.Protocol):
    """A rule that allows or denies one use of a component."""

    def has_permission(self, context: PermissionContext) -> bool:
        """Whether the call described by *context* is allowed."""
        ...

    def required_scopes(self) -> list[str]:
        """Scopes that would satisfy this rule, reported to a denied caller (may be empty)."""
        ...


#: What ``permissions=[...]`` accepts: a permission, a permission class
#: taking no arguments, or a callable ``f(context) -> bool``.
PermissionLike = t.Union[Permission, type, t.Callable[[PermissionContext], bool]]


class ScopeRequired:
    """Allow callers whose principal was granted every one of *scopes*.

    :param scopes: scope names, or one scope as a string.
    """

    def __init__(self, scopes: str | t.Iterable[str]) -> None:
        self.scopes: tuple[str, ...] = (scopes,) if isinstance(scopes, str) else tuple(scopes)
        if not self.scopes:
            raise ValueError("ScopeRequired needs at least one scope")

    def has_permission(self, context: PermissionContext) -> bool:
        """Whether the principal holds every scope; never for an anonymous caller."""
        return context.principal is not None and context.principal.has_scopes(self.scopes)

    def required_scopes(self) -> list[str]:
        """The scopes given."""
        return list(self.scopes)

    def __repr__(self) -> str:
        return f"ScopeRequired({list(self.scopes)!r})"


class Authenticated:
    """Allow any authenticated caller (a principal is present).

    Usable as the class (``permissions=[Authenticated]``) or an instance.
    The protocol core answers an anonymous caller with the same
    :data:`~flask_mcp.protocol.jsonrpc.PERMISSION_DENIED` error as any denial: a 401
    comes from the transport's auth backend, before the core runs.
    """

    def has_permission(self, context: PermissionContext) -> bool:
        """Whether there is a principal."""
        return context.principal is not None

    def required_scopes(self) -> list[str]:
        """None: any credential will do."""
        return []

    def __repr__(self) -> str:
        return "Authenticated()"


class CallablePermission:
    """A function ``f(context) -> bool`` as a :class:`Permission`.

    :param func: decides for each call.
    :param scopes: what :meth:`required_scopes` reports when it denies.
    """

    def __init__(self, func: t.Callable[[PermissionContext], bool], scopes: t.Iterable[str] = ()) -> None:
        self.func = func
        self.scopes = tuple(scopes)

    def has_permission(self, context: PermissionContext) -> bool:
        """What the function answers, as a ``bool``."""
        return bool(self.func(context))

    def required_scopes(self) -> list[str]:
        """The scopes given, if any."""
        return list(self.scopes)

    def __repr__(self) -> str:
        return f"permission({getattr(self.func, '__qualname__', self.func)!r})"


@t.overload
def permission(func: t.Callable[[PermissionContext], bool], /) -> CallablePermission: ...


@t.overload
def permission(
    func: None = None, /, *, scopes: t.Iterable[str] = ()
) -> t.Callable[[t.Callable[[PermissionContext], bool]], CallablePermission]: ...


def permission(
    func: t.Callable[[PermissionContext], bool] | None = None, /, *, scopes: t.Iterable[str] = ()
) -> CallablePermission | t.Callable[[t.Callable[[PermissionContext], bool]], CallablePermission]:
    """Turn ``f(context) -> bool`` into a permission; usable as a decorator.

    ::

        @permission(scopes=["orders:admin"])
        def owns_order(context):
            return context.arguments and context.arguments.get("owner") == context.principal.subject

    Plain callables in ``permissions=[...]`` are wrapped this way
    automatically; the decorator only adds the *scopes* to report.
    """
    if func is not None:
        return CallablePermission(func, scopes)
    return lambda f: CallablePermission(f, scopes)


def _as_permission(item: t.Any) -> Permission:
    if isinstance(item, type):
        try:
            item = item()
        except TypeError:
            raise TypeError(f"permission class {item.__name__} needs arguments: pass an instance") from None
    if isinstance(item, Permission):
        return item
    if callable(item):
        return CallablePermission(item)
    raise TypeError(
        f"not a permission: {item!r} (give an object with has_permission() and required_scopes(), "
        "or a callable f(context) -> bool)"
    )


def normalize_permissions(
    permissions: t.Iterable[PermissionLike] | PermissionLike | None,
) -> tuple[Permission, ...] | None:
    """The permissions as a tuple of :class:`Permission` objects.

    ``None`` (nothing given) stays ``None`` so the server's defaults apply;
    an empty list is ``()``: explicitly public, defaults or not.

    :raises TypeError: for anything that is not a permission; a bare string
        is refused (use ``ScopeRequired("scope")``).
    """
    if permissions is None:
        return None
    if isinstance(permissions, str):
        raise TypeError(f"permissions={permissions!r}: a scope name needs ScopeRequired([{permissions!r}])")
    if isinstance(permissions, (type, Permission)) or not isinstance(permissions, t.Iterable):
        return (_as_permission(permissions),)
    return tuple(_as_permission(item) for item in permissions)


def denied_by(permissions: t.Sequence[Permission], context: PermissionContext) -> list[Permission]:
    """The permissions among *permissions* that deny *context* (empty: allowed)."""
    return [rule for rule in permissions if not rule.has_permission(context)]


def _component_label(context: PermissionContext) -> str:
    component: t.Any = context.component
    if context.kind == "resource":
        template = getattr(component, "template", None)
        return f"resource {template.template if template is not None else component.uri}"
    return f"{context.kind} {component.name}"


def check_permissions(permissions: t.Sequence[Permission], context: PermissionContext) -> None:
    """Raise unless every permission allows *context*.

    :raises MCPError: :data:`~flask_mcp.protocol.jsonrpc.PERMISSION_DENIED`, with the
        union of the denying permissions' ``required_scopes()`` (in order,
        without repeats) as ``data.requiredScopes``.
    """
    denied = denied_by(permissions, context)
    if not denied:
        return
    scopes = list(dict.fromkeys(scope for rule in denied for scope in rule.required_scopes()))
    if scopes:
        reason = f"requires scope(s) {', '.join(scopes)}"
    elif context.principal is None:
        reason = "requires an authenticated caller"
    else:
        reason = "not allowed for this caller"
    raise MCPError(
        PERMISSION_DENIED, f"Permission denied: {_component_label(context)} {reason}", {"requiredScopes": scopes}
    )


class UnprotectedToolWarning(UserWarning):
    """A tool was registered without permissions while authentication is configured.

    Give it ``permissions=[...]`` (``permissions=[]`` to make it public on
    purpose), set ``MCP(default_permissions=[...])``, or make this an error
    with ``MCP_REQUIRE_PERMISSIONS = True``.
    """


class UnprotectedToolError(RuntimeError):
    """A tool without permissions under ``MCP_REQUIRE_PERMISSIONS = True``."""


def check_protected(tools: t.Iterable[GuardedComponent], defaults: t.Sequence[Permission], *, strict: bool) -> None:
    """Warn about (or, when *strict*, refuse) tools that anyone may call.

    Called when authentication is configured. A tool is unprotected when it
    gave no ``permissions=`` and the server has no ``default_permissions``;
    ``permissions=[]`` says "public" on purpose and passes.

    :raises UnprotectedToolError: when *strict*, naming the tools.
    """
    if defaults:
        return
    names = [tool.name for tool in tools if tool.permissions is None]
    if not names:
        return
    message = (
        f"tool(s) {', '.join(names)} have no permissions while authentication is configured: any authenticated "
        "caller may call them. Give permissions=[...] (permissions=[] to make a tool public on purpose) "
        "or MCP(default_permissions=[...])"
    )
    if strict:
        raise UnprotectedToolError(message + "; MCP_REQUIRE_PERMISSIONS is set")
    warnings.warn(message, UnprotectedToolWarning, stacklevel=4)
