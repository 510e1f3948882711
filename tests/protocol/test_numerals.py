"""Decimal numerals from client input: ASCII digits only, bounded length and value."""

from __future__ import annotations

import pytest

from flask_mcp.protocol.numerals import parse_numeral


@pytest.mark.parametrize(("text", "value"), [("0", 0), ("7", 7), ("100", 100), ("099", 99)])
def test_plain_numerals_are_read(text: str, value: int) -> None:
    assert parse_numeral(text, 100) == value


@pytest.mark.parametrize(
    "text",
    [
        "",
        "²",  # isdigit() admits it, int() refuses it
        "¹0",
        "٣",  # Arabic-Indic three: int() reads it as 3
        "\uff11",  # fullwidth one
        "\u09ed",  # Bengali seven
        "+1",
        "-1",
        " 1",
        "1 ",
        "1\n",
        "1_0",
        "1.0",
        "1e2",
        "0x1",
        "101",  # larger than the maximum
        "0100",  # more digits than the maximum has
        "9" * 5000,  # int() would refuse it with ValueError, after the work
    ],
)
def test_anything_else_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match=r"numeral|larger"):
        parse_numeral(text, 100)


def test_the_error_does_not_echo_the_text() -> None:
    with pytest.raises(ValueError) as info:
        parse_numeral("9" * 5000, 100)
    assert "9999" not in str(info.value)
