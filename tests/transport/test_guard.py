"""Origin and Host checks against DNS rebinding: the helpers and the endpoint."""

from __future__ import annotations

import typing as t

import pytest
from flask import Flask

from flask_mcp import MCP
from flask_mcp.transport.guard import RequestGuard, host_allowed, origin_allowed, rejection, split_host

INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "guard", "version": "1"}},
}
ACCEPT = {"Accept": "application/json, text/event-stream"}
OWN = "https://api.example.com"


# -- split_host -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("example.com", "example.com"),
        ("Example.COM:8080", "example.com"),
        (" localhost:5000 ", "localhost"),
        ("127.0.0.1:5000", "127.0.0.1"),
        ("127.0.0.1", "127.0.0.1"),
        ("[::1]:8000", "::1"),
        ("[::1]", "::1"),
        ("::1", "::1"),
        ("[2001:DB8::1]:443", "2001:db8::1"),
        ("", ""),
    ],
)
def test_split_host(value: str, expected: str) -> None:
    """Port and IPv6 brackets are dropped; the name is lower-cased."""
    assert split_host(value) == expected


# -- origin_allowed -------------------------------------------------------------


@pytest.mark.parametrize(
    "origin",
    ["http://localhost", "http://localhost:3000", "https://localhost:8443", "http://127.0.0.1:6274",
     "http://[::1]:8080", "http://[::1]", "HTTP://LOCALHOST:1"],
)  # fmt: skip
def test_loopback_origins_on_any_port_are_allowed(origin: str) -> None:
    """A loopback origin is allowed whatever the server's own origin."""
    assert origin_allowed(origin, OWN, ())


@pytest.mark.parametrize(
    "origin",
    [
        "http://evil.example",
        "https://evil.example:443",
        "http://localhost.evil.example",
        "http://127.0.0.1.evil.example",
        "http://localhost@evil.example",
        "http://evil.example#@localhost",
        "null",
        "",
        "file://localhost",
        "ftp://127.0.0.1",
        "http://api.example.com",
        "https://api.example.com:8443",
        "https://sub.api.example.com",
    ],
)
def test_foreign_origins_are_refused(origin: str) -> None:
    """Anything that is neither loopback nor the server's own origin is refused by default."""
    assert not origin_allowed(origin, OWN, ())


@pytest.mark.parametrize("origin", [OWN, "HTTPS://API.EXAMPLE.COM"])
def test_own_origin_is_allowed(origin: str) -> None:
    """The server's own scheme://host[:port], compared case-insensitively."""
    assert origin_allowed(origin, OWN, ())


@pytest.mark.parametrize(
    ("origin", "allowed", "expected"),
    [
        ("https://app.example.org", ["https://app.example.org"], True),
        ("https://app.example.org", ["https://App.Example.org"], True),
        ("https://app.example.org:8443", ["https://app.example.org"], False),
        ("http://app.example.org", ["https://app.example.org"], False),
        ("https://a.example.com", ["https://*.example.com"], True),
        ("https://a.b.example.com", ["https://*.example.com"], True),
        ("https://example.com", ["https://*.example.com"], False),
        ("http://a.example.com", ["https://*.example.com"], False),
        ("https://a.example.com.evil.net", ["https://*.example.com"], False),
        ("https://evilexample.com", ["https://*.example.com"], False),
        ("https://anything.invalid", ["*"], True),
        ("null", ["*"], True),
        ("https://b.example.org", ["https://a.example.org", "https://b.example.org"], True),
        ("https://c.example.org", ["https://a.example.org", "https://b.example.org"], False),
    ],
)
def test_configured_origins(origin: str, allowed: list[str], expected: bool) -> None:
    """Configured origins match exactly or as fnmatch patterns; "*" allows all."""
    assert origin_allowed(origin, OWN, allowed) is expected


