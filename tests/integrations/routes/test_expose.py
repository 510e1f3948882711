"""The app's own routes as tools: called in-process through the app's dispatch, under its own auth."""

from __future__ import annotations

import functools
import typing as t

import marshmallow as ma
import pytest
from flask import Blueprint, Flask, abort, g, jsonify, request
from marshmallow import fields

from flask_mcp import MCP
from flask_mcp.integrations.routes.arguments import route_arguments
from flask_mcp.integrations.routes.declarations import Declared
from flask_mcp.integrations.routes.expose import expose_routes, route_tool

NOTES: dict[int, str] = {}
notes = Blueprint("notes", __name__, url_prefix="/api/notes")


@notes.before_request
def require_token() -> t.Any:
    # The app's own auth, which knows nothing of MCP.
    if request.headers.get("Authorization") != "Bearer app-token":
        return jsonify(message="who are you?"), 401
    g.user = "ada"
    return None


@notes.get("/<int:note_id>")
def get_note(note_id: int) -> t.Any:
    """Read one note."""
    if note_id not in NOTES:
        abort(404, description=f"no note {note_id}")
    return {"id": note_id, "text": NOTES[note_id], "format": request.args.get("format", "plain"), "by": g.user}


@notes.route("", methods=["GET", "POST"])
def notes_view() -> t.Any:
    """List the notes, or add one."""
    if request.method == "POST":
        payload = request.get_json()
        note_id = max(NOTES, default=0) + 1
        NOTES[note_id] = payload["text"]
        return {"id": note_id}, 201
    return sorted(NOTES)


class NoteIn(ma.Schema):
    text = fields.String(required=True)


def create_app(mcp: MCP, **config: t.Any) -> Flask:
    app = Flask("routes_app")
    app.config.update(TESTING=True, **config)

    @app.errorhandler(404)
    def not_found(exc: t.Any) -> t.Any:
        return jsonify(message=exc.description), 404

    app.register_blueprint(notes)
    mcp.init_app(app)
    return app


@pytest.fixture
def app() -> t.Iterator[Flask]:
    NOTES.clear()
    NOTES[1] = "hello"
    mcp = MCP(name="routes")
    app = create_app(mcp)
    expose_routes(mcp, app, ["notes.*"], schemas={"notes.notes_view": NoteIn})
    yield app


def test_each_route_and_method_is_a_tool_typed_by_its_converters(app: Flask, make_client: t.Any) -> None:
    tools = {tool["name"]: tool for tool in make_client(app, era="modern").list_tools()}
    assert set(tools) == {"notes_get_note", "notes_notes_view_get", "notes_notes_view_post"}
    assert tools["notes_get_note"]["description"] == "Read one note."
    schema = tools["notes_get_note"]["inputSchema"]
    assert schema["properties"]["note_id"]["type"] == "integer" and schema["required"] == ["note_id"]
    assert set(tools["notes_notes_view_post"]["inputSchema"]["properties"]) == {"text"}


@pytest.mark.parametrize("era", ["modern", "handshake"])
def test_a_call_goes_through_the_route_with_the_callers_token(app: Flask, make_client: t.Any, era: str) -> None:
    client = make_client(app, era=era, headers={"Authorization": "Bearer app-token"})
    if era == "handshake":
        client.initialize()
    created = client.call_tool("notes_notes_view_post", {"text": "from MCP"})
    assert created["structuredContent"] == {"id": 2}
    assert NOTES[2] == "from MCP"
    read = client.call_tool("notes_get_note", {"note_id": 2})
    assert read["structuredContent"] == {"id": 2, "text": "from MCP", "format": "plain", "by": "ada"}
    # The route still answers HTTP clients as before.
    response = app.test_client().get("/api/notes/2?format=md", headers={"Authorization": "Bearer app-token"})
    assert response.get_json()["format"] == "md"


