"""RFC 6570 URI templates: level 1, reserved, explode and query expressions, and the traversal guard."""

from __future__ import annotations

import typing as t

import pytest

from flask_mcp.components.uri_template import URITemplate


@pytest.mark.parametrize(
    ("template", "uri", "expected"),
    [
        ("notes://{note_id}", "notes://42", {"note_id": "42"}),
        ("notes://{note_id}", "notes://a%20b", {"note_id": "a b"}),
        ("users://{user}/posts/{post}", "users://ann/posts/7", {"user": "ann", "post": "7"}),
        ("file:///{name}.txt", "file:///report.txt", {"name": "report"}),
        ("notes://{note_id}", "notes://1/2", None),
        ("notes://{note_id}", "notes://", None),
        ("notes://{note_id}", "other://1", None),
        ("users://{user}/posts/{post}", "users://ann/posts/7/extra", None),
        ("config://app", "config://app", {}),
    ],
)
def test_match(template: str, uri: str, expected: dict[str, str] | None) -> None:
    assert URITemplate(template).match(uri) == expected


def test_expand_round_trips_through_match() -> None:
    template = URITemplate("users://{user}/posts/{post}")
    uri = template.expand(user="a b?c#d", post=7)
    assert uri == "users://a%20b%3Fc%23d/posts/7"
    assert template.match(uri) == {"user": "a b?c#d", "post": "7"}


def test_a_value_with_a_separator_expands_but_never_matches() -> None:
    """expand() encodes any value; match() keeps the promise that a value holds no "/"."""
    template = URITemplate("users://{user}/posts/{post}")
    assert template.expand(user="a/b", post=7) == "users://a%2Fb/posts/7"
    assert template.match("users://a%2Fb/posts/7") is None


def test_literal_parts_are_not_patterns() -> None:
    assert URITemplate("a.b://{x}").match("aXb://1") is None


@pytest.mark.parametrize(
    "template",
    [
        "x://{#frag}",
        "x://{.ext}",
        "x://{;p}",
        "x://{a:3}",
        "x://{a,b}",
        "x://{+a*}",
        "x://{/a,b}",
        "x://{?q*}",
        "x://{?q}/tail",
        "x://{a",
        "x://a}",
        "x://{a}/{a}",
        "x://{a}{?a}",
        "x://{}",
    ],
)
def test_rejects_expressions_it_cannot_match(template: str) -> None:
    with pytest.raises(ValueError):
        URITemplate(template)


def test_variables_in_order() -> None:
    assert URITemplate("x://{b}/{a}").variables == ["b", "a"]


@pytest.mark.parametrize(
    "uri",
    [
        "echo://..%2F..%2Fetc%2Fpasswd",
        "echo://%2Fetc%2Fpasswd",
        "echo://..%2f..%2fsecret",
        "echo://..%5C..%5Cwindows",
        "echo://a\\b",
        "echo://name%00.txt",
        "echo://..",
        "echo://.",
        "echo://%2e%2e",
        "echo://%2E",
        "echo://%FF%FE",
        "echo://../etc",
        "echo://a/b",
    ],
)
def test_values_never_walk_out_of_a_directory(uri: str) -> None:
    """A single-segment variable never decodes to a separator, a NUL, "." or "..": such a URI does not match."""
    assert URITemplate("echo://{path}").match(uri) is None


@pytest.mark.parametrize(
    ("uri", "value"),
    [
        ("echo://%252F", "%2F"),  # decoded once: the text "%2F", harmless
        ("echo://...", "..."),
        ("echo://a..b", "a..b"),
        ("echo://r%C3%A9sum%C3%A9", "résumé"),
        ("echo://.hidden", ".hidden"),
    ],
)
def test_ordinary_values_still_match(uri: str, value: str) -> None:
    assert URITemplate("echo://{path}").match(uri) == {"path": value}


def test_a_traversal_uri_is_resource_not_found(mcp: t.Any, make_app: t.Any, make_client: t.Any) -> None:
    """Over the endpoint: -32002, and the handler never runs."""
    seen: list[str] = []

    @mcp.resource("echo://{path}")
    def echo(path: str) -> str:
        seen.append(path)
        return path

    client = make_client(make_app(mcp))
    client.initialize()
    error = client.error("resources/read", {"uri": "echo://..%2F..%2Fetc%2Fpasswd"})
    assert error["code"] == -32002 and seen == []