# -- host_allowed ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("host", "server_name", "allowed", "expected"),
    [
        ("localhost:5000", "127.0.0.1", None, True),
        ("127.0.0.1:5000", "127.0.0.1", None, True),
        ("[::1]:5000", "::1", None, True),
        ("LOCALHOST", "localhost", None, True),
        ("evil.example", "127.0.0.1", None, False),
        ("evil.example:5000", "localhost", None, False),
        ("evil.example", "::1", None, False),
        ("evil.example", "[::1]", None, False),
        ("evil.example", "api.example.com", None, True),
        ("localhost", "api.example.com", None, True),
        ("api.example.com:443", "127.0.0.1", ["api.example.com"], True),
        ("API.Example.com", "api.example.com", ["api.example.com"], True),
        ("localhost", "127.0.0.1", ["api.example.com"], False),
        ("other.example.com", "other.example.com", ["api.example.com"], False),
        ("x.example.com:8000", "127.0.0.1", ["*.example.com"], True),
        ("example.com", "127.0.0.1", ["*.example.com"], False),
        ("[::1]:8000", "127.0.0.1", ["[::1]"], True),
        ("anything.invalid", "127.0.0.1", ["*"], True),
        ("evil.example", "127.0.0.1", [], False),
    ],
)
def test_host_allowed(host: str, server_name: str, allowed: list[str] | None, expected: bool) -> None:
    """Loopback servers refuse foreign names; a configured list is exclusive."""
    assert host_allowed(host, server_name, allowed) is expected


# -- over HTTP ------------------------------------------------------------------


def post_init(app: Flask, headers: dict[str, str] | None = None, **open_kwargs: t.Any) -> t.Any:
    """POST initialize with extra headers and test-client options."""
    return app.test_client().post("/mcp", json=INIT, headers={**ACCEPT, **(headers or {})}, **open_kwargs)


def assert_forbidden(response: t.Any, schema_checker: t.Any) -> None:
    assert response.status_code == 403, response.get_data(as_text=True)
    assert response.mimetype == "application/json"
    body = response.get_json()
    schema_checker.check_envelope(None, body)
    assert "Mcp-Session-Id" not in response.headers


def assert_served(response: t.Any) -> None:
    assert response.status_code == 200, response.get_data(as_text=True)
    assert "result" in response.get_json()
    assert response.headers.get("Mcp-Session-Id")


@pytest.fixture
def app(mcp: MCP, make_app: t.Callable[..., Flask]) -> Flask:
    return make_app(mcp)


@pytest.mark.parametrize(
    "origin", ["http://evil.example", "https://evil.example:8443", "null", "http://localhost.evil.example"]
)
def test_foreign_origin_is_403(app: Flask, schema_checker: t.Any, origin: str) -> None:
    """A request from a foreign page is refused before it is read."""
    assert_forbidden(post_init(app, {"Origin": origin}), schema_checker)


def test_foreign_origin_cannot_delete_session(app: Flask, schema_checker: t.Any) -> None:
    """DELETE is guarded too: the session outlives the attempt."""
    session_id = post_init(app).headers["Mcp-Session-Id"]
    headers = {**ACCEPT, "Mcp-Session-Id": session_id}
    client = app.test_client()
    assert_forbidden(client.delete("/mcp", headers={**headers, "Origin": "http://evil.example"}), schema_checker)
    ping = client.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, headers=headers)
    assert ping.status_code == 200
    assert client.delete("/mcp", headers=headers).status_code == 204


@pytest.mark.parametrize(
    "origin",
    [
        "http://localhost",
        "http://localhost:6274",
        "http://127.0.0.1:3000",
        "http://[::1]:8080",
        "https://localhost:443",
    ],
)
def test_loopback_origin_is_served(app: Flask, origin: str) -> None:
    """Local tools (inspectors, desktop apps) on any port may call a local server."""
    assert_served(post_init(app, {"Origin": origin}))


