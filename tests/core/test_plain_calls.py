"""Which calls take the straight path (:mod:`flask_mcp.core.plain_calls`), and what it loads.

The answers themselves are compared with the general path's in
``tests/transport/test_fast_lane.py``; here, the plan: a tool that needs
any optional step has none, the plan follows run-time changes of the tool
and of the server, and :meth:`PlainCall.load` vouches only for arguments
the general path would load the same way.
"""

from __future__ import annotations

import contextlib
import typing as t

import pytest
from flask import Blueprint, Flask
from marshmallow import Schema, fields, validate

from flask_mcp import MCP, Authenticated, Context, ToolError
from flask_mcp.components.model import Tool
from flask_mcp.core.hooks import tool_called
from flask_mcp.core.plain_calls import PlainCall, plain_call_of
from flask_mcp.globals import state_of
from flask_mcp.policies.tool import ToolDefaults


def plan(app: Flask, name: str) -> PlainCall | None:
    """The straight path of *name*, asked where the transport asks it: in a request to the app."""
    with app.test_request_context("/mcp", method="POST"):
        return t.cast("PlainCall | None", state_of(app).server.plain_call(name))


@pytest.fixture
def app(mcp: MCP, make_app: t.Callable[..., Flask]) -> Flask:
    @mcp.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @mcp.tool()
    def scale(x: float, factor: float = 2.0) -> float:
        """Scale a number."""
        return x * factor

    return make_app(mcp)


# -- which tools have a straight path ------------------------------------------------------------


def test_a_plain_tool_has_one(app: Flask) -> None:
    plain = plan(app, "add")
    assert isinstance(plain, PlainCall)
    assert plain.tool is state_of(app).server.registry.tools["add"]
    assert plain.func(a=1, b=2) == 3
    assert plan(app, "add") is plain  # worked out once


def test_an_unknown_tool_has_none(app: Flask) -> None:
    assert plan(app, "nope") is None
    assert plan(app, "") is None


class Limited(Schema):
    a = fields.Integer(required=True, strict=True, validate=validate.Range(max=10))


def _transactions() -> contextlib.AbstractContextManager[None]:
    return contextlib.nullcontext()


#: Tool options that each need a step of the general path.
OPTIONS: list[tuple[str, dict[str, t.Any]]] = [
    ("permissions", {"permissions": [Authenticated]}),
    ("rate_limit", {"rate_limit": "10/minute"}),
    ("task support optional", {"task": "optional"}),
    ("task support required", {"task": "required"}),
    ("cached results", {"cache": 60, "annotations": {"readOnlyHint": True}}),
    ("timeout", {"timeout": 5}),
    ("max_result_bytes", {"max_result_bytes": 1000}),
    ("a kwargs provider", {"kwargs": lambda ctx: {}}),
]


@pytest.mark.parametrize("options", [case[1] for case in OPTIONS], ids=[case[0] for case in OPTIONS])
def test_a_tool_option_that_needs_the_general_path_gives_none(
    mcp: MCP, make_app: t.Callable[..., Flask], options: dict[str, t.Any]
) -> None:
    @mcp.tool(name="special", **options)
    def special(a: int = 0) -> int:
        return a

    @mcp.tool()
    def plain(a: int = 0) -> int:
        return a

    app = make_app(mcp)
    assert plan(app, "special") is None
    assert plan(app, "plain") is not None


def test_an_atomic_tool_gives_none(make_app: t.Callable[..., Flask]) -> None:
    mcp = MCP(name="atomic", transaction=_transactions)

    @mcp.tool(atomic=True)
    def special(a: int) -> int:
        return a

    assert plan(make_app(mcp), "special") is None


def test_ask_first_gives_none(mcp: MCP, make_app: t.Callable[..., Flask]) -> None:
    from flask_mcp import Elicit

    form = {"type": "object", "properties": {"ok": {"type": "boolean"}}}

    @mcp.tool(task="optional", ask_first={"sure": Elicit("Sure?", form)})
    def special(a: int) -> int:
        return a

    assert plan(make_app(mcp), "special") is None


def _context(mcp: MCP) -> None:
    @mcp.tool(name="special")
    def special(a: int, ctx: Context) -> int:
        return a


def _named_context(mcp: MCP) -> None:
    @mcp.tool(name="special")
    def special(a: int, context: t.Any = None) -> int:
        return a


def _data(mcp: MCP) -> None:
    @mcp.tool(name="special")
    def special(a: int, data: t.Any = None) -> int:
        return a


def _user(mcp: MCP) -> None:
    @mcp.tool(name="special")
    def special(a: int, user: t.Any = None) -> int:
        return a


def _request(mcp: MCP) -> None:
    @mcp.tool(name="special")
    def special(a: int, request: t.Any = None) -> int:
        return a


def _any_keyword(mcp: MCP) -> None:
    @mcp.tool(name="special")
    def special(a: int, **rest: t.Any) -> int:
        return a


