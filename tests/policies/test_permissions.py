"""Permissions of tools, resources and prompts, checked by the protocol core."""

from __future__ import annotations

import typing as t
import warnings

import pytest
from flask import Flask

from flask_mcp import MCP
from flask_mcp.components.build import build_tool
from flask_mcp.core.client import ClientState
from flask_mcp.policies.permissions import (
    Authenticated,
    CallablePermission,
    Permission,
    PermissionContext,
    ScopeRequired,
    UnprotectedToolError,
    UnprotectedToolWarning,
    normalize_permissions,
    permission,
)
from flask_mcp.policies.principal import Principal
from flask_mcp.protocol.jsonrpc import INVALID_PARAMS, PERMISSION_DENIED, Request

ALICE = Principal("alice", frozenset({"read"}))
ADMIN = Principal("root", frozenset({"read", "write", "admin"}))


def rpc(app: Flask, method: str, params: dict[str, t.Any], principal: Principal | None = None) -> dict[str, t.Any]:
    """One request through the protocol core, as a transport would pass it with *principal*."""
    with app.test_request_context():
        response = app.extensions["mcp"].server.handle(Request(1, method, params), ClientState(), principal=principal)
    assert response is not None
    return t.cast(dict[str, t.Any], response)


def denial(response: dict[str, t.Any]) -> tuple[str, list[str]]:
    error = response["error"]
    assert error["code"] == PERMISSION_DENIED
    return error["message"], error["data"]["requiredScopes"]


def context(principal: Principal | None, arguments: dict[str, t.Any] | None = None) -> PermissionContext:
    tool = build_tool(lambda: None, name="probe")  # a component to point at; never called
    return PermissionContext(principal, tool, "tool", arguments)


# -- built-ins -------------------------------------------------------------


def test_scope_required_needs_every_scope() -> None:
    rule = ScopeRequired(["read", "write"])
    assert isinstance(rule, Permission)
    assert rule.required_scopes() == ["read", "write"]
    assert not rule.has_permission(context(ALICE))
    assert rule.has_permission(context(ADMIN))
    assert not rule.has_permission(context(None))
    assert ScopeRequired("read").required_scopes() == ["read"]
    with pytest.raises(ValueError, match="at least one scope"):
        ScopeRequired([])


def test_authenticated_works_as_class_or_instance() -> None:
    for given in (Authenticated, Authenticated()):
        (rule,) = normalize_permissions([given]) or ()
        assert rule.has_permission(context(ALICE)) and not rule.has_permission(context(None))
        assert rule.required_scopes() == []


def test_plain_callables_are_wrapped_and_see_the_context() -> None:
    seen: list[PermissionContext] = []

    def owner_only(ctx: PermissionContext) -> bool:
        seen.append(ctx)
        return ctx.principal is not None and (ctx.arguments or {}).get("owner") == ctx.principal.subject

    (rule,) = normalize_permissions([owner_only]) or ()
    assert isinstance(rule, CallablePermission) and rule.required_scopes() == []
    assert rule.has_permission(context(ALICE, {"owner": "alice"}))
    assert not rule.has_permission(context(ALICE, {"owner": "bob"}))
    assert seen[0].kind == "tool" and seen[0].arguments == {"owner": "alice"}
    decorated = permission(scopes=["orders:admin"])(owner_only)
    assert decorated.required_scopes() == ["orders:admin"]


def test_normalize_keeps_none_apart_from_empty_and_refuses_non_permissions() -> None:
    assert normalize_permissions(None) is None
    assert normalize_permissions([]) == ()
    assert len(normalize_permissions(Authenticated) or ()) == 1
    with pytest.raises(TypeError, match="ScopeRequired"):
        normalize_permissions("admin")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="not a permission"):
        normalize_permissions([42])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="needs arguments"):
        normalize_permissions([ScopeRequired])


# -- the protocol core ---------------------------------------------------------