# -- reserved, explode and query expressions -------------------------------------------------------


@pytest.mark.parametrize(
    ("template", "uri", "expected"),
    [
        ("files:///{+path}", "files:///a/b/c.txt", {"path": "a/b/c.txt"}),
        ("files:///{+path}", "files:///r%C3%A9sum%C3%A9/cv%20v2.pdf", {"path": "résumé/cv v2.pdf"}),
        ("files:///{+path}/meta", "files:///a/b/meta", {"path": "a/b"}),
        ("files:///{+path}", "files:///", None),
        ("files:///{+path}", "files:///a?b", None),
        ("docs://{path*}", "docs://guide/intro.md", {"path": "guide/intro.md"}),
        ("docs://{path*}", "docs://one", {"path": "one"}),
        ("docs://{path*}/raw", "docs://a/b/raw", {"path": "a/b"}),
        ("docs://root{/path*}", "docs://root/a/b", {"path": "a/b"}),
        ("docs://root{/path*}", "docs://root", None),
        ("docs://root{/name}", "docs://root/a", {"name": "a"}),
        ("docs://root{/name}", "docs://root/a/b", None),
        (
            "search://{index}{?query,limit}",
            "search://books?query=dune&limit=5",
            {"index": "books", "query": "dune", "limit": "5"},
        ),
        (
            "search://{index}{?query,limit}",
            "search://books?limit=5&query=a%20b",
            {"index": "books", "query": "a b", "limit": "5"},
        ),
        ("search://{index}{?query,limit}", "search://books?limit=5", {"index": "books", "limit": "5"}),
        ("search://{index}{?query,limit}", "search://books", {"index": "books"}),
        ("search://{index}{?query,limit}", "search://books?query=", {"index": "books", "query": ""}),
        ("search://{index}{?query,limit}", "search://books?other=1", None),
        ("search://{index}{?query,limit}", "search://books?query=a&query=b", None),
        ("search://{index}{?query,limit}", "search://books?query", None),
        ("search://{index}{?query}{&page}", "search://b?query=x&page=2", {"index": "b", "query": "x", "page": "2"}),
        ("search://b?fixed=1{&page}", "search://b?fixed=1&page=2", {"page": "2"}),
        ("search://b?fixed=1{&page}", "search://b?fixed=1", {}),
        ("files:///{+path}{?rev}", "files:///a/b.txt?rev=3", {"path": "a/b.txt", "rev": "3"}),
    ],
)
def test_match_higher_levels(template: str, uri: str, expected: dict[str, str] | None) -> None:
    assert URITemplate(template).match(uri) == expected


def test_query_variables_are_the_optional_ones() -> None:
    template = URITemplate("search://{index}{?query,limit}{&page}")
    assert template.variables == ["index", "query", "limit", "page"]
    assert template.query_variables == ["query", "limit", "page"]


@pytest.mark.parametrize(
    ("template", "values", "uri"),
    [
        ("files:///{+path}", {"path": "a b/c?d#e"}, "files:///a%20b/c%3Fd%23e"),
        ("docs://{path*}", {"path": "a b/c"}, "docs://a%20b/c"),
        ("docs://{path*}", {"path": ["a/b", "c"]}, "docs://a%2Fb/c"),
        ("docs://root{/path*}", {"path": "a/b"}, "docs://root/a/b"),
        ("docs://root{/name}", {"name": "a b"}, "docs://root/a%20b"),
        (
            "search://{index}{?query,limit}",
            {"index": "b", "query": "x&y", "limit": 5},
            "search://b?query=x%26y&limit=5",
        ),
        ("search://{index}{?query,limit}", {"index": "b", "limit": 5}, "search://b?limit=5"),
        ("search://{index}{?query,limit}", {"index": "b", "query": None}, "search://b"),
        ("search://b?fixed=1{&page}", {"page": 2}, "search://b?fixed=1&page=2"),
    ],
)
def test_expand_higher_levels(template: str, values: dict[str, t.Any], uri: str) -> None:
    assert URITemplate(template).expand(**values) == uri


