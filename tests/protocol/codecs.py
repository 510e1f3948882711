"""The two JSON codecs a process may run with: orjson where it is installed, the standard library otherwise."""

from __future__ import annotations

import typing as t

import pytest

from flask_mcp.protocol import fast_json


@pytest.fixture(params=["orjson", "standard library"])
def codec(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> t.Iterator[str]:
    """Run the test with orjson's fast paths (skipped without orjson), then without them."""
    if request.param == "orjson" and not fast_json.AVAILABLE:
        pytest.skip("orjson is not installed")
    if request.param == "standard library":
        monkeypatch.setattr(fast_json, "orjson", None)
    yield request.param
