"""The clients ``flask mcp install`` writes for, and the server entry each one reads.

Each client has its own file, layout and way of referring to an environment
variable (:data:`CLIENTS`), as its documentation gives them:

* Claude Desktop: ``mcpServers`` in ``claude_desktop_config.json``; it
  launches commands only (an HTTP server goes through the ``mcp-remote``
  bridge), expands no variables in its file, and starts a server with a few
  of its own variables only (``HOME``, ``PATH``, ``USER``...), so an entry
  cannot refer to one of yours;
* Cursor: ``mcpServers`` in ``~/.cursor/mcp.json``, ``${env:NAME}`` expanded
  in ``command``, ``args``, ``env``, ``url`` and ``headers``;
* VS Code: ``servers`` in ``.vscode/mcp.json``, typed entries,
  ``${env:NAME}`` among its configuration variables;
* Claude Code: typed ``mcpServers`` entries in the project's ``.mcp.json``,
  ``${NAME}`` expanded in ``command``, ``args``, ``env``, ``url`` and ``headers``;
  or the ``claude mcp add`` command line;
* ``print``: the common ``mcpServers`` layout, ``${NAME}`` for a variable
  (the form most clients that expand variables read).
"""

from __future__ import annotations

import dataclasses
import os
import re
import shlex
import sys
import typing as t
from pathlib import Path
from urllib.parse import urlsplit

from ..auth.local import TOKEN_ENV

__all__ = ["CLIENTS", "ENV_NAME", "Client", "claude_code_command", "server_entry"]

#: What an environment variable's name may be, for a reference to it in a client's file.
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _claude_desktop_file() -> Path:
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / "Claude" / "claude_desktop_config.json"
    if sys.platform == "win32":
        appdata = os.environ.get("APPDATA") or str(Path.home() / "AppData" / "Roaming")
        return Path(appdata) / "Claude" / "claude_desktop_config.json"
    return Path.home() / ".config" / "Claude" / "claude_desktop_config.json"


@dataclasses.dataclass(frozen=True)
class Client:
    """How one client configures MCP servers."""

    #: What the client is called in messages.
    title: str
    #: The member of the file that maps server names to entries.
    key: str
    #: The file ``--write`` merges into, when ``--config-file`` names none.
    file: t.Callable[[], Path] | None
    #: Whether entries name their transport (``"type": "stdio"`` / ``"http"``).
    typed: bool = False
    #: Whether the client's file holds stdio entries only (HTTP goes through the mcp-remote bridge).
    stdio_only: bool = False
    #: How the client's file refers to the environment variable ``{name}``;
    #: ``None``: it expands none.
    env_reference: str | None = "${{{name}}}"

    def reference(self, name: str) -> str:
        """The text of this client's file that stands for the environment variable *name*.

        :raises ValueError: the client expands no variables, or *name* is not a variable's name.
        """
        if self.env_reference is None:
            raise ValueError(f"{self.title} expands no environment variables in its configuration")
        if ENV_NAME.fullmatch(name) is None:
            raise ValueError(f"{name!r} is not an environment variable's name (letters, digits and _)")
        return self.env_reference.format(name=name)


#: The clients ``install`` knows; ``print`` is the common ``mcpServers`` layout.
CLIENTS: dict[str, Client] = {
    "claude-desktop": Client("Claude Desktop", "mcpServers", _claude_desktop_file, stdio_only=True, env_reference=None),
    "cursor": Client(
        "Cursor", "mcpServers", lambda: Path.home() / ".cursor" / "mcp.json", env_reference="${{env:{name}}}"
    ),
    "vscode": Client(
        "VS Code",
        "servers",
        lambda: Path.cwd() / ".vscode" / "mcp.json",
        typed=True,
        env_reference="${{env:{name}}}",
    ),
    "claude-code": Client("Claude Code", "mcpServers", lambda: Path.cwd() / ".mcp.json", typed=True),
    "print": Client("your client", "mcpServers", None),
}


def server_entry(
    client: Client, *, app_arg: str | None = None, url: str | None = None, token: str | None, env: dict[str, str]
) -> dict[str, t.Any]:
    """The server entry of *client*: launching ``flask mcp stdio`` (*app_arg*), or reaching *url*.

    :param token: what the entry gives as the token: the token itself, or a
        reference to the variable holding it (:meth:`Client.reference`).
    """
    if url is None:
        entry: dict[str, t.Any] = {"type": "stdio"} if client.typed else {}
        entry["command"] = os.path.abspath(sys.executable)  # not resolved: a venv's python is a symlink
        entry["args"] = ["-m", "flask", "--app", t.cast(str, app_arg), "mcp", "stdio"]
        environment = {**env, **({TOKEN_ENV: token} if token else {})}
        if environment:
            entry["env"] = environment
        return entry
    if client.stdio_only:
        # Claude Desktop's file launches commands only; mcp-remote bridges stdio to HTTP.
        args = ["-y", "mcp-remote", url]
        parts = urlsplit(url)
        if parts.scheme == "http" and parts.hostname not in ("localhost", "127.0.0.1", "::1"):
            args.append("--allow-http")
        entry = {"command": "npx", "args": args}
        if token:
            # No space in the argument: some clients split arguments on spaces (mcp-remote's advice).
            args += ["--header", "Authorization:${AUTH_HEADER}"]
            entry["env"] = {"AUTH_HEADER": f"Bearer {token}"}
        return entry
    entry = {"type": "http"} if client.typed else {}
    entry["url"] = url
    if token:
        entry["headers"] = {"Authorization": f"Bearer {token}"}
    return entry


def claude_code_command(name: str, entry: dict[str, t.Any], *, project: bool = False) -> str:
    """The ``claude mcp add`` command line that adds *entry* (a typed entry) to Claude Code.

    :param project: add it to the project's ``.mcp.json`` (``--scope project``),
        where Claude Code expands ``${NAME}`` references.
    """
    words = ["claude", "mcp", "add", *(["--scope", "project"] if project else [])]
    if entry["type"] == "http":
        words += ["--transport", "http", name, entry["url"]]
        for header, value in entry.get("headers", {}).items():
            words += ["--header", f"{header}: {value}"]
        return shlex.join(words)
    words += ["--transport", "stdio", name]
    for key, value in entry.get("env", {}).items():
        words += ["--env", f"{key}={value}"]
    # "--" ends claude's options (--env takes several values): the rest is the command.
    return shlex.join([*words, "--", entry["command"], *entry["args"]])
