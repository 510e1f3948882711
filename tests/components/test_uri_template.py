"""RFC 6570 level-1 URI templates."""

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
    "template", ["x://{+path}", "x://{?q}", "x://{a,b}", "x://{a", "x://a}", "x://{a}/{a}", "x://{}"]
)
def test_rejects_templates_beyond_level_one(template: str) -> None:
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