@pytest.mark.parametrize(
    ("base_url", "origin", "served"),
    [
        ("https://api.example.com", "https://api.example.com", True),
        ("http://api.example.com:8000", "http://api.example.com:8000", True),
        ("https://api.example.com", "http://api.example.com", False),
        ("https://api.example.com", "https://api.example.com:8443", False),
        ("https://api.example.com", "https://www.example.com", False),
    ],
)
def test_own_origin(app: Flask, schema_checker: t.Any, base_url: str, origin: str, served: bool) -> None:
    """A page of the server's own origin (scheme, host and port) may call it."""
    response = post_init(app, {"Origin": origin}, base_url=base_url)
    if served:
        assert_served(response)
    else:
        assert_forbidden(response, schema_checker)


@pytest.mark.parametrize(
    "setting",
    [("https://app.example.org", "https://*.trusted.dev"), ["https://app.example.org", "https://*.trusted.dev"],
     "https://app.example.org, https://*.trusted.dev"],
    ids=["tuple", "list", "comma-string"],
)  # fmt: skip
@pytest.mark.parametrize(
    ("origin", "served"),
    [("https://app.example.org", True), ("https://x.trusted.dev", True), ("https://trusted.dev", False),
     ("https://other.example.org", False), ("http://localhost:3000", True)],
)  # fmt: skip
def test_allowed_origins_setting(
    mcp: MCP, make_app: t.Callable[..., Flask], schema_checker: t.Any, setting: t.Any, origin: str, served: bool
) -> None:
    """MCP_ALLOWED_ORIGINS adds origins (exact or patterns) to the defaults."""
    response = post_init(make_app(mcp, MCP_ALLOWED_ORIGINS=setting), {"Origin": origin})
    if served:
        assert_served(response)
    else:
        assert_forbidden(response, schema_checker)


def test_star_allows_every_origin(mcp: MCP, make_app: t.Callable[..., Flask]) -> None:
    """MCP_ALLOWED_ORIGINS = "*" turns the origin check off."""
    assert_served(post_init(make_app(mcp, MCP_ALLOWED_ORIGINS="*"), {"Origin": "http://evil.example"}))


@pytest.mark.parametrize("server_name", ["localhost", "127.0.0.1", "::1"])
@pytest.mark.parametrize("host", ["evil.example", "evil.example:8000", "localhost.evil.example"])
def test_rebound_host_on_loopback_server_is_403(app: Flask, schema_checker: t.Any, server_name: str, host: str) -> None:
    """A loopback server refuses a foreign Host name (DNS rebinding)."""
    response = post_init(app, {"Host": host}, environ_overrides={"SERVER_NAME": server_name})
    assert response.request.host == host
    assert_forbidden(response, schema_checker)


@pytest.mark.parametrize("server_name", ["localhost", "127.0.0.1", "::1"])
@pytest.mark.parametrize("host", ["localhost:5000", "127.0.0.1:5000", "[::1]:5000", "localhost"])
def test_loopback_host_on_loopback_server_is_served(app: Flask, server_name: str, host: str) -> None:
    """Loopback names reach a loopback server."""
    assert_served(post_init(app, {"Host": host}, environ_overrides={"SERVER_NAME": server_name}))


@pytest.mark.parametrize(
    ("host", "served"),
    [("mcp.example.com", True), ("MCP.example.com:8443", True), ("node1.internal.example", True),
     ("localhost", False), ("127.0.0.1:5000", False), ("evil.example", False), ("example.com", False)],
)  # fmt: skip
def test_allowed_hosts_setting_is_exclusive(
    mcp: MCP, make_app: t.Callable[..., Flask], schema_checker: t.Any, host: str, served: bool
) -> None:
    """With MCP_ALLOWED_HOSTS only the listed names pass, loopback included."""
    app = make_app(mcp, MCP_ALLOWED_HOSTS=["mcp.example.com", "*.internal.example"])
    response = post_init(app, {"Host": host})
    if served:
        assert_served(response)
    else:
        assert_forbidden(response, schema_checker)


@pytest.mark.parametrize("host", ["evil.example", "api.example.com:8443", "localhost"])
def test_non_loopback_server_accepts_any_host(app: Flask, host: str) -> None:
    """A server behind a public name leaves Host checks to the proxy by default."""
    response = post_init(app, {"Host": host}, environ_overrides={"SERVER_NAME": "api.example.com"})
    assert response.request.host == host
    assert_served(response)