@pytest.mark.parametrize("era", ["modern", "handshake"])
@pytest.mark.parametrize("stacked", [False, True], ids=["expose_routes", "stacked tool"])
def test_an_html_error_page_reaches_the_model_as_its_words(make_client: t.Any, era: str, stacked: bool) -> None:
    """abort(404, description=...) in a plain view, with no JSON error handler: werkzeug's page, told as text."""
    mcp = MCP(name="books")
    app = Flask("books")
    app.config.update(TESTING=True)

    def get_book(book_id: int) -> t.Any:
        abort(404, description=f"no book {book_id} <in> the 'shop' & elsewhere")

    app.get("/books/<int:book_id>")(mcp.tool()(get_book) if stacked else get_book)
    if not stacked:
        expose_routes(mcp, app, ["get_book"])
    mcp.init_app(app)
    assert "<!doctype html>" in app.test_client().get("/books/42").get_data(as_text=True)
    client = make_client(app, era=era)
    if era == "handshake":
        client.initialize()
    tool = "get_book"
    refused = client.call_tool(tool, {"book_id": 42})
    text = refused["content"][0]["text"]
    assert refused["isError"] is True
    assert text.endswith("answered 404 NOT FOUND: no book 42 <in> the 'shop' & elsewhere")
    assert "<!doctype" not in text and "<p>" not in text and "&amp;" not in text


def test_the_apps_own_auth_and_error_handlers_answer(app: Flask, make_client: t.Any) -> None:
    anonymous = make_client(app, era="modern")
    refused = anonymous.call_tool("notes_get_note", {"note_id": 1})
    assert refused["isError"] is True
    assert refused["content"][0]["text"].endswith("answered 401 UNAUTHORIZED: who are you?")
    caller = make_client(app, era="modern", headers={"Authorization": "Bearer app-token"})
    missing = caller.call_tool("notes_get_note", {"note_id": 99})
    assert missing["isError"] is True and "404 NOT FOUND: no note 99" in missing["content"][0]["text"]


def test_without_a_schema_the_body_is_free_and_there_is_no_query_argument(make_client: t.Any) -> None:
    NOTES.clear()
    NOTES[1] = "hello"
    mcp = MCP(name="routes")
    app = create_app(mcp)
    expose_routes(mcp, app, ["notes.*"])
    client = make_client(app, era="modern", headers={"Authorization": "Bearer app-token"})
    tools = {tool["name"]: tool["inputSchema"] for tool in client.list_tools()}
    # Nothing says the views read the query string: no free-form "query" on any tool.
    assert {name: set(schema["properties"]) for name, schema in tools.items()} == {
        "notes_get_note": {"note_id"},
        "notes_notes_view_get": set(),
        "notes_notes_view_post": {"body"},
    }
    assert "required" not in tools["notes_notes_view_get"]
    assert client.call_tool("notes_notes_view_post", {"body": {"text": "hi"}})["structuredContent"] == {"id": 2}
    refused = client.call_tool("notes_get_note", {"note_id": 1, "query": {"format": "html"}})
    assert refused["isError"] is True and "query" in refused["content"][0]["text"]


@pytest.mark.parametrize("asked", ["expose_routes(query=True)", "route_tool(query=True)"])
def test_a_free_query_string_is_given_when_asked(make_client: t.Any, asked: str) -> None:
    mcp = MCP(name="routes")
    app = Flask("query_app")
    app.config.update(TESTING=True)
    by_view = asked.startswith("route_tool")

    def search(folder: str) -> t.Any:
        """Search a folder; the view reads request.args itself."""
        return {"folder": folder, "args": request.args.to_dict()}

    @app.post("/notes")
    def add_note() -> t.Any:
        return {"added": request.get_json(), "args": request.args.to_dict()}

    app.get("/search/<folder>")(route_tool(query=True)(search) if by_view else search)
    mcp.init_app(app)
    expose_routes(mcp, app, ["search", "add_note"], query=not by_view)
    client = make_client(app, era="modern")
    tools = {tool["name"]: tool["inputSchema"] for tool in client.list_tools()}
    assert tools["search"]["properties"]["query"] == {
        "type": "object",
        "additionalProperties": {"type": "string"},
        "description": "Query string parameters.",
    }
    # Only where it was asked for; a body route asked for it takes both.
    assert {name for name, schema in tools.items() if "query" in schema["properties"]} == (
        {"search"} if by_view else {"search", "add_note"}
    )
    result = client.call_tool("search", {"folder": "inbox", "query": {"q": "milk", "page": "2"}})
    assert result["structuredContent"] == {"folder": "inbox", "args": {"q": "milk", "page": "2"}}
    if not by_view:
        added = client.call_tool("add_note", {"body": {"text": "hi"}, "query": {"draft": "1"}})
        assert added["structuredContent"] == {"added": {"text": "hi"}, "args": {"draft": "1"}}


