"""The ``MCP_*`` configuration: every key with its default, and the settings an app's server reads from them.

:mod:`~flask_mcp.config.defaults` lists the keys and their defaults,
:mod:`~flask_mcp.config.settings` reads them into
:class:`~flask_mcp.config.settings.Settings` (and warns of unknown or late
keys), :mod:`~flask_mcp.config.values` reads and checks one value, and
:mod:`~flask_mcp.config.prefix` gives each server of an app keys of its own
(``config_prefix``), and :mod:`~flask_mcp.config.redis_options` the Redis
client's timeouts and retries when the app gives none. It sits below everything that reads settings: it
imports only the protocol and policy layers.
"""

from __future__ import annotations

from .settings import (
    DEFAULTS,
    LateSettingWarning,
    ProcessLocalSessionsWarning,
    Settings,
    UnknownSettingWarning,
    changed_settings,
)

__all__ = [
    "DEFAULTS",
    "LateSettingWarning",
    "ProcessLocalSessionsWarning",
    "Settings",
    "UnknownSettingWarning",
    "changed_settings",
]
