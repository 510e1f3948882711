"""Docs search: an MCP server over flask_mcp's own documentation.

Tools rank the sections of ``docs/*.rst`` with BM25, compose a flask_mcp app
from fragments and scaffold a tool module; every page is also a resource.
Run it with ``flask --app examples/docs_search/app.py run`` (serves
http://127.0.0.1:5000/mcp).
"""

from __future__ import annotations

import functools
import keyword
import sys
import typing as t
from pathlib import Path

from flask import Flask
from marshmallow import Schema, ValidationError, fields, validate, validates_schema

from flask_mcp import MCP, NotFoundError

HERE = Path(__file__).resolve().parent
# `flask --app` puts this folder on sys.path; an import by file path does not.
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import app_templates  # noqa: E402  (needs the path set above)
import tool_scaffold  # noqa: E402
from docs_index import VERSIONS, DocsIndex  # noqa: E402

#: The repository root, and the documentation folder it holds.
ROOT = HERE.parents[1]
DOCS_DIR = ROOT / "docs"

mcp = MCP(
    name="flask-mcp-docs",
    version="1.0.0",
    instructions=(
        "Search flask_mcp's documentation with search_docs, read a page as docs://<page>, "
        "start an app with get_app_template and a tool with generate_tool_module."
    ),
)


@functools.cache
def docs() -> DocsIndex:
    """The index of the documentation, built on first use (the pages do not change while serving)."""
    return DocsIndex(DOCS_DIR, ROOT)


def _strict_bool(default: bool, description: str) -> fields.Boolean:
    # JSON true/false only: "yes" or 1 would be accepted by marshmallow's defaults.
    return fields.Boolean(truthy={True}, falsy={False}, load_default=default, metadata={"description": description})


# search_docs


class SearchArgs(Schema):
    """Arguments of ``search_docs``."""

    query = fields.String(required=True, metadata={"description": "Words to look for; blank gives no results."})
    limit = fields.Integer(
        strict=True,
        load_default=10,
        validate=validate.Range(min=1, max=50),
        metadata={"description": "Most results to return."},
    )
    version = fields.String(
        load_default="all",
        validate=validate.OneOf(VERSIONS),
        metadata={"description": "Documentation version; every page indexed is 'latest'."},
    )


class SourceSchema(Schema):
    """Where a result comes from."""

    path = fields.String(required=True, metadata={"description": "The .rst file, relative to the repository."})


class SearchHitSchema(Schema):
    """One ranked section."""

    id = fields.String(required=True, metadata={"description": "<page>#<section slug>"})
    title = fields.String(required=True)
    page = fields.String(required=True, metadata={"description": "Read it as docs://<page>."})
    category = fields.String(required=True, metadata={"description": "The page's title."})
    source = fields.Nested(SourceSchema, required=True)
    score = fields.Float(required=True, metadata={"description": "BM25 score divided by the best one (0..1]."})
    snippet = fields.String(required=True)


class SearchResultSchema(Schema):
    """What ``search_docs`` returns."""

    query = fields.String(required=True)
    version = fields.String(required=True)
    results = fields.List(fields.Nested(SearchHitSchema), required=True)


@mcp.tool(input_schema=SearchArgs, output_schema=SearchResultSchema, annotations={"readOnlyHint": True})
def search_docs(query: str, limit: int, version: str) -> dict[str, t.Any]:
    """Search flask_mcp's documentation; returns the best-matching sections, best first (BM25)."""
    return {"query": query, "version": version, "results": docs().search(query, limit, version)}


# get_app_template


class TemplateArgs(Schema):
    """Arguments of ``get_app_template``."""

    cache = fields.String(
        required=True,
        validate=validate.OneOf(app_templates.CACHES),
        metadata={"description": "Session storage: 'simple' (one process) or 'redis' (shared)."},
    )
    stateless = _strict_bool(False, "Serve without sessions.")
    rest = _strict_bool(True, "Also serve each tool as a REST route with an OpenAPI document.")
    auth = _strict_bool(False, "Require a bearer token on every route.")


class FileSchema(Schema):
    """A generated file."""

    path = fields.String(required=True)
    content = fields.String(required=True)
    size = fields.Integer(required=True, metadata={"description": "Bytes of the UTF-8 content."})


class TemplateResultSchema(Schema):
    """What ``get_app_template`` returns."""

    configuration = fields.Dict(keys=fields.String(), values=fields.Raw(), required=True)
    fragments = fields.List(fields.String(), required=True)
    dependencies = fields.List(fields.String(), required=True)
    files = fields.Dict(keys=fields.String(), values=fields.Nested(FileSchema), required=True)