def test_a_function_that_takes_a_context_has_a_plan_the_transport_gives_the_context_to(
    mcp: MCP, make_app: t.Callable[..., Flask]
) -> None:
    @mcp.tool()
    def short(a: int, ctx: Context) -> int:
        return a

    @mcp.tool()
    def named(a: int, context: Context) -> int:
        return a

    app = make_app(mcp)
    for tool, name in (("short", "ctx"), ("named", "context")):
        plain = plan(app, tool)
        assert plain is not None and plain.context == name
        assert plain.load({"a": 1}) == {"a": 1}  # the transport adds the context
        assert plain.load({"a": 1, name: 1}) is None  # not an argument the client can set


@pytest.mark.parametrize("register", [_named_context, _data, _user, _request, _any_keyword])
def test_a_function_that_takes_what_the_server_supplies_gives_none(
    mcp: MCP, make_app: t.Callable[..., Flask], register: t.Callable[[MCP], None]
) -> None:
    register(mcp)
    assert plan(make_app(mcp), "special") is None


def test_a_routes_view_gives_none(mcp: MCP, make_app: t.Callable[..., Flask]) -> None:
    blueprint = Blueprint("items", __name__)

    @mcp.tool(name="special")
    @blueprint.route("/items/<int:a>")
    def special(a: int) -> dict[str, int]:
        return {"a": a}

    app = make_app(mcp)
    app.register_blueprint(blueprint)
    assert plan(app, "special") is None


def test_default_permissions_give_none(make_app: t.Callable[..., Flask]) -> None:
    mcp = MCP(name="guarded", default_permissions=[Authenticated])

    @mcp.tool()
    def guarded(a: int) -> int:
        return a

    @mcp.tool(permissions=[])
    def public(a: int) -> int:
        return a

    app = make_app(mcp)
    assert plan(app, "guarded") is None
    assert plan(app, "public") is not None  # made public on purpose: nothing to check


@pytest.mark.parametrize(
    "config", [{"MCP_TOOL_TIMEOUT": 5}, {"MCP_MAX_RESULT_BYTES": 1000}], ids=["timeout", "max_result_bytes"]
)
def test_server_wide_tool_defaults_give_none(
    mcp: MCP, make_app: t.Callable[..., Flask], config: dict[str, t.Any]
) -> None:
    @mcp.tool()
    def add(a: int, b: int) -> int:
        return a + b

    assert plan(make_app(mcp, **config), "add") is None


def test_plain_call_of_asks_the_tool_itself(app: Flask) -> None:
    server = state_of(app).server
    tool = server.registry.tools["add"]
    with app.test_request_context("/mcp", method="POST"):
        assert isinstance(plain_call_of(server, tool), PlainCall)
        server.hooks.before.append(lambda info: None)
        try:
            # The server's run-time parts are Server.plain_call's to ask, on each call.
            assert isinstance(plain_call_of(server, tool), PlainCall)
            assert server.plain_call("add") is None
        finally:
            server.hooks.before.clear()


# -- what load vouches for ----------------------------------------------------------------------


def test_load_gives_the_keyword_arguments(app: Flask) -> None:
    add, scale = plan(app, "add"), plan(app, "scale")
    assert add is not None and scale is not None
    assert add.load({"a": 1, "b": 2}) == {"a": 1, "b": 2}
    assert add.load({"a": 2**70, "b": -1}) == {"a": 2**70, "b": -1}
    assert scale.load({"x": 3}) == {"x": 3.0, "factor": 2.0}  # converted, and the default filled in
    assert type(scale.load({"x": 3})["x"]) is float  # type: ignore[index]


@pytest.mark.parametrize(
    "arguments",
    [
        {"a": 1},
        {},
        {"a": "1", "b": 2},
        {"a": 1.0, "b": 2},
        {"a": True, "b": 2},
        {"a": None, "b": 2},
        {"a": [1], "b": 2},
        {"a": 1, "b": 2, "c": 3},
        {"a": 1, "b": 2, "request": 3},
    ],
)
def test_load_refuses_what_the_general_path_must_word(app: Flask, arguments: dict[str, t.Any]) -> None:
    add = plan(app, "add")
    assert add is not None
    assert add.load(arguments) is None
    tool = state_of(app).server.registry.tools["add"]
    with pytest.raises(Exception):  # noqa: B017 - the general path refuses it too, in its own words
        tool.load_arguments(arguments)


def test_load_refuses_a_number_past_every_float(app: Flask) -> None:
    scale = plan(app, "scale")
    assert scale is not None and scale.load({"x": 10**400}) is None


class Wider(Schema):
    a = fields.Integer(required=True, strict=True)
    note = fields.String(load_default="none")


@pytest.mark.parametrize(
    "schema",
    [Limited, {"type": "object", "properties": {"a": {"type": "integer"}}}],
    ids=["a schema with a validator", "a JSON Schema dict"],
)
def test_a_schema_without_a_compiled_validator_gives_none(
    mcp: MCP, make_app: t.Callable[..., Flask], schema: t.Any
) -> None:
    @mcp.tool(input_schema=schema)
    def special(a: int) -> int:
        return a

    @mcp.tool(input_schema=Wider)
    def plain(a: int) -> int:
        return a

    app = make_app(mcp)
    assert plan(app, "special") is None
    assert plan(app, "plain") is not None