# -- hostile values: parsed strictly, refused whole ---------------------------------

HOSTILE_HOSTS = [
    "localhost:80@evil.example",  # userinfo-looking tail: the old split kept "localhost"
    "localhost@evil.example",
    "evil.example#localhost",
    "localhost/evil",
    "localhost:80:80",
    "localhost:",
    "localhost:99999",
    "localhost:8o",
    "localhost:²",
    "localhost:\uff11\uff12",  # full-width digits
    "localhost:" + "9" * 6,
    "localhost:65536",
    "localhost:+80",
    "localhost:\u0668\u0660",  # Arabic-Indic 80, which int() reads
    "[::1",
    "[::1]x",
    "[::1]:",
    "[::1]80",
    "[evil.example]",
    "[fe80::1%25eth0]",
    "local host",
    "lócalhost",
    "localhost%2e",
    "xn--.example",
    "-localhost",
    "localhost.",
    "",
    "a" * 400,
    ".",
    "..",
]


@pytest.mark.parametrize("host", HOSTILE_HOSTS)
def test_hostile_host_values_never_pass(host: str) -> None:
    """Whatever the configuration, a Host that is not ``host[:port]`` is refused, never split or trimmed."""
    assert not host_allowed(host, "127.0.0.1", None)
    assert not host_allowed(host, "10.0.0.5", None)
    assert not host_allowed(host, "127.0.0.1", ["localhost", "*.example", "*"])


HOSTILE_ORIGINS = [
    "http://[::1]x",
    "http://[::1",
    "http://[evil.example]",
    "http://localhost:80@evil.example",
    "http://user@localhost",
    "http://localhost/",
    "http://localhost/path",
    "http://localhost?x",
    "http://localhost#x",
    "http://localhost\\@evil.example",
    "http://localhost:99999",
    "http://localhost:²",
    "http://lócalhost",
    "http:/localhost",
    "//localhost",
    "localhost",
    "http://",
    "http://127.0.0.1.",
    "http://" + "a" * 400,
]


@pytest.mark.parametrize("origin", HOSTILE_ORIGINS)
def test_hostile_origins_never_pass(origin: str) -> None:
    """Not an exact ``scheme://host[:port]``: refused even where ``*`` allows every origin."""
    assert not origin_allowed(origin, "http://localhost:5000", ())
    assert not origin_allowed(origin, "http://localhost:5000", ["*", "http://*.localhost", "http://localhost:*"])


@pytest.mark.parametrize(
    ("origin", "pattern", "expected"),
    [
        ("https://a.example.com", "https://*.example.com", True),
        ("https://a.b.example.com", "https://*.example.com", True),
        ("https://example.com", "https://*.example.com", False),
        ("https://evil.com/.example.com", "https://*.example.com", False),  # "*" never spans "/"
        ("https://evil.com:1@a.example.com", "https://*.example.com", False),
        ("https://a.example.com:8443", "https://*.example.com", False),  # the default port only
        ("https://a.example.com:8443", "https://*.example.com:8443", True),
        ("http://app.test:3000", "http://app.test:*", True),
        ("http://app.test", "http://app.test:*", True),
        ("https://app.test:3000", "http://app.test:*", False),
        ("https://app.example.com", "https://app.example.com:443", True),
        ("https://app.example.com:443", "https://app.example.com", True),
        ("https://app.example.com", "https://app.example.com/", False),  # a malformed pattern allows nothing
        ("https://xexample.com", "https://*example.com", False),
    ],
)
def test_origin_patterns_match_whole_labels(origin: str, pattern: str, expected: bool) -> None:
    assert origin_allowed(origin, OWN, [pattern]) is expected


