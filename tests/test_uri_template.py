"""RFC 6570 level-1 URI templates."""

from __future__ import annotations

import pytest

from flask_mcp.uri_template import URITemplate


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
    uri = template.expand(user="a/b c", post=7)
    assert uri == "users://a%2Fb%20c/posts/7"
    assert template.match(uri) == {"user": "a/b c", "post": "7"}


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
