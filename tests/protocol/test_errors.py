"""How failures are worded for the client."""

from __future__ import annotations

import marshmallow as ma
import pytest
from werkzeug.exceptions import NotFound

from flask_mcp.protocol.errors import (
    MASKED_MESSAGE,
    NotFoundError,
    ToolError,
    describe_exception,
    describe_validation_error,
    is_expected,
)


class Inner(ma.Schema):
    size = ma.fields.Integer(required=True)


class Outer(ma.Schema):
    name = ma.fields.String(required=True)
    inner = ma.fields.Nested(Inner, required=True)
    tags = ma.fields.List(ma.fields.Integer())


def test_validation_messages_name_nested_fields() -> None:
    with pytest.raises(ma.ValidationError) as info:
        Outer().load({"inner": {"size": "x"}, "tags": [1, "a"], "extra": 1})
    message = describe_validation_error(info.value)
    for part in (
        "name: Missing data for required field.",
        "inner.size: Not a valid integer.",
        "tags.1: ",
        "extra: Unknown field.",
    ):
        assert part in message


def test_schema_level_messages_have_no_field() -> None:
    assert describe_validation_error(ma.ValidationError("whole thing is wrong")) == "whole thing is wrong"


@pytest.mark.parametrize(
    ("exc", "expose", "expected"),
    [
        (ToolError("insufficient funds"), False, "insufficient funds"),
        (ma.ValidationError({"a": ["bad"]}), False, "a: bad"),
        (NotFoundError("no such order"), False, "no such order"),
        (RuntimeError("db password=x"), False, MASKED_MESSAGE),
        (RuntimeError("db password=x"), True, "RuntimeError: db password=x"),
    ],
)
def test_describe_exception(exc: BaseException, expose: bool, expected: str) -> None:
    assert describe_exception(exc, expose=expose) == expected


def test_expected_failures() -> None:
    assert is_expected(ToolError("x")) and is_expected(NotFoundError("x"))
    assert not is_expected(KeyError("x")) and not is_expected(NotFound())
