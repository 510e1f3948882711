"""Run-time changes called where they cannot be made say what is missing, in the words of the caller's mistake."""

from __future__ import annotations

import re
import typing as t

import pytest
from flask import Flask

from flask_mcp import MCP

CHANGES: list[tuple[str, t.Callable[[MCP], None]]] = [
    ("disable()", lambda mcp: mcp.disable("add")),
    ("enable()", lambda mcp: mcp.enable("add")),
    ("reload()", lambda mcp: mcp.reload()),
]


def server() -> MCP:
    mcp = MCP(name="changes")

    @mcp.tool
    def add(a: int, b: int) -> int:
        return a + b

    return mcp


@pytest.mark.parametrize(("method", "change"), CHANGES)
def test_outside_an_app_context_a_change_asks_for_one(make_app: t.Any, method: str, change: t.Any) -> None:
    mcp = server()
    make_app(mcp)
    with pytest.raises(RuntimeError, match=re.escape(f"{method} needs an app context")) as error:
        change(mcp)
    assert "app.app_context()" in str(error.value) and "NullCache" not in str(error.value)


@pytest.mark.parametrize(("method", "change"), CHANGES)
def test_in_the_context_of_another_app_a_change_says_so(make_app: t.Any, method: str, change: t.Any) -> None:
    mcp = server()
    make_app(mcp)
    with Flask("elsewhere").app_context(), pytest.raises(RuntimeError, match=r"not set up on the app 'elsewhere'"):
        change(mcp)


@pytest.mark.filterwarnings("ignore:Flask-Caching.*NullCache")
def test_an_app_without_a_session_cache_still_says_it_has_none(make_app: t.Any) -> None:
    mcp = server()
    app = make_app(mcp, MCP_STATELESS=True, MCP_CACHE_TYPE="NullCache")
    with app.app_context(), pytest.raises(RuntimeError, match="need the app's session cache"):
        mcp.disable("add")
