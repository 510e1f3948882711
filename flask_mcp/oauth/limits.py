"""Rate limits of the token, registration and revocation endpoints, answered ``429`` with ``Retry-After``.

Two budgets, counted in the cache the app already has (Redis when it is
shared, so every worker and host counts together):

- **failures per address** (``MCP_OAUTH_RATE_LIMIT_FAILURES``, 30 a minute):
  every refused request (a client that failed to authenticate, an invalid
  grant or code, malformed input) spends one. Once spent, the address's
  next requests are refused before any work is done, the right credentials
  included, so guessing secrets or codes from one address stops early;
- **successes per client** (``MCP_OAUTH_RATE_LIMIT_CLIENT``, 300 a minute):
  only tokens issued count, under the client that got them (which proved who
  it is to get one), so nobody can spend another client's budget by naming
  it. Revocation is not counted: it answers 200 to any public client's id.

Registrations have their own budget per address
(``MCP_OAUTH_REGISTRATION_RATE_LIMIT``), counted before the request.
"""

from __future__ import annotations

import math
import typing as t

from authlib.oauth2.rfc6749.util import extract_basic_authorization
from flask import Request, Response

from ..policies.ratelimit import Limit, RateLimiter

__all__ = ["EndpointLimits", "client_id_of", "retry_after"]


class Limiter(RateLimiter, t.Protocol):
    """A rate limiter that can also tell whether a budget is spent without counting."""

    def spent(self, key: str, limit: Limit) -> float | None:
        """``None`` while *key* may still call, else seconds until it may."""
        ...


def client_id_of(request: Request) -> str | None:
    """The client a token, registration or revocation request names (form or HTTP Basic), unchecked."""
    try:
        # Authlib's own reading of the header, as its client authentication does.
        user, _ = extract_basic_authorization(request.headers)
    except (UnicodeDecodeError, ValueError):
        # An undecodable or blank header (Authlib splits it unchecked): the form may still name the client.
        user = None
    return t.cast("str | None", user or request.form.get("client_id") or None)


class EndpointLimits:
    """The budgets of one authorization server's endpoints.

    :param limiter: counts in the app's cache (the MCP server's limiter) or in this process.
    :param failures: refused requests per client address (``None``: unlimited).
    :param per_client: successful requests per client (``None``: unlimited).
    :param registrations: registrations per client address (``None``: unlimited).
    """

    def __init__(
        self, limiter: Limiter, failures: Limit | None, per_client: Limit | None, registrations: Limit | None
    ) -> None:
        self.limiter = limiter
        self.failures = failures
        self.per_client = per_client
        self.registrations = registrations

    def refusal(self, request: Request, endpoint: str) -> tuple[float, str] | None:
        """Before the work: ``(seconds, why)`` when the request must wait, else ``None``.

        A registration spends its address's registration budget here.
        """
        address = request.remote_addr or "unknown"
        if self.failures is not None:
            wait = self.limiter.spent(f"oauth-failures:{address}", self.failures)
            if wait is not None:
                return wait, "too many refused requests from this address"
        if endpoint == "register":
            if self.registrations is not None:
                wait = self.limiter.hit(f"oauth-register:{address}", self.registrations)
                if wait is not None:
                    return wait, "too many registrations from this address"
            return None
        client_id = client_id_of(request)
        if self.per_client is not None and client_id is not None:
            wait = self.limiter.spent(f"oauth-client:{client_id[:256]}", self.per_client)
            if wait is not None:
                return wait, "too many requests from this client"
        return None

    def count(self, request: Request, endpoint: str, response: Response) -> None:
        """After the work: a refused request spends its address's failures, a success its client's budget."""
        status = response.status_code
        if status == 429:
            return
        if status >= 400 and self.failures is not None:
            self.limiter.hit(f"oauth-failures:{request.remote_addr or 'unknown'}", self.failures)
        elif status < 300 and endpoint == "token" and self.per_client is not None:
            # Only a token answer proves the client is who it says (a secret, a code with its PKCE
            # verifier, a refresh token): revocation answers 200 whatever a public client's id sends.
            client_id = client_id_of(request)
            if client_id is not None:
                self.limiter.hit(f"oauth-client:{client_id[:256]}", self.per_client)


def retry_after(wait: float) -> str:
    """The ``Retry-After`` value for *wait* seconds: whole seconds, at least 1."""
    return str(max(1, math.ceil(wait)))