def test_bundled_arguments_give_none(mcp: MCP, make_app: t.Callable[..., Flask]) -> None:
    @mcp.tool(input_schema=Wider, argument_binding="bundle")
    def special(data: dict[str, t.Any]) -> int:
        return len(data)

    app = make_app(mcp)
    assert plan(app, "special") is None


def test_load_drops_names_the_function_does_not_take(mcp: MCP, make_app: t.Callable[..., Flask]) -> None:
    @mcp.tool(input_schema=Wider)
    def narrow(a: int) -> int:
        return a

    @mcp.tool(input_schema=Wider)
    def whole(a: int, note: str) -> str:
        return f"{a} {note}"

    app = make_app(mcp)
    narrow_plan, whole_plan = plan(app, "narrow"), plan(app, "whole")
    assert narrow_plan is not None and whole_plan is not None
    assert narrow_plan.load({"a": 1, "note": "n"}) == {"a": 1}
    assert narrow_plan.load({"a": 1}) == {"a": 1}
    assert whole_plan.load({"a": 1}) == {"a": 1, "note": "none"}


def test_run_converts_and_fails_as_the_general_path(mcp: MCP, make_app: t.Callable[..., Flask]) -> None:
    @mcp.tool()
    def refuse() -> str:
        raise ToolError("no")

    app = make_app(mcp)
    server = state_of(app).server
    refused = plan(app, "refuse")
    assert refused is not None
    with app.test_request_context("/mcp", method="POST"):
        result = refused.run(server, {})
    assert result["isError"] is True and result["content"][0]["text"].endswith(": no")


# -- run-time changes -------------------------------------------------------------------------------


@pytest.mark.parametrize("hook", ["before_call", "after_call", "on_error"])
def test_a_hook_registered_later_is_seen(app: Flask, mcp: MCP, hook: str) -> None:
    assert plan(app, "add") is not None
    getattr(mcp, hook)(lambda *args: None)
    assert plan(app, "add") is None
    assert plan(app, "scale") is None


def test_a_tool_called_receiver_is_seen_while_connected(app: Flask) -> None:
    assert plan(app, "add") is not None

    def receiver(sender: t.Any, **info: t.Any) -> None:
        pass

    with tool_called.connected_to(receiver):
        assert plan(app, "add") is None
    assert plan(app, "add") is not None


@pytest.mark.parametrize("table", ["HANDLERS", "MODERN_HANDLERS"])
def test_a_replaced_tools_call_handler_is_seen(app: Flask, table: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from flask_mcp.core import methods

    assert plan(app, "add") is not None
    handlers = getattr(methods, table)
    monkeypatch.setitem(handlers, "tools/call", lambda call: handlers["tools/list"](call))
    assert plan(app, "add") is None  # every call goes to the handler the table names
    monkeypatch.undo()
    assert plan(app, "add") is not None


def test_a_server_wide_rate_limit_and_a_recording_tracer_are_seen(app: Flask) -> None:
    server = state_of(app).server
    assert plan(app, "add") is not None
    limit, tracer = server.rate_limit, server.tracer
    server.rate_limit = "10/minute"
    try:
        assert plan(app, "add") is None
    finally:
        server.rate_limit = limit
    assert plan(app, "add") is not None

    class Recording:
        recording = True

    server.tracer = Recording()
    try:
        assert plan(app, "add") is None
        Recording.recording = False
        assert plan(app, "add") is not None
    finally:
        server.tracer = tracer


def test_a_tool_removed_and_registered_again_gets_a_new_plan(app: Flask, mcp: MCP) -> None:
    first = plan(app, "add")
    assert first is not None
    with app.app_context():
        mcp.remove_tool("add")
    assert plan(app, "add") is None

    def add(a: int, b: int) -> int:
        return a - b

    with app.app_context():
        mcp.tool(add)
    second = plan(app, "add")
    assert second is not None and second is not first
    assert second.tool is state_of(app).server.registry.tools["add"] and second.func is add


def test_a_tool_disabled_and_enabled_is_seen(app: Flask, mcp: MCP) -> None:
    assert plan(app, "add") is not None
    with app.app_context():
        mcp.disable("add")
    assert plan(app, "add") is None
    with app.app_context():
        mcp.enable("add")
    assert plan(app, "add") is not None


def test_a_new_generation_is_worked_out_again(app: Flask) -> None:
    tool = state_of(app).server.registry.tools["add"]
    first = plan(app, "add")
    assert first is not None
    generation = Tool.generation
    tool.use_defaults(ToolDefaults(timeout=5))
    assert Tool.generation > generation
    assert plan(app, "add") is None  # the new default needs the general path
    tool.use_defaults(ToolDefaults())
    again = plan(app, "add")
    assert again is not None and again is not first