def test_a_schema_field_named_like_a_url_variable_is_refused() -> None:
    class Clashing(ma.Schema):
        note_id = fields.Integer()

    rule = next(rule for rule in create_app(MCP(name="x")).url_map.iter_rules() if rule.endpoint == "notes.get_note")
    with pytest.raises(ValueError, match="'note_id' is declared both as a path and a query argument"):
        route_arguments(rule, "GET", Declared((Clashing(),)))


def test_a_pattern_that_matches_nothing_is_refused() -> None:
    mcp = MCP(name="x")
    with pytest.raises(ValueError, match="no route of the app matches notse"):
        expose_routes(mcp, create_app(mcp), ["notse.*"])


def test_routes_are_chosen_by_rule_and_renamed(make_client: t.Any) -> None:
    mcp = MCP(name="routes")
    app = create_app(mcp)

    @app.get("/health")
    def health() -> t.Any:
        return {"ok": True}

    chosen = expose_routes(
        mcp,
        app,
        rules=["/api/notes/*"],
        names={"notes.get_note": "read_note"},
        descriptions={"notes.get_note": "One note, by its number."},
    )
    assert chosen == ["read_note"]  # /api/notes itself and /health do not match the rule
    (tool,) = make_client(app, era="modern").list_tools()
    assert tool["name"] == "read_note" and tool["description"] == "One note, by its number."


def test_a_marked_view_is_chosen_with_its_own_options(make_client: t.Any) -> None:
    mcp = MCP(name="routes")
    app = create_app(mcp)

    @route_tool(name="ping", description="Is the app up?", annotations={"readOnlyHint": True})
    @app.get("/ping")
    def ping_view() -> t.Any:
        """Not this docstring."""
        return {"pong": True}

    @app.get("/unmarked")
    def unmarked() -> t.Any:
        return {}

    assert expose_routes(mcp, app, marked=True) == ["ping"]
    client = make_client(app, era="modern")
    (tool,) = client.list_tools()
    assert tool["description"] == "Is the app up?" and tool["annotations"] == {"readOnlyHint": True}
    assert client.call_tool("ping")["structuredContent"] == {"pong": True}
    with pytest.raises(ValueError, match="no route of the app matches views marked with route_tool"):
        expose_routes(MCP(name="other"), create_app(MCP(name="y")), marked=True)


def test_another_servers_routes_are_never_exposed() -> None:
    public, admin = MCP(name="public"), MCP(name="admin", config_prefix="ROUTES_ADMIN", blueprint_name="admin")
    app = create_app(public)
    admin.init_app(app)
    names = expose_routes(public, app)
    assert names and not any(name.startswith(("admin", "mcp")) for name in names)


def test_a_jwt_protected_view_answers_the_callers_token(make_client: t.Any) -> None:
    flask_jwt_extended = pytest.importorskip("flask_jwt_extended")
    mcp = MCP(name="jwt")
    app = Flask("jwt_app")
    app.config.update(TESTING=True, JWT_SECRET_KEY="a-test-secret-of-32-bytes-or-more!!")
    flask_jwt_extended.JWTManager(app)

    @app.get("/me")
    @flask_jwt_extended.jwt_required()
    def me() -> t.Any:
        """Who the token says the caller is."""
        return {"user": flask_jwt_extended.get_jwt_identity()}

    mcp.init_app(app)
    expose_routes(mcp, app, ["me"])
    with app.app_context():
        token = flask_jwt_extended.create_access_token(identity="ada")
    caller = make_client(app, era="modern", headers={"Authorization": f"Bearer {token}"})
    assert caller.call_tool("me")["structuredContent"] == {"user": "ada"}
    refused = make_client(app, era="modern").call_tool("me")
    assert (
        refused["isError"] is True
        and "answered 401 UNAUTHORIZED: Missing Authorization Header" in (refused["content"][0]["text"])
    )


def test_a_flask_login_protected_view_answers_the_callers_token(make_client: t.Any) -> None:
    flask_login = pytest.importorskip("flask_login")
    mcp = MCP(name="login")
    app = Flask("login_app")
    app.config.update(TESTING=True, SECRET_KEY="test")
    manager = flask_login.LoginManager(app)

    class User(flask_login.UserMixin):
        def __init__(self, user_id: str) -> None:
            self.id = user_id

    @manager.request_loader
    def from_header(req: t.Any) -> User | None:
        return User("ada") if req.headers.get("Authorization") == "Bearer ada-token" else None

    @app.get("/me")
    @flask_login.login_required
    def me() -> dict[str, str]:
        """Who is calling."""
        return {"user": flask_login.current_user.id}

    mcp.init_app(app)
    expose_routes(mcp, app, ["me"])
    signed_in = make_client(app, era="modern", headers={"Authorization": "Bearer ada-token"})
    assert signed_in.call_tool("me")["structuredContent"] == {"user": "ada"}
    refused = make_client(app, era="modern").call_tool("me")
    assert refused["isError"] is True and "401 UNAUTHORIZED" in refused["content"][0]["text"]


