"""Registering many tools at once, with shared defaults.

::

    mcp.register_tools(
        [
            ToolDefinition.tool(create_invoice, name="invoices.create", atomic=True),
            ToolDefinition.tool(void_invoice, name="invoices.void"),
            ToolDefinition.list(list_invoices, name="invoices.list", item_schema=InvoiceSchema),
        ],
        defaults={"error_format": "json", "timeout": 10},
    )

A definition's own values win over the defaults; ``None`` on either side
means "no value here". Each definition goes through the ordinary decorator
(:meth:`MCP.tool <flask_mcp.MCP.tool>`, :meth:`~flask_mcp.MCP.list_tool`,
:meth:`~flask_mcp.MCP.retrieve_tool`), so every check of a single
registration applies.
"""

from __future__ import annotations

import dataclasses
import typing as t

__all__ = ["ToolDefinition", "ToolRegistrar", "register_tools"]

Kind = t.Literal["tool", "list", "retrieve"]


@dataclasses.dataclass(frozen=True)
class ToolDefinition:
    """One tool to register: the function, which decorator, and its keywords."""

    func: t.Callable[..., t.Any]
    #: Keywords of the decorator; ``None`` values are "no override".
    options: t.Mapping[str, t.Any] = dataclasses.field(default_factory=dict)
    #: ``"tool"``, ``"list"`` (:meth:`~flask_mcp.MCP.list_tool`) or ``"retrieve"``.
    kind: Kind = "tool"

    @classmethod
    def tool(cls, func: t.Callable[..., t.Any], **options: t.Any) -> ToolDefinition:
        """A definition registered with :meth:`MCP.tool <flask_mcp.MCP.tool>`."""
        return cls(func, options, "tool")

    @classmethod
    def list(cls, func: t.Callable[..., t.Any], **options: t.Any) -> ToolDefinition:
        """A definition registered with :meth:`~flask_mcp.MCP.list_tool`."""
        return cls(func, options, "list")

    @classmethod
    def retrieve(cls, func: t.Callable[..., t.Any], **options: t.Any) -> ToolDefinition:
        """A definition registered with :meth:`~flask_mcp.MCP.retrieve_tool`."""
        return cls(func, options, "retrieve")


class ToolRegistrar(t.Protocol):
    """What :func:`register_tools` registers on: an :class:`~flask_mcp.MCP` (its three decorators)."""

    def tool(self, *args: t.Any, **kwargs: t.Any) -> t.Any:
        """:meth:`MCP.tool <flask_mcp.MCP.tool>`."""
        ...

    def list_tool(self, *args: t.Any, **kwargs: t.Any) -> t.Any:
        """:meth:`MCP.list_tool <flask_mcp.MCP.list_tool>`."""
        ...

    def retrieve_tool(self, *args: t.Any, **kwargs: t.Any) -> t.Any:
        """:meth:`MCP.retrieve_tool <flask_mcp.MCP.retrieve_tool>`."""
        ...


def _set(options: t.Mapping[str, t.Any] | None) -> dict[str, t.Any]:
    return {key: value for key, value in (options or {}).items() if value is not None}


def register_tools(
    mcp: ToolRegistrar,
    definitions: t.Iterable[ToolDefinition],
    *,
    defaults: t.Mapping[str, t.Any] | None = None,
    list_defaults: t.Mapping[str, t.Any] | None = None,
    retrieve_defaults: t.Mapping[str, t.Any] | None = None,
) -> None:
    """Register every definition on *mcp*, filling in defaults.

    :param defaults: keywords for every definition.
    :param list_defaults: more keywords for ``list`` definitions (over *defaults*).
    :param retrieve_defaults: more keywords for ``retrieve`` definitions.
    :raises TypeError, ValueError: from the failing definition's registration,
        with its name; definitions before it stay registered.
    """
    per_kind: dict[Kind, dict[str, t.Any]] = {
        "tool": {},
        "list": _set(list_defaults),
        "retrieve": _set(retrieve_defaults),
    }
    decorators: dict[Kind, t.Callable[..., t.Callable[[t.Any], t.Any]]] = {
        "tool": mcp.tool,
        "list": mcp.list_tool,
        "retrieve": mcp.retrieve_tool,
    }
    for definition in definitions:
        options = {**_set(defaults), **per_kind[definition.kind], **_set(definition.options)}
        try:
            decorators[definition.kind](**options)(definition.func)
        except (TypeError, ValueError) as exc:
            name = options.get("name") or getattr(definition.func, "__name__", repr(definition.func))
            raise type(exc)(f"registering tool {name!r}: {exc}") from exc
