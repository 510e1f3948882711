"""The Flask binding of :class:`~flask_mcp.MCP`: what ``init_app`` builds on an app, and the parts that act through it.

:mod:`~flask_mcp.binding.state` builds an app's :class:`~flask_mcp.binding.state.MCPState`
(its protocol server, stores, auth gate and settings),
:mod:`~flask_mcp.binding.caches` its flask-caching caches and
:mod:`~flask_mcp.binding.servers` keeps several servers of one app apart.
:mod:`~flask_mcp.binding.hook_decorators`, :mod:`~flask_mcp.binding.composition`
and :mod:`~flask_mcp.binding.runtime_changes` are the hook decorators,
``mount`` and the run-time changes of the extension object.
"""
