"""Decimal numerals read from client input: headers, event ids, cursors.

Python's ``int()`` and ``str.isdigit()`` accept far more than a protocol
does: other scripts' digits (``"٣"`` is 3), superscripts that ``isdigit``
admits but ``int`` refuses (``"²"``), signs, ``_`` separators, surrounding
whitespace, and thousands of digits whose conversion costs CPU or fails
with ``ValueError``. Every number a client sends as text goes through
:func:`parse_numeral` instead, so each of those is refused the same way,
before any conversion.
"""

from __future__ import annotations

__all__ = ["parse_numeral"]


def parse_numeral(text: str, maximum: int) -> int:
    """The value of *text*, a non-negative decimal numeral no larger than *maximum*.

    Only ASCII ``0``-``9`` are digits, and there may be no more of them than
    *maximum* has, so the conversion's cost is bounded by *maximum* too.

    :raises ValueError: *text* is empty, has anything but ASCII digits
        (signs, spaces and ``_`` included), is longer than *maximum*'s
        numeral, or its value is larger than *maximum*.
    """
    # isascii() first: for ASCII text, isdigit() is exactly [0-9].
    if not text or len(text) > len(str(maximum)) or not (text.isascii() and text.isdigit()):
        raise ValueError(f"not a decimal numeral of at most {len(str(maximum))} ASCII digits")
    value = int(text)
    if value > maximum:
        raise ValueError(f"{value} is larger than {maximum}")
    return value
