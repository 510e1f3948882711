"""The scopes the authorization server grants: the ones the tools' permissions ask for.

A scope a permission names (``ScopeRequired("notes:write")``) is a scope a
client may be granted; ``MCP_OAUTH_SCOPES`` (or ``OAuthServer(scopes=...)``)
adds scopes and gives each the description the consent page shows.
"""

from __future__ import annotations

import typing as t

if t.TYPE_CHECKING:
    from ..extension import MCP

__all__ = ["ScopeCatalog"]


class ScopeCatalog:
    """Which scopes exist, and what each one lets a client do.

    :param mcp: the server whose permissions name scopes.
    :param descriptions: ``{scope: description}``; these scopes exist even if no permission names them.
    :param also: other scopes that exist (``MCP_AUTH_SCOPES_SUPPORTED``, ``MCP_AUTH_REQUIRED_SCOPES``).
    """

    def __init__(self, mcp: MCP, descriptions: t.Mapping[str, str], also: t.Iterable[str] = ()) -> None:
        self.mcp = mcp
        self.descriptions = dict(descriptions)
        self.also = tuple(also)

    def from_permissions(self) -> set[str]:
        """The scopes named by the permissions of every registered component (and the server's defaults)."""
        registry = self.mcp.registry
        found: set[str] = set()
        permission_sets = [self.mcp.default_permissions]
        for table in (registry.tools, registry.resources, registry.templates, registry.prompts):
            for component in table.values():
                if component.permissions is not None:
                    permission_sets.append(component.permissions)
        for permissions in permission_sets:
            for permission in permissions:
                found.update(str(scope) for scope in permission.required_scopes())
        return found

    def supported(self) -> list[str]:
        """Every scope, sorted: what the metadata publishes and what a client may ask for."""
        return sorted(self.from_permissions() | set(self.descriptions) | set(self.also))

    def describe(self, scope: str) -> str:
        """What *scope* lets a client do, for the consent page (the scope itself when undescribed)."""
        return self.descriptions.get(scope) or f"Use the tools that need {scope}"
