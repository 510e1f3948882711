"""A flask-smorest bookshop whose endpoints are also MCP tools, under the app's own auth.

The API is an ordinary flask-smorest app: marshmallow schemas on every
endpoint, a public ``books`` blueprint (one route, creating a book, behind a
token) and an ``admin`` blueprint protected as a whole. Three lines make its
endpoints MCP tools; a tool call goes through the endpoint itself, in the
same process, with the caller's ``Authorization`` header, so the app's auth
decides as it does for HTTP clients.

Run it with ``flask --app examples/smorest_app/app.py run`` and point an MCP
client at ``http://127.0.0.1:5000/mcp`` (token: ``librarian-token``).
"""

from __future__ import annotations

import typing as t

import marshmallow as ma
from flask import Flask
from flask_httpauth import HTTPTokenAuth
from flask_smorest import Api, Blueprint, Page, abort

from flask_mcp import MCP
from flask_mcp.routes import expose_routes

#: Token -> user. A real app keeps these elsewhere.
TOKENS = {"librarian-token": "ada"}

auth = HTTPTokenAuth(scheme="Bearer")


@auth.verify_token
def verify_token(token: str) -> str | None:
    return TOKENS.get(token)


@auth.error_handler
def auth_error(status: int) -> tuple[dict[str, t.Any], int]:
    return {"code": status, "message": "a librarian's token is needed"}, status


class BookQuery(ma.Schema):
    author = ma.fields.String(metadata={"description": "Only books by this author."})


class Book(ma.Schema):
    id = ma.fields.Integer(dump_only=True)
    title = ma.fields.String(required=True)
    author = ma.fields.String(required=True)
    year = ma.fields.Integer(load_default=None, allow_none=True)


class Stats(ma.Schema):
    books = ma.fields.Integer()
    authors = ma.fields.Integer()
    by = ma.fields.String()


BOOKS: dict[int, dict[str, t.Any]] = {}
books = Blueprint("books", __name__, url_prefix="/books", description="The catalogue.")
admin = Blueprint("admin", __name__, url_prefix="/admin", description="For librarians only.")


@books.get("/")
@books.arguments(BookQuery, location="query")
@books.response(200, Book(many=True))
@books.paginate(Page)
def list_books(query: dict[str, t.Any]) -> list[dict[str, t.Any]]:
    """List the catalogue, a page at a time, optionally by one author."""
    return [book for book in BOOKS.values() if query.get("author") in (None, book["author"])]


@books.get("/<int:book_id>")
@books.response(200, Book)
def get_book(book_id: int) -> dict[str, t.Any]:
    """One book of the catalogue."""
    if book_id not in BOOKS:
        abort(404, message=f"no book {book_id}")
    return BOOKS[book_id]


@books.post("/")
@books.arguments(Book)
@books.response(201, Book)
@auth.login_required
def add_book(book: dict[str, t.Any]) -> dict[str, t.Any]:
    """Add a book to the catalogue (librarians only)."""
    book_id = max(BOOKS, default=0) + 1
    BOOKS[book_id] = {"id": book_id, **book}
    return BOOKS[book_id]


@admin.before_request
@auth.login_required
def librarians_only() -> None:
    """Every admin route needs a librarian's token."""


@admin.get("/stats")
@admin.response(200, Stats)
def stats() -> dict[str, t.Any]:
    """How big the catalogue is."""
    return {"books": len(BOOKS), "authors": len({b["author"] for b in BOOKS.values()}), "by": auth.current_user()}


def seed() -> None:
    BOOKS.clear()
    for title, author, year in [
        ("Middlemarch", "George Eliot", 1871),
        ("Silas Marner", "George Eliot", 1861),
        ("Persuasion", "Jane Austen", 1817),
    ]:
        book_id = len(BOOKS) + 1
        BOOKS[book_id] = {"id": book_id, "title": title, "author": author, "year": year}


def create_app(config: t.Mapping[str, t.Any] | None = None) -> Flask:
    app = Flask(__name__)
    app.config.update(API_TITLE="Bookshop", API_VERSION="1", OPENAPI_VERSION="3.1.0", **(config or {}))
    api = Api(app)
    api.register_blueprint(books)
    api.register_blueprint(admin)
    seed()
    mcp = MCP(name="bookshop", version="1.0.0")
    mcp.init_app(app)
    # The endpoints as tools: their schemas become the tools' arguments.
    expose_routes(mcp, app, ["books.*", "admin.*"])
    return app


app = create_app()

if __name__ == "__main__":
    app.run()
