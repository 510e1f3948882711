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

``--token-env NAME`` writes a reference to the variable ``NAME`` in the
client's own syntax (:mod:`flask_mcp.cli.clients`), never the token: the
client reads the variable when it starts the server. An app that requires a
token, given none, gets a warning saying what to pass, or that the client
signs in by itself (:mod:`flask_mcp.cli.protection`).

Each client has its own file and layout (:data:`~flask_mcp.cli.clients.CLIENTS`).
``--write`` merges the entry into that file (``--config-file`` names another),
keeping the other servers and the previous file as ``<file>.bak``.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
import tempfile
import typing as t
from pathlib import Path

import click
from flask import current_app
from flask.cli import ScriptInfo, with_appcontext

from ..globals import state_of
from . import output
from .client import caller
from .clients import CLIENTS, Client, claude_code_command, server_entry
from .protection import Protection, protection_of

if t.TYPE_CHECKING:
    from flask import Flask

__all__ = ["app_argument", "install_command", "merge_into"]


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


def _reference(client: Client, name: str) -> str:
    """The reference to the variable *name* in *client*'s file, or a usage error saying why there is none."""
    try:
        return client.reference(name)
    except ValueError as exc:
        if client.env_reference is not None:
            raise click.BadParameter(str(exc), param_hint="--token-env") from None
        raise click.BadParameter(
            f"{exc}, and starts a server with a few of its own variables only (HOME, PATH, USER...): "
            f"a reference to ${name} would reach the server empty. Give the token with --token "
            "(the file then holds it, readable by you only), or install for a client that expands "
            "variables (cursor, vscode, claude-code)",
            param_hint="--token-env",
        ) from None


def _check_stdio_token(app: Flask, token: str | None, token_env: str | None) -> None:
    """Refuse now a token the app would refuse when the client starts the server."""
    value = token if token is not None else (os.environ.get(token_env) if token_env is not None else None)
    if value:
        caller(app, value)
    elif token_env is not None and state_of(app).auth is None:
        raise click.ClickException("the app has no authentication configured (MCP_AUTH_*): it takes no token")


def _advise_without_token(client_name: str, client: Client, protection: Protection, stdio: bool) -> None:
    """Say what an entry without a token needs for an app that requires one."""
    how = "Pass --token-env VAR (the entry then refers to the variable holding the token) or --token TOKEN"
    if stdio:
        if protection.local_principal:
            return  # the launched process serves MCP_LOCAL_PRINCIPAL
        signing_in = (
            f" Stdio has no OAuth sign-in: to let {client.title} sign in through the app's authorization "
            "server, run the app and install with --url."
            if protection.oauth
            else ""
        )
        output.warn(
            "this app requires a bearer token, and the entry gives none: the server it launches serves "
            f"no caller, so every call its permissions protect is refused. {how}, or set "
            f"MCP_LOCAL_PRINCIPAL for a trusted local process.{signing_in}"
        )
        return
    servers = ", ".join(protection.authorization_servers)
    if not protection.oauth:
        output.warn(
            f"this app requires a bearer token, and the entry sends none: {client.title} will be refused "
            f"(401) on every request. {how}."
        )
    elif client_name == "print":
        output.advise(
            f"this app signs clients in with OAuth ({servers}): a client that supports MCP's OAuth sign-in "
            f"needs no token. For another, {how[0].lower()}{how[1:]}."
        )
    else:
        bridge = " (through mcp-remote)" if client.stdio_only else ""
        output.advise(
            f"this app signs clients in with OAuth ({servers}): {client.title}{bridge} opens a browser to "
            "sign in the first time it connects, so the entry needs no token. For a fixed token instead, "
            "pass --token-env VAR."
        )


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
    help="The caller's token, written as is: FLASK_MCP_TOKEN of the stdio entry, or a Bearer header.",
)
@click.option(
    "--token-env",
    default=None,
    metavar="VAR",
    help="Write a reference to the environment variable VAR instead of a token; the client reads it at start.",
)
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
    common mcpServers layout). With --token-env VAR the entry refers to the
    variable in the client's syntax (${env:VAR}, ${VAR}) and never holds the
    token. Output holding a token (--token) is printed as is, with a warning
    on stderr; an app that requires a token, given none, gets a warning
    saying what to pass.
    """
    app: Flask = current_app._get_current_object()  # type: ignore[attr-defined]
    client = CLIENTS[client_name]
    if token is not None and token_env is not None:
        raise click.UsageError("give --token or --token-env, not both")
    if token is not None and not token.strip():
        raise click.BadParameter("an empty token", param_hint="--token")
    env = _pairs(env_pairs)
    if url is not None and env:
        raise click.UsageError("--env sets the environment of a launched command: it does not apply to --url")
    # What the entry holds: the token itself, or a reference the client expands.
    written = _reference(client, token_env) if token_env is not None else token
    app_arg = None
    if url is None:
        app_arg = app_argument(app, app_path or _import_path(ctx))
        _check_stdio_token(app, token, token_env)  # a refused token stops here, not in the client at start
    name = name or state_of(app).server.name
    entry = server_entry(client, app_arg=app_arg, url=url, token=written, env=env)
    secret = token is not None
    if write:
        path = config_file or (client.file() if client.file is not None else None)
        if path is None:
            raise click.UsageError("print has no file of its own: give --config-file, or name a client")
        replaced = merge_into(path, client.key, name, entry, secret)
        click.echo(f"{'Replaced' if replaced else 'Added'} the server {name!r} in {path}")
        if secret:
            output.warn(f"{path} holds the token in clear text; keep it out of version control.")
    else:
        if client_name == "claude-code":
            # Claude Code expands ${VAR} in the project's .mcp.json: a reference goes there.
            click.echo(claude_code_command(name, entry, project=token_env is not None))
        else:
            click.echo(json.dumps({client.key: {name: entry}}, indent=2, ensure_ascii=False))
            if client.file is not None:
                output.advise(f"merge it into {client.file()}, or run again with --write.")
        if secret:
            output.warn("the output above holds the token in clear text; keep it private.")
    if token_env is not None:
        if client_name == "print":
            output.advise(
                f"the entry refers to ${token_env} as {written}: check that your client expands environment "
                "variables in its configuration (Cursor and VS Code write ${env:NAME}: install for them by name)."
            )
        if not os.environ.get(token_env):
            output.advise(f"{token_env} is not set here: {client.title} must find it in its environment at start.")
    elif token is None:
        protection = protection_of(app)
        if protection.token_required:
            _advise_without_token(client_name, client, protection, stdio=url is None)