@mcp.tool(input_schema=TemplateArgs, output_schema=TemplateResultSchema, annotations={"readOnlyHint": True})
def get_app_template(cache: str, stateless: bool, rest: bool, auth: bool) -> dict[str, t.Any]:
    """Compose the files of a flask_mcp app (app.py, requirements.txt, ...) for the chosen configuration."""
    return app_templates.compose(app_templates.Configuration(cache, stateless, rest, auth))


# generate_tool_module


def _identifier(value: str) -> None:
    if not value.isidentifier() or keyword.iskeyword(value) or value.startswith("_"):
        raise ValidationError("Must be a Python identifier that is not a keyword and does not start with '_'.")


def _has_name(value: str) -> None:
    if not tool_scaffold.sanitize_name(value):
        raise ValidationError("Must contain at least one letter or digit.")


class FieldSpecSchema(Schema):
    """One argument of the generated tool."""

    name = fields.String(
        required=True,
        validate=[_identifier, validate.NoneOf(sorted(tool_scaffold.RESERVED_FIELD_NAMES))],
        metadata={"description": "Argument name (a Python identifier)."},
    )
    type = fields.String(required=True, validate=validate.OneOf(list(tool_scaffold.FIELD_TYPES)))
    required = _strict_bool(False, "Whether callers must give it.")


class ScaffoldArgs(Schema):
    """Arguments of ``generate_tool_module``."""

    name = fields.String(required=True, validate=_has_name, metadata={"description": "Tool name; sanitised."})
    # Not called `fields` here: that would shadow marshmallow.fields in this class body.
    field_specs = fields.List(
        fields.Nested(FieldSpecSchema),
        data_key="fields",
        required=True,
        validate=validate.Length(min=1),
        metadata={"description": "The tool's arguments, in order."},
    )

    @validates_schema
    def _distinct(self, data: dict[str, t.Any], **kwargs: t.Any) -> None:
        names = [spec["name"] for spec in data.get("field_specs", [])]
        repeated = sorted({name for name in names if names.count(name) > 1})
        if repeated:
            raise ValidationError(f"Field names must be distinct: {', '.join(repeated)} repeated.", "fields")


class ScaffoldFileSchema(FileSchema):
    """A generated file and what it is."""

    kind = fields.String(required=True, validate=validate.OneOf(["module", "test"]))


class ScaffoldResultSchema(Schema):
    """What ``generate_tool_module`` returns."""

    name = fields.String(required=True)
    fieldCount = fields.Integer(required=True)  # camelCase: the name on the wire
    files = fields.Dict(keys=fields.String(), values=fields.Nested(ScaffoldFileSchema), required=True)


@mcp.tool(input_schema=ScaffoldArgs, output_schema=ScaffoldResultSchema, annotations={"readOnlyHint": True})
def generate_tool_module(name: str, field_specs: list[tool_scaffold.FieldSpec]) -> dict[str, t.Any]:
    """Generate a flask_mcp tool module (a marshmallow schema and an @mcp.tool function) and its test."""
    return tool_scaffold.generate(tool_scaffold.sanitize_name(name), field_specs)


# Resources


def complete_page(value: str, arguments: dict[str, str]) -> list[str]:
    """Page names starting with what was typed."""
    return [page for page in docs().pages if page.startswith(value)]


@mcp.resource("docs://{page}", mime_type="text/x-rst", completions={"page": complete_page})
def doc_page(page: str) -> str:
    """The reStructuredText source of one documentation page."""
    # Only names from the index are read: "../x" or "/etc/passwd" are simply unknown pages.
    path = docs().pages.get(page)
    if path is None:
        raise NotFoundError(f"no documentation page {page!r}")
    return path.read_text(encoding="utf-8")


@mcp.resource("docs://index.json", mime_type="application/json")
def doc_pages() -> list[dict[str, t.Any]]:
    """Every documentation page: its name, title, resource URI and sections."""
    index = docs()
    titles = index.page_titles()
    return [
        {
            "page": page,
            "title": titles.get(page, page),
            "uri": f"docs://{page}",
            "path": path.relative_to(ROOT).as_posix(),
            "sections": [s.title for s in index.sections if s.page == page],
        }
        for page, path in index.pages.items()
    ]


def create_app(config: t.Mapping[str, t.Any] | None = None) -> Flask:
    """Build the app; *config* overrides ``app.config`` (e.g. ``MCP_STATELESS``)."""
    app = Flask(__name__)
    app.config.update(config or {})
    mcp.init_app(app)
    return app


app = create_app()

if __name__ == "__main__":
    app.run(host="127.0.0.1", port=5000)
