"""Routes of flask-smorest and APIFlask apps as tools: the schemas their views declare become the arguments."""

from __future__ import annotations

import datetime
import typing as t

import marshmallow as ma
import pytest
from flask import Flask

from flask_mcp import MCP
from flask_mcp.integrations.routes.expose import expose_routes

flask_smorest = pytest.importorskip("flask_smorest", reason="flask-smorest is in the test extra")
apiflask = pytest.importorskip("apiflask", reason="APIFlask is in the test extra")


class PetQuery(ma.Schema):
    name = ma.fields.String(metadata={"description": "Only pets of this name."})


class Pet(ma.Schema):
    id = ma.fields.Integer(dump_only=True)
    added = ma.fields.DateTime(dump_only=True)
    name = ma.fields.String(required=True)
    tags = ma.fields.List(ma.fields.String(), load_default=list)

    @ma.validates("name")
    def name_is_not_blank(self, value: str, **kwargs: t.Any) -> None:
        # A rule JSON Schema cannot state: only the view's own schema catches it.
        if not value.strip():
            raise ma.ValidationError("A pet needs a name.")


def smorest_app() -> Flask:
    app = Flask("smorest_pets")
    app.config.update(TESTING=True, API_TITLE="Pets", API_VERSION="1", OPENAPI_VERSION="3.1.0")
    api = flask_smorest.Api(app)
    added = datetime.datetime(2026, 1, 2, 3, 4, 5)
    pets: list[dict[str, t.Any]] = [{"id": i, "name": f"pet{i}", "tags": [], "added": added} for i in range(1, 6)]
    blp = flask_smorest.Blueprint("pets", __name__, url_prefix="/pets")

    @blp.get("/")
    @blp.arguments(PetQuery, location="query")
    @blp.response(200, Pet(many=True))
    @blp.paginate(flask_smorest.Page)
    def list_pets(args: dict[str, t.Any]) -> list[dict[str, t.Any]]:
        """List the pets, a page at a time."""
        return [pet for pet in pets if "name" not in args or pet["name"] == args["name"]]

    @blp.post("/")
    @blp.arguments(Pet)
    @blp.response(201, Pet)
    def create_pet(data: dict[str, t.Any]) -> dict[str, t.Any]:
        """Add a pet."""
        pet = {"id": len(pets) + 1, "added": datetime.datetime(2026, 2, 1), **data}
        pets.append(pet)
        return pet

    @blp.get("/<int:pet_id>")
    @blp.response(200, Pet)
    def get_pet(pet_id: int) -> dict[str, t.Any]:
        """One pet."""
        if not 1 <= pet_id <= len(pets):
            flask_smorest.abort(404, message=f"no pet {pet_id}")
        return pets[pet_id - 1]

    api.register_blueprint(blp)
    return app


@pytest.fixture
def smorest_client(make_client: t.Any) -> t.Any:
    mcp = MCP(name="pets")
    app = smorest_app()
    mcp.init_app(app)
    assert sorted(expose_routes(mcp, app, ["pets.*"])) == ["pets_create_pet", "pets_get_pet", "pets_list_pets"]
    return make_client(app, era="modern")


def test_smorest_arguments_and_pagination_are_the_tools_arguments(smorest_client: t.Any) -> None:
    tools = {tool["name"]: tool for tool in smorest_client.list_tools()}
    listing = tools["pets_list_pets"]["inputSchema"]["properties"]
    assert {"name", "page", "page_size"} <= set(listing) and "query" not in listing
    created = tools["pets_create_pet"]["inputSchema"]
    assert set(created["properties"]) == {"name", "tags"} and created["required"] == ["name"]
    # The success response schema of one object is the outputSchema; a list's is not.
    output = tools["pets_get_pet"]["outputSchema"]
    assert set(output["properties"]) == {"id", "name", "tags", "added"}
    assert output["properties"]["added"]["format"] == "date-time"
    assert "outputSchema" not in tools["pets_list_pets"]


def test_smorest_routes_answer_through_their_own_schemas(smorest_client: t.Any) -> None:
    page = smorest_client.call_tool("pets_list_pets", {"page": 2, "page_size": 2})
    assert [pet["id"] for pet in page["structuredContent"]["result"]] == [3, 4]
    assert smorest_client.call_tool("pets_list_pets", {"name": "pet5"})["structuredContent"]["result"][0]["id"] == 5
    created = smorest_client.call_tool("pets_create_pet", {"name": "Rex", "tags": ["dog"]})
    assert created["structuredContent"] == {"id": 6, "name": "Rex", "tags": ["dog"], "added": "2026-02-01T00:00:00"}
    missing = smorest_client.call_tool("pets_get_pet", {"pet_id": 42})
    assert missing["isError"] is True and "404 NOT FOUND: no pet 42" in missing["content"][0]["text"]


def test_the_views_own_validation_answers_an_invalid_call(smorest_client: t.Any) -> None:
    """A value the JSON Schema lets through but the view's schema refuses gets the view's 422."""
    refused = smorest_client.call_tool("pets_create_pet", {"name": "  "})
    assert refused["isError"] is True and "answered 422 UNPROCESSABLE ENTITY" in refused["content"][0]["text"]


def apiflask_app() -> Flask:
    app = apiflask.APIFlask("apiflask_pets")
    app.config.update(TESTING=True)
    pets: dict[int, dict[str, t.Any]] = {}

    class PetIn(apiflask.Schema):
        name = apiflask.fields.String(required=True)

    class Filter(apiflask.Schema):
        prefix = apiflask.fields.String(load_default="")

    @app.post("/pets")
    @app.input(PetIn)
    @app.output(PetIn, status_code=201)
    def add_pet(json_data: dict[str, t.Any]) -> dict[str, t.Any]:
        """Add a pet."""
        pets[len(pets) + 1] = json_data
        return json_data

    @app.get("/pets")
    @app.input(Filter, location="query")
    def find_pets(query_data: dict[str, t.Any]) -> dict[str, t.Any]:
        """Names starting with a prefix."""
        return {"names": sorted(p["name"] for p in pets.values() if p["name"].startswith(query_data["prefix"]))}

    return app


def test_apiflask_inputs_are_the_tools_arguments(make_client: t.Any) -> None:
    mcp = MCP(name="apiflask-pets")
    app = apiflask_app()
    mcp.init_app(app)
    expose_routes(mcp, app, ["add_pet", "find_pets"])
    client = make_client(app, era="modern")
    listed = {tool["name"]: tool for tool in client.list_tools()}
    tools = {name: tool["inputSchema"] for name, tool in listed.items()}
    assert tools["add_pet"]["required"] == ["name"] and set(tools["find_pets"]["properties"]) == {"prefix"}
    # @app.output is the outputSchema; a view without one has none.
    assert set(listed["add_pet"]["outputSchema"]["properties"]) == {"name"}
    assert "outputSchema" not in listed["find_pets"]
    for name in ("Rex", "Rover", "Tom"):
        assert client.call_tool("add_pet", {"name": name})["structuredContent"] == {"name": name}
    assert client.call_tool("find_pets", {"prefix": "R"})["structuredContent"] == {"names": ["Rex", "Rover"]}
    refused = client.call_tool("add_pet", {})
    assert refused["isError"] is True
