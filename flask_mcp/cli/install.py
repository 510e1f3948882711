"""``flask mcp install CLIENT``: the entry a desktop or editor client needs to reach this app.

::

    flask --app app.py mcp install claude-desktop            # print the entry
    flask --app app.py mcp install cursor --write            # merge it into ~/.cursor/mcp.json
    flask --app app.py mcp install vscode --url http://127.0.0.1:5000/mcp --token-env SHOP_TOKEN
    flask --app app.py mcp install claude-code               # the `claude mcp add` command line

Without ``--url`` the entry launches ``flask mcp stdio`` with the absolute
paths of this Python interpreter (so its virtualenv) and of the app, so the
client can start it from any directory; a token goes into the entry's
environment as ``FLASK_MCP_TOKEN``. With ``--url`` the entry points at the
running HTTP endpoint, a token going into an ``Authorization`` header.

Each client has its own file and layout (:data:`CLIENTS`). ``--write``
merges the entry into that file (``--config-file`` names another), keeping
the other servers and the previous file as ``<file>.bak``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import re
import shlex
import sys
import tempfile
import typing as t
from pathlib import Path
from urllib.parse import urlsplit

import click
from flask import current_app
from flask.cli import ScriptInfo, with_appcontext

from ..auth.local import TOKEN_ENV
from ..globals import state_of
from .client import caller

if t.TYPE_CHECKING:
    from flask import Flask

__all__ = ["CLIENTS", "Client", "app_argument", "install_command", "server_entry"]


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

    #: The member of the file that maps server names to entries.
    key: str
    #: The file ``--write`` merges into, when ``--config-file`` names none.
    file: t.Callable[[], Path] | None
    #: Whether entries name their transport (``"type": "stdio"`` / ``"http"``).
    typed: bool = False
    #: Whether the client's file holds stdio entries only (HTTP goes through the mcp-remote bridge).
    stdio_only: bool = False


#: The clients ``install`` knows; ``print`` is the common ``mcpServers`` layout.
CLIENTS: dict[str, Client] = {
    "claude-desktop": Client("mcpServers", _claude_desktop_file, stdio_only=True),
    "cursor": Client("mcpServers", lambda: Path.home() / ".cursor" / "mcp.json"),
    "vscode": Client("servers", lambda: Path.cwd() / ".vscode" / "mcp.json", typed=True),
    "claude-code": Client("mcpServers", lambda: Path.cwd() / ".mcp.json", typed=True),
    "print": Client("mcpServers", None),
}


def _importable(target: str) -> str:
    """*target* (a file or a module of ``--app``) in a form that imports from any directory.

    A file becomes absolute; a module that the current directory made
    importable becomes its absolute file; an installed module stays a name.
    """
    if target.endswith(".py") or "/" in target or os.sep in target:
        return os.path.abspath(target)
    path = getattr(sys.modules.get(target), "__file__", None)
    if path is not None and Path(path).resolve().is_relative_to(Path.cwd().resolve()):
        return str(Path(path).resolve())
    return target


def app_argument(app: Flask, import_path: str | None) -> str:
    """The ``--app`` value of the launched command: *import_path* (as ``flask --app`` was given) made absolute.

    Without one (the app was found as ``app.py`` or ``wsgi.py``, or made by a
    test runner), the module of ``app.import_name`` and the global holding
    the app, or the module alone when it has a ``create_app``/``make_app``
    factory.

    :raises click.UsageError: when neither says where the app comes from.
    """
    if import_path:
        module, *attribute = re.split(r":(?![\\/])", import_path, maxsplit=1)
        return _importable(module) + "".join(f":{name}" for name in attribute)
    module_object = sys.modules.get(app.import_name)
    if getattr(module_object, "__file__", None) is not None:
        found = next((name for name, value in vars(module_object).items() if value is app), None)
        if found is not None:
            return f"{_importable(app.import_name)}:{found}"
        if any(callable(getattr(module_object, name, None)) for name in ("create_app", "make_app")):
            return _importable(app.import_name)
    raise click.UsageError("cannot tell how to import the app: give its import path with --app (as to flask --app)")


def server_entry(
    client: Client, *, app_arg: str | None = None, url: str | None = None, token: str | None, env: dict[str, str]
) -> dict[str, t.Any]:
    """The server entry of *client*: launching ``flask mcp stdio`` (*app_arg*), or reaching *url*."""
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


def claude_code_command(name: str, entry: dict[str, t.Any]) -> str:
    """The ``claude mcp add`` command line that adds *entry* (a typed entry) to Claude Code."""
    if entry["type"] == "http":
        words = ["claude", "mcp", "add", "--transport", "http", name, entry["url"]]
        for header, value in entry.get("headers", {}).items():
            words += ["--header", f"{header}: {value}"]
        return shlex.join(words)
    words = ["claude", "mcp", "add", "--transport", "stdio", name]
    for key, value in entry.get("env", {}).items():
        words += ["--env", f"{key}={value}"]
    # "--" ends claude's options (--env takes several values): the rest is the command.
    return shlex.join([*words, "--", entry["command"], *entry["args"]])


def merge_into(path: Path, key: str, name: str, entry: dict[str, t.Any], secret: bool) -> bool:
    """Set ``file[key][name] = entry`` in the JSON file *path*, keeping everything else.

    The previous file is copied to ``<path>.bak``, readable by its owner only
    (it may hold another entry's token). A file that will hold a *secret* is
    written anew, created readable by its owner only, and moved over the old
    one: an existing file's wider mode is never kept, and the token is never
    readable by others, not even for a moment.

    :returns: whether an entry of that name was replaced.
    :raises click.ClickException: a file that is not a JSON object.
    """
    document: dict[str, t.Any] = {}
    if path.exists():
        text = path.read_text(encoding="utf-8")
        try:
            document = json.loads(text) if text.strip() else {}
        except ValueError as exc:
            raise click.ClickException(
                f"{path} is not plain JSON ({exc}); add the entry by hand (run without --write to print it)"
            ) from None
        if not isinstance(document, dict) or not isinstance(document.get(key, {}), dict):
            raise click.ClickException(f"{path} does not hold a JSON object with a {key!r} object")
        _write_private(path.with_name(path.name + ".bak"), text)
    servers = document.setdefault(key, {})
    replaced = name in servers
    servers[name] = entry
    path.parent.mkdir(parents=True, exist_ok=True)
    content = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    if secret:
        _write_private(path, content)
    else:
        # In place: the file keeps the mode its owner gave it.
        with open(path, "w", encoding="utf-8") as file:
            file.write(content)
    return replaced


def _write_private(path: Path, text: str) -> None:
    """Write *text* to *path* as a new file only its owner can read.

    ``mkstemp`` creates the file with mode 0600 (whatever the umask), and
    ``os.replace`` puts it in place of any older file, whose mode is not
    kept: at no moment is the text in a file others can read.
    """
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            file.write(text)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def _pairs(values: tuple[str, ...]) -> dict[str, str]:
    pairs: dict[str, str] = {}
    for value in values:
        key, sep, text = value.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"{value!r} is not KEY=VALUE", param_hint="--env")
        pairs[key] = text
    return pairs


def _import_path(ctx: click.Context) -> str | None:
    """What ``flask --app`` (or ``FLASK_APP``) was given, if anything."""
    info = ctx.find_object(ScriptInfo)
    return info.app_import_path if info is not None else None


def _token(token: str | None, token_env: str | None) -> str | None:
    if token is not None and token_env is not None:
        raise click.UsageError("give --token or --token-env, not both")
    if token_env is None:
        return token
    value = os.environ.get(token_env)
    if not value:
        raise click.BadParameter(f"the environment variable {token_env} is not set", param_hint="--token-env")
    return value


@click.command("install", short_help="Print or write a client's entry for this server.")
@with_appcontext
@click.argument("client_name", metavar="CLIENT", type=click.Choice(list(CLIENTS)))
@click.option("--name", default=None, help="The server's name in the client (default: the MCP server's name).")
@click.option(
    "--url",
    default=None,
    metavar="URL",
    help="Reach the running HTTP endpoint (e.g. http://127.0.0.1:5000/mcp) instead of launching stdio.",
)
@click.option(
    "--token",
    default=None,
    metavar="TOKEN",
    help="The caller's token: FLASK_MCP_TOKEN of the stdio entry, or a Bearer header.",
)
@click.option("--token-env", default=None, metavar="VAR", help="Read the token from this environment variable instead.")
@click.option(
    "--env",
    "env_pairs",
    multiple=True,
    metavar="KEY=VALUE",
    help="An environment variable of the launched command (repeatable).",
)
@click.option(
    "--app",
    "app_path",
    default=None,
    metavar="IMPORT",
    help="The app's import path in the entry (default: the one flask was given, made absolute).",
)
@click.option(
    "--write",
    is_flag=True,
    help="Merge the entry into the client's file instead of printing it (the old file is kept as .bak).",
)
@click.option(
    "--config-file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="The file --write merges into, instead of the client's own.",
)
@click.pass_context
def install_command(
    ctx: click.Context,
    client_name: str,
    name: str | None,
    url: str | None,
    token: str | None,
    token_env: str | None,
    env_pairs: tuple[str, ...],
    app_path: str | None,
    write: bool,
    config_file: Path | None,
) -> None:
    """Print the entry CLIENT needs to use this server, or merge it into the client's file.

    CLIENT is claude-desktop, cursor, vscode (.vscode/mcp.json), claude-code
    (a `claude mcp add` command line; .mcp.json with --write) or print (the
    common mcpServers layout). Output holding a token is printed as is, with
    a warning on stderr.
    """
    app: Flask = current_app._get_current_object()  # type: ignore[attr-defined]
    client = CLIENTS[client_name]
    secret = _token(token, token_env)
    env = _pairs(env_pairs)
    if url is not None and env:
        raise click.UsageError("--env sets the environment of a launched command: it does not apply to --url")
    app_arg = None
    if url is None:
        app_arg = app_argument(app, app_path or _import_path(ctx))
        if secret:
            caller(app, secret)  # a refused token stops here, not in the client at start
    name = name or state_of(app).server.name
    entry = server_entry(client, app_arg=app_arg, url=url, token=secret, env=env)
    if write:
        path = config_file or (client.file() if client.file is not None else None)
        if path is None:
            raise click.UsageError("print has no file of its own: give --config-file, or name a client")
        replaced = merge_into(path, client.key, name, entry, bool(secret))
        click.echo(f"{'Replaced' if replaced else 'Added'} the server {name!r} in {path}")
        if secret:
            click.echo(f"Warning: {path} holds the token in clear text; keep it out of version control.", err=True)
        return
    if client_name == "claude-code":
        click.echo(claude_code_command(name, entry))
    else:
        click.echo(json.dumps({client.key: {name: entry}}, indent=2, ensure_ascii=False))
        if client.file is not None:
            click.echo(f"Merge it into {client.file()}, or run again with --write.", err=True)
    if secret:
        click.echo("Warning: the output above holds the token in clear text; keep it private.", err=True)
