"""``flask mcp oauth``: the operator's side of the authorization server.

::

    flask --app app.py mcp oauth add-client "nightly report" --scope notes:read
    flask --app app.py mcp oauth remove-client CLIENT_ID
    flask --app app.py mcp oauth prune            # for cron; the server also sweeps by itself

A client made here is the only kind that may act for itself
(``client_credentials``): no user signs in for it, so an operator stands
behind it instead, and it gets at most the scopes given here.
"""

from __future__ import annotations

import dataclasses
import secrets
import typing as t

import click
from flask import current_app
from flask.cli import AppGroup

from .pruning import prune
from .redirects import redirect_problem
from .tokens import STATE_KEY

if t.TYPE_CHECKING:
    from .server import OAuthState

__all__ = ["oauth_group"]

#: The grants an operator's client may be given.
GRANTS = ("client_credentials", "authorization_code", "refresh_token")


def _state() -> OAuthState:
    state = current_app.extensions.get(STATE_KEY)
    if state is None:
        raise click.ClickException("this app has no OAuthServer")
    return t.cast("OAuthState", state)


@click.group("oauth", cls=AppGroup)
def oauth_group() -> None:
    """Manage the app's OAuth authorization server: operator-made clients, pruning."""


@oauth_group.command("add-client")
@click.argument("name")
@click.option("--scope", "scopes", multiple=True, required=True, help="A scope it may be granted (repeat).")
@click.option(
    "--grant",
    "grants",
    multiple=True,
    type=click.Choice(GRANTS),
    default=("client_credentials",),
    show_default=True,
    help="A grant it may use (repeat).",
)
@click.option("--redirect-uri", "redirect_uris", multiple=True, help="For authorization_code: where answers go.")
def add_client_command(
    name: str, scopes: tuple[str, ...], grants: tuple[str, ...], redirect_uris: tuple[str, ...]
) -> None:
    """Make a confidential client NAME; print its id and secret, once.

    The secret is stored only as a digest: keep it now. The client may be
    granted the given scopes and no others.
    """
    state = _state()
    unknown = sorted(set(scopes) - set(state.scopes.supported()))
    if unknown:
        raise click.BadParameter(
            f"not a scope of this server: {', '.join(unknown)} (known: {', '.join(state.scopes.supported())})",
            param_hint="--scope",
        )
    if "authorization_code" in grants and not redirect_uris:
        raise click.BadParameter("authorization_code needs at least one --redirect-uri", param_hint="--redirect-uri")
    for uri in redirect_uris:
        problem = redirect_problem(uri)
        if problem is not None:
            raise click.BadParameter(f"{uri}: {problem}", param_hint="--redirect-uri")
    # Hex, so that the id never starts with "-": remove-client takes it as an argument, not an option.
    client_id, secret = secrets.token_hex(24), secrets.token_urlsafe(48)
    metadata = {
        "client_name": name,
        "grant_types": list(dict.fromkeys(grants)),
        "response_types": ["code"] if "authorization_code" in grants else [],
        "redirect_uris": list(redirect_uris),
        "scope": " ".join(dict.fromkeys(scopes)),
        "token_endpoint_auth_method": "client_secret_basic",
    }
    state.store.add_client(client_id, secret, metadata, origin="operator")
    click.echo(f"client_id: {client_id}")
    click.echo(f"client_secret: {secret}")


@oauth_group.command("remove-client")
@click.argument("client_id")
def remove_client_command(client_id: str) -> None:
    """Delete the client CLIENT_ID and revoke every token it holds."""
    if not _state().store.remove_client(client_id):
        raise click.ClickException(f"no client {client_id!r}")
    click.echo(f"removed {client_id}")


@oauth_group.command("prune")
def prune_command() -> None:
    """Delete expired codes and tokens, spent token families, dangling consents and unused registrations."""
    state = _state()
    settings = state.settings
    total = None
    while True:
        report = prune(state.store, unused_client_ttl=settings.unused_client_ttl, batch=settings.prune_batch)
        total = report if total is None else total + report
        if not report.full(settings.prune_batch):
            break
    for field, count in dataclasses.asdict(total).items():
        click.echo(f"{field.replace('_', ' ')}: {count}")
