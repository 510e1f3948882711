"""Configuration prefixes: each MCP server of an app reads its own keys.

The default server reads ``MCP_*``. Another server on the same app, made with
``MCP(config_prefix="ADMIN_MCP")`` (or given only ``blueprint_name="admin"``,
from which the prefix is derived), reads ``ADMIN_MCP_URL_PREFIX``,
``ADMIN_MCP_AUTH_TOKENS``... with the same names after the prefix and the
same defaults, except the two that must differ between servers: its URL
(``/<blueprint name>``) and its store keys (``flask_mcp:<blueprint name>:``).
Nothing is inherited from the ``MCP_*`` keys: each server's settings are
whole, as each Flask-SQLAlchemy bind's are.

The settings code works with the canonical ``MCP_*`` names throughout; a
prefixed server's keys are read through :func:`canonical_view`.
"""

from __future__ import annotations

import re
import threading
import typing as t

__all__ = [
    "DEFAULT_PREFIX",
    "apply_defaults",
    "canonical_view",
    "check_prefix",
    "claim_prefix",
    "derived_prefix",
    "other_prefixes",
    "spelled",
]

#: The prefix of the default server's keys.
DEFAULT_PREFIX = "MCP"
_CANONICAL = DEFAULT_PREFIX + "_"
_PREFIX_FORM = re.compile(r"[A-Z][A-Z0-9_]*[A-Z0-9]")

# Prefixes of every MCP made in this process: the default server's check for
# unknown MCP_* keys must not mistake another server's MCP_ADMIN_* keys for
# typos. Names only, never per-request state.
_claimed: set[str] = set()
_lock = threading.Lock()


def check_prefix(prefix: str) -> str:
    """*prefix* when it is an upper-case config key prefix (``ADMIN_MCP``).

    :raises ValueError: anything else.
    """
    if not isinstance(prefix, str) or not _PREFIX_FORM.fullmatch(prefix):
        raise ValueError(f"config_prefix must be upper-case letters, digits and '_' (like 'ADMIN_MCP'), not {prefix!r}")
    return prefix


def claim_prefix(prefix: str) -> None:
    """Note that a server reads keys with *prefix*."""
    with _lock:
        _claimed.add(check_prefix(prefix))


def other_prefixes(prefix: str) -> tuple[str, ...]:
    """The prefixes other servers made in this process read, each with its ``_``."""
    with _lock:
        return tuple(f"{other}_" for other in _claimed if other != prefix)


def spelled(key: str, prefix: str) -> str:
    """The canonical key *key* (``MCP_URL_PREFIX``) as a server with *prefix* spells it."""
    return key if prefix == DEFAULT_PREFIX else f"{prefix}_{key[len(_CANONICAL) :]}"


def derived_prefix(blueprint_name: str) -> str | None:
    """The prefix a further server named *blueprint_name* reads when given none: ``admin`` and ``admin_mcp``
    read ``ADMIN_MCP_*``; ``None`` when no valid prefix comes of the name (``2fa``).
    """
    words = re.sub(r"[^A-Z0-9]+", "_", blueprint_name.upper()).strip("_")
    # Ending in MCP keeps a server's keys apart from the app's own (ADMIN_MCP_*, not ADMIN_*).
    prefix = words if words == DEFAULT_PREFIX or words.endswith("_" + DEFAULT_PREFIX) else f"{words}_{DEFAULT_PREFIX}"
    return prefix if _PREFIX_FORM.fullmatch(prefix) else None


def own_defaults(prefix: str, server_name: str) -> dict[str, t.Any]:
    """The defaults that differ for a server with a prefix of its own: its URL and its store keys."""
    if prefix == DEFAULT_PREFIX:
        return {}
    return {"MCP_URL_PREFIX": f"/{server_name}", "MCP_CACHE_KEY_PREFIX": f"flask_mcp:{server_name}:"}


def apply_defaults(
    config: t.MutableMapping[str, t.Any], prefix: str, defaults: t.Mapping[str, t.Any], server_name: str
) -> None:
    """Fill in *config*'s missing keys of the server with *prefix*, as it spells them.

    ``init_app`` does this so ``app.config`` shows what is in force.
    """
    overrides = own_defaults(prefix, server_name)
    for key, value in defaults.items():
        config.setdefault(spelled(key, prefix), overrides.get(key, value))


def canonical_view(config: t.Mapping[str, t.Any], prefix: str) -> t.Mapping[str, t.Any]:
    """*config* as the server with *prefix* sees it: its keys under their canonical ``MCP_*`` names.

    The default server sees the config itself. Another one sees its own
    keys renamed, and every key that is no server's setting (``SECRET_KEY``,
    ``CACHE_*``), but not the default server's ``MCP_*`` keys.
    """
    if prefix == DEFAULT_PREFIX:
        return config
    own = f"{prefix}_"
    view = {key: value for key, value in config.items() if not key.startswith(_CANONICAL) and not key.startswith(own)}
    view.update({_CANONICAL + key[len(own) :]: value for key, value in config.items() if key.startswith(own)})
    return view