@pytest.mark.parametrize(
    ("host", "pattern", "expected"),
    [
        ("api.internal.example.com", "*.internal.example.com", True),
        ("internal.example.com", "*.internal.example.com", False),
        ("evil.com", "*.internal.example.com", False),
        ("mcp.example.com:8443", "mcp.example.com", True),  # a pattern names hosts; ports are not checked
        ("[::1]:80", "[::1]", True),
        ("localhost", "*", True),
    ],
)
def test_host_patterns_match_whole_labels(host: str, pattern: str, expected: bool) -> None:
    assert host_allowed(host, "10.0.0.5", [pattern]) is expected


@pytest.mark.parametrize("host", ["localhost:80@evil.example", "[::1]x", "localhost:99999"])
@pytest.mark.parametrize("path", ["/mcp", "/mcp/rest/tools/add", "/mcp/rest/openapi.json"])
def test_hostile_hosts_get_a_json_403_everywhere(
    mcp: MCP, make_app: t.Callable[..., Flask], host: str, path: str
) -> None:
    @mcp.tool
    def add(a: int, b: int) -> int:
        return a + b

    app = make_app(mcp)
    response = app.test_client().post(
        path, json={}, headers={**ACCEPT, "Host": host}, environ_overrides={"SERVER_NAME": "127.0.0.1"}
    )
    assert response.status_code == 403 and response.mimetype == "application/json"
    assert "not allowed" in response.get_data(as_text=True)


@pytest.mark.parametrize("origin", ["http://[::1", "http://[evil.example]", "http://[::1]x"])
@pytest.mark.parametrize("path", ["/mcp", "/mcp/rest/tools/add"])
def test_unparseable_origins_get_a_json_403_not_a_500(
    mcp: MCP, make_app: t.Callable[..., Flask], origin: str, path: str
) -> None:
    app = make_app(mcp)
    response = app.test_client().post(path, json={}, headers={**ACCEPT, "Origin": origin})
    assert response.status_code == 403 and response.mimetype == "application/json"


GUARD_CASES = [
    # (Host, Origin, server name, scheme), allowed hosts, allowed origins
    (("localhost:5000", None, "127.0.0.1", "http"), None, ()),
    (("evil.example", None, "127.0.0.1", "http"), None, ()),
    (("localhost", "http://evil.example", "localhost", "http"), None, ()),
    (("localhost", "https://app.example.com", "localhost", "http"), None, ("https://*.example.com",)),
    (("api.example.com", "https://api.example.com", "0.0.0.0", "https"), ("*.example.com",), ()),
    (("api.other.org", None, "0.0.0.0", "https"), ("*.example.com",), ()),
    (("localhost:80@evil.example", None, "localhost", "http"), None, ("*",)),
    (("", None, "", "http"), None, ()),
]


@pytest.mark.parametrize(("values", "hosts", "origins"), GUARD_CASES)
def test_a_request_guard_answers_as_rejection_does_and_again_from_what_it_kept(
    values: tuple[str, str | None, str, str], hosts: tuple[str, ...] | None, origins: tuple[str, ...]
) -> None:
    host, origin, server_name, scheme = values
    environ: dict[str, t.Any] = {"HTTP_HOST": host, "SERVER_NAME": server_name, "wsgi.url_scheme": scheme}
    if origin is not None:
        environ["HTTP_ORIGIN"] = origin
    guard = RequestGuard(hosts, origins)
    expected = rejection(environ, hosts, origins)
    assert guard.rejection(environ) == expected
    assert guard.rejection(environ) == expected and len(guard._verdicts) == 1


def test_a_request_guard_keeps_a_bounded_number_of_verdicts_and_none_for_long_values() -> None:
    guard = RequestGuard(None, ())
    for n in range(1100):
        assert guard.rejection({"HTTP_HOST": f"h{n}.example", "SERVER_NAME": "0.0.0.0"}) is None
        assert len(guard._verdicts) <= 1024
    guard._verdicts.clear()
    long_host = "a" * 63 + "." + "b" * 63 + "." + "c" * 63 + "." + "d" * 60
    assert guard.rejection({"HTTP_HOST": long_host, "SERVER_NAME": "0.0.0.0", "HTTP_ORIGIN": "http://x.example"})
    assert guard._verdicts == {}
