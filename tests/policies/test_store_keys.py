"""Hash tags of the store's keys: one per owner, never cut short by what an owner holds."""

from __future__ import annotations

import typing as t

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flask_mcp.policies import store_keys
from flask_mcp.policies.store_keys import (
    SESSION_SWEEP_CURSOR,
    key,
    session_end_count,
    session_end_entry,
    session_ended,
    session_sweep_claim,
    tag,
)


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


def test_the_table_names_every_key_of_the_session_ends() -> None:
    """The session ends' keys are made here, and the module's table names each family."""
    made = [
        session_end_entry(7, 1),
        session_end_count(7),
        session_sweep_claim(7),
        session_ended("s1"),
        SESSION_SWEEP_CURSOR,
    ]
    table = t.cast(str, store_keys.__doc__)
    for name in made:
        family = name.split(":", 1)[0]
        assert f"``{family}``" in table, family
    assert made[:3] == ["sess-end:{7}:1", "sess-end-n:{7}", "sess-sweep:{7}"]
    assert made[3] == key("sess-ended", "s1")


@settings(max_examples=200, database=None)
@given(owner=st.text(max_size=200))
def test_the_tags_kept_are_those_of_short_owners_and_the_same_as_worked_out(owner: str) -> None:
    """What a client sends (a session id, a subject) costs the cache of tags at most 4096 short strings."""
    if store_keys._short_tag.cache_info().currsize >= 4000:
        store_keys._short_tag.cache_clear()  # room for this example's owner: what is kept is then seen
    before = store_keys._short_tag.cache_info()
    assert tag(owner) == store_keys._tag(owner)
    after = store_keys._short_tag.cache_info()
    kept = after.currsize - before.currsize
    assert kept == (1 if len(owner) <= 64 and after.misses > before.misses else 0)
    assert after.maxsize == 4096 and after.currsize <= after.maxsize