@pytest.fixture
def guarded(mcp: MCP, make_app: t.Callable[..., Flask]) -> tuple[Flask, list[dict[str, t.Any]]]:
    """Every kind of component, each behind permissions; *ran* records handler calls."""
    ran: list[dict[str, t.Any]] = []

    @mcp.tool(permissions=[ScopeRequired(["write"])])
    def save(n: int) -> int:
        ran.append({"save": n})
        return n

    @mcp.resource("config://main", permissions=[ScopeRequired("admin")])
    def config() -> str:
        ran.append({"config": True})
        return "secret"

    @mcp.resource("notes://{note_id}", permissions=[Authenticated], completions={"note_id": ["n1", "n2"]})
    def note(note_id: str) -> str:
        ran.append({"note": note_id})
        return note_id

    @mcp.prompt(permissions=[ScopeRequired("write")], completions={"style": ["terse", "long"]})
    def draft(style: str) -> str:
        ran.append({"draft": style})
        return style

    return make_app(mcp, MCP_STATELESS=True), ran


def test_tool_call_is_denied_before_arguments_are_validated(guarded: tuple[Flask, list[t.Any]]) -> None:
    app, ran = guarded
    # Invalid arguments: the denial still comes first, revealing nothing about the schema.
    message, scopes = denial(rpc(app, "tools/call", {"name": "save", "arguments": {"n": "x"}}, ALICE))
    assert message == "Permission denied: tool save requires scope(s) write"
    assert scopes == ["write"]
    assert ran == []
    result = rpc(app, "tools/call", {"name": "save", "arguments": {"n": 3}}, ADMIN)["result"]
    assert result["structuredContent"] == {"result": 3} and ran == [{"save": 3}]


def test_static_and_templated_resources_are_checked(guarded: tuple[Flask, list[t.Any]]) -> None:
    app, ran = guarded
    message, scopes = denial(rpc(app, "resources/read", {"uri": "config://main"}, ALICE))
    assert (message, scopes) == ("Permission denied: resource config://main requires scope(s) admin", ["admin"])
    message, scopes = denial(rpc(app, "resources/read", {"uri": "notes://n1"}))
    assert (message, scopes) == ("Permission denied: resource notes://{note_id} requires an authenticated caller", [])
    assert ran == []
    assert rpc(app, "resources/read", {"uri": "notes://n1"}, ALICE)["result"]["contents"][0]["text"] == "n1"
    assert rpc(app, "resources/read", {"uri": "config://main"}, ADMIN)["result"]["contents"][0]["text"] == "secret"


def test_prompt_get_is_checked(guarded: tuple[Flask, list[t.Any]]) -> None:
    app, ran = guarded
    message, scopes = denial(rpc(app, "prompts/get", {"name": "draft", "arguments": {"style": "terse"}}, ALICE))
    assert (message, scopes) == ("Permission denied: prompt draft requires scope(s) write", ["write"])
    assert ran == []
    assert rpc(app, "prompts/get", {"name": "draft", "arguments": {"style": "terse"}}, ADMIN)["result"]["messages"]


def test_completion_is_checked_for_the_referenced_prompt_and_template(guarded: tuple[Flask, list[t.Any]]) -> None:
    app, _ = guarded
    prompt_ref = {"ref": {"type": "ref/prompt", "name": "draft"}, "argument": {"name": "style", "value": "t"}}
    template_ref = {
        "ref": {"type": "ref/resource", "uri": "notes://{note_id}"},
        "argument": {"name": "note_id", "value": ""},
    }
    assert denial(rpc(app, "completion/complete", prompt_ref, ALICE))[1] == ["write"]
    assert denial(rpc(app, "completion/complete", template_ref))[0].endswith("requires an authenticated caller")
    assert rpc(app, "completion/complete", prompt_ref, ADMIN)["result"]["completion"]["values"] == ["terse"]
    assert rpc(app, "completion/complete", template_ref, ALICE)["result"]["completion"]["values"] == ["n1", "n2"]


def test_permissions_are_and_combined_and_only_denying_ones_report_scopes(
    mcp: MCP, make_app: t.Callable[..., Flask]
) -> None:
    @permission(scopes=["weekday"])
    def not_on_sundays(ctx: PermissionContext) -> bool:
        return (ctx.arguments or {}).get("day") != "sunday"

    @mcp.tool(permissions=[ScopeRequired(["read"]), not_on_sundays, ScopeRequired(["write"])])
    def book(day: str) -> str:
        return day

    app = make_app(mcp, MCP_STATELESS=True)
    call = {"name": "book", "arguments": {"day": "sunday"}}
    assert denial(rpc(app, "tools/call", call, ALICE))[1] == ["weekday", "write"]
    assert denial(rpc(app, "tools/call", call, ADMIN))[1] == ["weekday"]
    call["arguments"] = {"day": "monday"}
    assert denial(rpc(app, "tools/call", call, ALICE))[1] == ["write"]
    assert rpc(app, "tools/call", call, ADMIN)["result"]["content"][0]["text"] == "monday"