# -- @mcp.tool stacked on a route: the tool is the route ----------------------------------------------


@pytest.mark.parametrize("tool_above", [True, False], ids=["tool above route", "route above tool"])
def test_a_tool_stacked_on_a_route_goes_through_the_route(make_client: t.Any, tool_above: bool) -> None:
    mcp = MCP(name="stacked")
    app = Flask("stacked_app")
    app.config.update(TESTING=True)
    mcp.init_app(app)  # before the routes: they are found when the tool is called
    seen: list[str] = []

    @app.before_request
    def note_the_request() -> None:
        seen.append(f"{request.method} {request.full_path}")

    def read(note_id: int) -> dict[str, t.Any]:
        """Read a note in a format."""
        return {"id": note_id, "format": request.args.get("format", "plain")}

    def add() -> dict[str, t.Any]:
        """Add a note."""
        text = request.get_json()["text"]
        return {"text": text, "length": len(text)}

    read_route, add_route = app.get("/notes/<int:note_id>"), app.post("/notes")
    add_schema = {"text": fields.String(required=True)}
    if tool_above:
        mcp.tool(read_route(read))
        mcp.tool(input_schema=add_schema)(add_route(add))
    else:
        read_route(mcp.tool(read))
        add_route(mcp.tool(input_schema=add_schema)(add))

    client = make_client(app, era="modern")
    # Views that read request.args and request.get_json() find the tool's arguments there.
    assert client.call_tool("read", {"note_id": 7})["structuredContent"] == {"id": 7, "format": "plain"}
    assert client.call_tool("add", {"text": "hi"})["structuredContent"] == {"text": "hi", "length": 2}
    assert [entry for entry in seen if "/notes" in entry] == ["GET /notes/7?", "POST /notes?"]
    # The routes still answer HTTP clients, and the REST surface calls the same route.
    assert app.test_client().get("/notes/3?format=md").get_json() == {"id": 3, "format": "md"}
    assert app.test_client().post("/mcp/rest/tools/add", json={"text": "abc"}).get_json() == {
        "result": {"text": "abc", "length": 3}
    }


def test_a_stacked_tool_behind_a_login_decorator_answers_the_callers_token(make_client: t.Any) -> None:
    mcp = MCP(name="stacked-auth")
    app = Flask("stacked_auth")
    app.config.update(TESTING=True)

    def token_required(view: t.Callable[..., t.Any]) -> t.Callable[..., t.Any]:
        @functools.wraps(view)
        def checked(**kwargs: t.Any) -> t.Any:
            if request.headers.get("Authorization") != "Bearer app-token":
                return jsonify(message="token needed"), 401
            return view(**kwargs)

        return checked

    @app.get("/secret/<name>")
    @token_required
    @mcp.tool
    def secret(name: str) -> dict[str, str]:
        """A secret by name."""
        return {"name": name, "secret": name[::-1]}

    mcp.init_app(app)
    assert make_client(app, era="modern", headers={"Authorization": "Bearer app-token"}).call_tool(
        "secret", {"name": "abc"}
    )["structuredContent"] == {"name": "abc", "secret": "cba"}
    refused = make_client(app, era="modern").call_tool("secret", {"name": "abc"})
    assert refused["isError"] is True and "401 UNAUTHORIZED: token needed" in refused["content"][0]["text"]


def test_a_plain_tool_function_is_called_directly(make_client: t.Any) -> None:
    """Only a function the app routes to goes through a route; others run as they always did."""
    mcp = MCP(name="plain")

    @mcp.tool
    def add(a: int, b: int) -> int:
        return a + b

    app = Flask("plain_app")
    app.config.update(TESTING=True)
    mcp.init_app(app)
    assert make_client(app, era="modern").call_tool("add", {"a": 1, "b": 2})["structuredContent"] == {"result": 3}
