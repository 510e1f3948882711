"""Registration, lookup and paged listings."""

from __future__ import annotations

import base64
import json
import typing as t

import pytest

from flask_mcp.components.build import build_prompt, build_resource, build_tool
from flask_mcp.components.registry import MAX_CURSOR_OFFSET, InvalidCursor, Registry, decode_cursor, encode_cursor


def make_tool(name: str):
    def func() -> str:
        return name

    return build_tool(func, name=name)


def resource(uri: str):
    def func(**kwargs: str) -> str:
        return uri

    return build_resource(func, uri)


@pytest.mark.parametrize("offset", [0, 1, 99, 12345])
def test_cursor_round_trip(offset: int) -> None:
    assert decode_cursor(encode_cursor(offset)) == offset


@pytest.mark.parametrize("cursor", ["", "!!!", "bm9wZQ", encode_cursor(1)[:-1] + "*", "bzEy\n"])
def test_foreign_cursors_are_invalid(cursor: str) -> None:
    with pytest.raises(InvalidCursor):
        decode_cursor(cursor)


def forged(text: str) -> str:
    """A cursor in the server's own encoding, around any text."""
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


#: Cursors whose offset is not a plain ASCII number within bounds.
FORGED_CURSORS = [
    forged("o²"),  # isdigit() but not int()
    forged("o٣"),  # int() reads it as 3
    forged("o\uff11"),
    forged("o" + "9" * 5000),  # past int()'s digit limit
    forged(f"o{MAX_CURSOR_OFFSET + 1}"),
    forged("o-1"),
    forged("o+1"),
    forged("o 1"),
    forged("o1_0"),
    forged("o"),
    "A" * 100_000,  # far longer than any cursor the server issues
]


@pytest.mark.parametrize("cursor", FORGED_CURSORS)
def test_forged_offsets_are_invalid(cursor: str) -> None:
    with pytest.raises(InvalidCursor):
        decode_cursor(cursor)


def test_offsets_are_bounded() -> None:
    assert decode_cursor(encode_cursor(MAX_CURSOR_OFFSET)) == MAX_CURSOR_OFFSET
    with pytest.raises(InvalidCursor):
        decode_cursor(encode_cursor(MAX_CURSOR_OFFSET + 1))


@pytest.mark.parametrize("size", [1, 2, 3, 7, None])
def test_pages_cover_every_item_once(size: int | None) -> None:
    registry = Registry()
    names = [f"tool_{i}" for i in range(7)]
    for name in names:
        registry.add_tool(make_tool(name))
    seen, cursor, pages = [], None, 0
    while True:
        page = registry.page("tools", cursor, size)
        pages += 1
        seen.extend(item["name"] for item in page.items)
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    assert seen == names
    assert pages == (1 if size is None else -(-len(names) // size))


def test_cursor_past_the_end_is_invalid() -> None:
    registry = Registry()
    registry.add_tool(make_tool("a"))
    with pytest.raises(InvalidCursor):
        registry.page("tools", encode_cursor(5), 10)


def test_listing_follows_new_registrations() -> None:
    registry = Registry()
    registry.add_tool(make_tool("a"))
    assert [t["name"] for t in registry.page("tools", None, None).items] == ["a"]
    registry.add_tool(make_tool("b"))
    assert [t["name"] for t in registry.page("tools", None, None).items] == ["a", "b"]


def test_duplicates_are_refused() -> None:
    registry = Registry()
    registry.add_tool(make_tool("a"))
    with pytest.raises(ValueError, match="already registered"):
        registry.add_tool(make_tool("a"))
    registry.add_resource(resource("x://one"))
    with pytest.raises(ValueError, match="already registered"):
        registry.add_resource(resource("x://one"))


def test_find_resource_prefers_static_then_first_matching_template() -> None:
    registry = Registry()
    registry.add_resource(resource("x://{a}"))
    registry.add_resource(resource("x://fixed"))
    registry.add_resource(resource("x://{b}/more"))
    static, variables = registry.find_resource("x://fixed")
    assert static.uri == "x://fixed" and variables == {}
    template, variables = registry.find_resource("x://val")
    assert template.template.template == "x://{a}" and variables == {"a": "val"}
    template, variables = registry.find_resource("x://val/more")
    assert template.template.template == "x://{b}/more" and variables == {"b": "val"}
    assert registry.find_resource("y://val") is None


def test_has_completions() -> None:
    registry = Registry()

    def prompt(topic: str) -> str:
        return topic

    registry.add_prompt(build_prompt(prompt))
    assert not registry.has_completions()
    registry.add_prompt(build_prompt(prompt, name="p2", completions={"topic": ["a"]}))
    assert registry.has_completions()


def test_list_results_are_encoded_once_and_refreshed_on_registration() -> None:
    registry = Registry()
    registry.add_tool(make_tool("a"))
    first = registry.list_result("tools", None, 10)
    assert registry.list_result("tools", None, 10) is first
    assert json.loads(first.text) == first == {"tools": [registry.tools["a"].descriptor]}
    registry.add_tool(make_tool("b"))
    second = registry.list_result("tools", None, 1)
    assert [tool["name"] for tool in second["tools"]] == ["a"] and second["nextCursor"] == encode_cursor(1)
    assert [tool["name"] for tool in registry.list_result("tools", None, 10)["tools"]] == ["a", "b"]


def _text(uri: str) -> t.Any:
    return build_resource(lambda: uri, uri)


def test_replace_swaps_components_in_one_step_or_not_at_all() -> None:
    registry = Registry()
    registry.add_resource(_text("a://1"))
    registry.add_resource(_text("a://2"))
    registry.add_resource(_text("b://taken"))
    before = registry.resources
    changes: list[str] = []
    registry.on_change(changes.append)
    registry.replace("resources", ["a://1", "a://2"], {"a://2": _text("a://2"), "a://3": _text("a://3")})
    assert set(registry.resources) == {"a://2", "a://3", "b://taken"} and changes == ["resources"]
    assert registry.resources is not before  # a new table: a reader holding the old one sees it whole
    with pytest.raises(ValueError, match="already registered"):
        registry.replace("resources", ["a://3"], {"b://taken": _text("b://taken")})
    assert set(registry.resources) == {"a://2", "a://3", "b://taken"}


def test_a_resource_that_follows_a_tool_is_served_only_with_it() -> None:
    registry = Registry()
    view = _text("ui://plot/view")
    view.follows_tool = "plot"
    registry.add_resource(view)  # before its tool: registered, not served
    assert "ui://plot/view" not in registry.resources
    registry.add_tool(build_tool(lambda: "plotted", name="plot"))
    assert "ui://plot/view" in registry.resources
    registry.hide([("tools", "plot")])
    assert "ui://plot/view" not in registry.resources
    registry.hide([])
    assert "ui://plot/view" in registry.resources
    registry.discard("tools", "plot")
    assert "ui://plot/view" not in registry.registered("resources")