def test_default_permissions_apply_to_components_without_their_own(make_app: t.Callable[..., Flask]) -> None:
    mcp = MCP(name="t", default_permissions=[Authenticated])

    @mcp.tool
    def private() -> str:
        return "private"

    @mcp.tool(permissions=[])
    def public() -> str:
        return "public"

    @mcp.prompt(permissions=[ScopeRequired("write")])
    def own() -> str:
        return "own"

    app = make_app(mcp, MCP_STATELESS=True)
    assert denial(rpc(app, "tools/call", {"name": "private"}))[0].endswith("requires an authenticated caller")
    assert rpc(app, "tools/call", {"name": "private"}, ALICE)["result"]["content"][0]["text"] == "private"
    assert rpc(app, "tools/call", {"name": "public"})["result"]["content"][0]["text"] == "public"
    # The component's own list replaces the defaults, it does not add to them.
    assert denial(rpc(app, "prompts/get", {"name": "own"}, ALICE))[1] == ["write"]


def test_unknown_names_stay_invalid_params(guarded: tuple[Flask, list[t.Any]]) -> None:
    app, _ = guarded
    assert rpc(app, "tools/call", {"name": "nope"})["error"]["code"] == INVALID_PARAMS


# -- filtered listings ---------------------------------------------------------


def _list_all(app: Flask, method: str, key: str, principal: Principal | None) -> tuple[list[str], int]:
    names: list[str] = []
    cursor: str | None = None
    pages = 0
    while True:
        result = rpc(app, method, {"cursor": cursor} if cursor else {}, principal)["result"]
        names += [item.get("name") for item in result[key]]
        pages += 1
        cursor = result.get("nextCursor")
        if cursor is None:
            return names, pages


def _five_tools(mcp: MCP, **hidden_options: t.Any) -> None:
    for index in range(5):
        options = {"permissions": [ScopeRequired("admin")], **hidden_options} if index in (1, 3) else {}
        mcp.tool(name=f"t{index}", **options)(lambda: None)


def test_filtered_listing_pages_over_what_the_caller_may_use(mcp: MCP, make_app: t.Callable[..., Flask]) -> None:
    _five_tools(mcp)
    app = make_app(mcp, MCP_STATELESS=True, MCP_PAGE_SIZE=2, MCP_FILTER_LISTINGS_BY_PERMISSIONS=True)
    assert _list_all(app, "tools/list", "tools", ALICE) == (["t0", "t2", "t4"], 2)
    assert _list_all(app, "tools/list", "tools", ADMIN) == (["t0", "t1", "t2", "t3", "t4"], 3)
    assert rpc(app, "tools/list", {"cursor": "bogus"}, ALICE)["error"]["code"] == INVALID_PARAMS


def test_listings_are_not_filtered_by_default(mcp: MCP, make_app: t.Callable[..., Flask]) -> None:
    _five_tools(mcp)
    app = make_app(mcp, MCP_STATELESS=True, MCP_PAGE_SIZE=2)
    assert _list_all(app, "tools/list", "tools", None) == (["t0", "t1", "t2", "t3", "t4"], 3)


def test_always_listed_stays_visible_but_denied(mcp: MCP, make_app: t.Callable[..., Flask]) -> None:
    _five_tools(mcp, always_listed=True)
    app = make_app(mcp, MCP_STATELESS=True, MCP_FILTER_LISTINGS_BY_PERMISSIONS=True)
    assert _list_all(app, "tools/list", "tools", ALICE)[0] == ["t0", "t1", "t2", "t3", "t4"]
    assert denial(rpc(app, "tools/call", {"name": "t1"}, ALICE))[1] == ["admin"]


