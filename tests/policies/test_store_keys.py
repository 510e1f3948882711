"""Hash tags of the store's keys: one per owner, never cut short by what an owner holds."""

from __future__ import annotations

import pytest

from flask_mcp.policies.store_keys import key, tag


def test_a_minted_id_is_its_own_tag() -> None:
    assert key("session", "abc-DEF_123") == "session:{abc-DEF_123}"
    assert key("inflight", "abc", repr(1)) == "inflight:{abc}:1"


@pytest.mark.parametrize("owner", ["a}b", "{x}", "", "é", "x" * 65, "a b"])
def test_anything_else_is_hashed_into_a_tag_without_braces(owner: str) -> None:
    found = tag(owner)
    assert found.startswith("{") and found.endswith("}") and "{" not in found[1:-1] and "}" not in found[1:-1]
    assert len(found) > 2 and tag(owner) == found


def test_the_tag_is_the_first_braces_of_the_key() -> None:
    """A lock (``<key>:lock``) and every key of one owner hash to the owner's tag alone."""
    name = key("subs", "s1") + ":lock"
    assert name[name.index("{") + 1 : name.index("}")] == "s1"
