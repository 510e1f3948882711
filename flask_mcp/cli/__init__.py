"""``flask mcp``: the command group the extension adds to every app it is set up on.

:mod:`~flask_mcp.cli.commands` holds the group and its commands;
:mod:`~flask_mcp.cli.client` talks to the protocol core without HTTP,
:mod:`~flask_mcp.cli.arguments` reads ``flask mcp call``'s arguments,
:mod:`~flask_mcp.cli.inspect`, :mod:`~flask_mcp.cli.install` (with the
clients it writes for, :mod:`~flask_mcp.cli.clients`),
:mod:`~flask_mcp.cli.prompt` and :mod:`~flask_mcp.cli.dev` are the
``inspect``, ``install``, ``prompt`` and ``dev`` commands,
:mod:`~flask_mcp.cli.protection` tells what a client needs to reach a
protected app, and :mod:`~flask_mcp.cli.output` draws results,
notifications, tables and warnings.
"""

from __future__ import annotations

from .commands import mcp_group

__all__ = ["mcp_group"]