def test_resources_templates_and_prompts_are_filtered(guarded: tuple[Flask, list[t.Any]], mcp: MCP) -> None:
    app, _ = guarded
    app.extensions["mcp"].server.filter_listings = True
    assert _list_all(app, "resources/list", "resources", ALICE)[0] == []
    assert _list_all(app, "resources/list", "resources", ADMIN)[0] == ["config"]
    assert _list_all(app, "resources/templates/list", "resourceTemplates", None)[0] == []
    assert _list_all(app, "resources/templates/list", "resourceTemplates", ALICE)[0] == ["note"]
    assert _list_all(app, "prompts/list", "prompts", ALICE)[0] == []
    assert _list_all(app, "prompts/list", "prompts", ADMIN)[0] == ["draft"]


# -- unprotected tools under authentication -----------------------------------------


def test_unprotected_tools_warn_when_auth_is_configured(mcp: MCP, make_app: t.Callable[..., Flask]) -> None:
    mcp.tool(name="open_before")(lambda: None)
    mcp.tool(name="public", permissions=[])(lambda: None)
    with pytest.warns(UnprotectedToolWarning, match="open_before") as record:
        make_app(mcp, MCP_STATELESS=True, MCP_AUTH_TOKENS={"token-1": "alice"})
    assert str(record[0].message).startswith("tool(s) open_before have no permissions")
    with pytest.warns(UnprotectedToolWarning, match="open_after"):
        mcp.tool(name="open_after")(lambda: None)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mcp.tool(name="closed", permissions=[Authenticated])(lambda: None)


def test_no_warning_without_auth_or_with_default_permissions(make_app: t.Callable[..., Flask]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # What the collector finds of earlier tests (a connection left to it) is not this test's.
        warnings.simplefilter("ignore", ResourceWarning)
        plain = MCP(name="plain")
        plain.tool(name="a")(lambda: None)
        make_app(plain, MCP_STATELESS=True)
        defaults = MCP(name="defaults", default_permissions=[Authenticated])
        defaults.tool(name="a")(lambda: None)
        make_app(defaults, MCP_STATELESS=True, MCP_AUTH_TOKENS={"token-1": "alice"})


def test_strict_setting_refuses_unprotected_tools(mcp: MCP, make_app: t.Callable[..., Flask]) -> None:
    strict = {"MCP_STATELESS": True, "MCP_AUTH_TOKENS": {"token-1": "alice"}, "MCP_REQUIRE_PERMISSIONS": True}
    mcp.tool(name="open")(lambda: None)
    with pytest.raises(UnprotectedToolError, match="open"):
        make_app(mcp, **strict)
    protected = MCP(name="protected")
    protected.tool(name="closed", permissions=[Authenticated])(lambda: None)
    make_app(protected, **strict)
    with pytest.raises(UnprotectedToolError, match="late"):
        protected.tool(name="late")(lambda: None)
    assert "late" not in protected.tools


# -- end to end over HTTP, with static tokens ------------------------------------------


def test_http_denial_is_403_with_the_missing_scopes(mcp: MCP, make_app: t.Callable[..., Flask]) -> None:
    @mcp.tool(permissions=[ScopeRequired(["orders:write"])])
    def cancel(order_id: int) -> str:
        return f"cancelled {order_id}"

    tokens = {
        "reader": {"subject": "r", "scopes": ["orders:read"]},
        "writer": {"subject": "w", "scopes": ["orders:write"]},
    }
    app = make_app(mcp, MCP_STATELESS=True, MCP_AUTH_TOKENS=tokens)
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "cancel", "arguments": {"order_id": 7}},
    }
    accept = "application/json, text/event-stream"
    client = app.test_client()
    denied = client.post("/mcp", json=body, headers={"Authorization": "Bearer reader", "Accept": accept})
    assert denied.status_code == 403
    assert denied.json["error"]["code"] == PERMISSION_DENIED
    assert denied.json["error"]["data"] == {"requiredScopes": ["orders:write"]}
    assert 'error="insufficient_scope"' in denied.headers["WWW-Authenticate"]
    allowed = client.post("/mcp", json=body, headers={"Authorization": "Bearer writer", "Accept": accept})
    assert allowed.status_code == 200 and allowed.json["result"]["content"][0]["text"] == "cancelled 7"
    # The REST route of the tool is guarded alike.
    rest = client.post("/mcp/rest/tools/cancel", json={"order_id": 7}, headers={"Authorization": "Bearer reader"})
    assert rest.status_code == 403