@pytest.mark.parametrize(
    ("template", "values"),
    [
        ("files:///{+path}", {"path": "a b/ç/x.txt"}),
        ("docs://{path*}/raw", {"path": "a/b c"}),
        ("docs://root{/path*}", {"path": "a/b"}),
        ("search://{index}{?query,limit}", {"index": "b", "query": "x&y=z #1", "limit": "5"}),
    ],
)
def test_expand_round_trips_through_match_at_higher_levels(template: str, values: dict[str, str]) -> None:
    uri_template = URITemplate(template)
    assert uri_template.match(uri_template.expand(**values)) == values


PATH_TEMPLATES = ["files:///{+path}", "docs://{path*}", "docs://root{/path*}"]
TRAVERSALS = [
    "..",
    ".",
    "../etc/passwd",
    "a/../../etc/passwd",
    "a/./b",
    "a/..",
    "%2e%2e/etc/passwd",
    "%2E%2E/secret",
    "a/%2e%2e/b",
    ".%2e/x",
    "a%2Fb/..%2Fc",
    "%252e%252e/etc/passwd",
    "a/%252e%252e",
    "%25252e%25252e/x",
    "a%252Fb",
    "a%5Cb",
    "a\\b",
    "..\\windows",
    "name%00.txt",
    "%2Fetc/passwd",
    "/etc/passwd",
    "a//b",
    "a/b/",
    "C:/Windows/system32",
    "%FF%FE",
]


@pytest.mark.parametrize("template", PATH_TEMPLATES)
@pytest.mark.parametrize("value", TRAVERSALS)
def test_path_values_never_walk_out_of_a_directory(template: str, value: str) -> None:
    """A value that may hold "/" still has no ".", ".." or empty segment, no encoded or doubly encoded dot."""
    prefix = template.split("{")[0] + ("/" if template.endswith("{/path*}") else "")
    assert URITemplate(template).match(prefix + value) is None


@pytest.mark.parametrize("template", PATH_TEMPLATES)
@pytest.mark.parametrize(
    ("raw", "value"),
    [("a/b.c/d", "a/b.c/d"), ("...", "..."), (".hidden/x", ".hidden/x"), ("a..b/c", "a..b/c"), ("50%25", "50%")],
)
def test_ordinary_paths_still_match(template: str, raw: str, value: str) -> None:
    prefix = template.split("{")[0] + ("/" if template.endswith("{/path*}") else "")
    assert URITemplate(template).match(prefix + raw) == {"path": value}


@pytest.mark.parametrize("query", ["q=..", "q=.", "q=%2e%2e", "q=..%2Fetc", "q=a/b", "q=a%5Cb", "q=%00"])
def test_query_values_keep_the_one_value_rules(query: str) -> None:
    assert URITemplate("search://x{?q}").match(f"search://x?{query}") is None


def test_higher_levels_over_the_endpoint(mcp: t.Any, make_app: t.Any, make_client: t.Any) -> None:
    """Read, listed as written, completed by variable; a traversal is -32002 and the handler never runs."""
    seen: list[tuple[str, int]] = []

    @mcp.resource("files:///{+path}{?limit}", completions={"path": ["docs/a.md", "docs/b.md", "src/c.py"]})
    def read_file(path: str, limit: int = 10) -> str:
        seen.append((path, limit))
        return f"{path}:{limit}"

    client = make_client(make_app(mcp))
    client.initialize()
    assert client.read_resource("files:///docs/a.md?limit=3")[0]["text"] == "docs/a.md:3"
    assert client.read_resource("files:///docs/a.md")[0]["text"] == "docs/a.md:10"
    templates = client.list_resource_templates()
    assert [item["uriTemplate"] for item in templates] == ["files:///{+path}{?limit}"]
    completion = client.complete({"type": "ref/resource", "uri": "files:///{+path}{?limit}"}, "path", "docs")
    assert completion["values"] == ["docs/a.md", "docs/b.md"]
    for uri in ("files:///docs/../../etc/passwd", "files:///%2e%2e/x", "files:///%252e%252e/x"):
        assert client.error("resources/read", {"uri": uri})["code"] == -32002
    assert client.error("resources/read", {"uri": "files:///a.md?limit=many"})["code"] == -32602
    assert seen == [("docs/a.md", 3), ("docs/a.md", 10)]
