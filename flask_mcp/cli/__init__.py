"""``flask mcp``: the command group the extension adds to every app it is set up on.

:mod:`~flask_mcp.cli.commands` holds the group and its commands;
:mod:`~flask_mcp.cli.client` talks to the protocol core without HTTP,
:mod:`~flask_mcp.cli.arguments` reads ``flask mcp call``'s arguments,
:mod:`~flask_mcp.cli.inspect` and :mod:`~flask_mcp.cli.install` are the
``inspect`` and ``install`` commands, and :mod:`~flask_mcp.cli.output` draws
results, notifications and tables.
"""

from __future__ import annotations

from .commands import mcp_group

__all__ = ["mcp_group"]
