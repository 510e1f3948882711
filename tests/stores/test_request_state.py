"""The sealed requestState of input rounds: signed, timestamped, and the key shared through the store."""

from __future__ import annotations

import typing as t

import itsdangerous.timed
import pytest
from flask import Flask
from flask_caching import Cache

from flask_mcp.core.rounds import StateRejected
from flask_mcp.stores.request_state import KEY_CACHE_KEY, SignedState, shared_key

from ..conftest import START, Clock


def test_a_sealed_payload_opens_again() -> None:
    sealer = SignedState("secret", max_age=60)
    payload = {"c": "caller", "r": "request", "a": {"user_name": {"action": "accept", "content": {"name": "Ada"}}}}
    token = sealer.seal(payload)
    assert isinstance(token, str) and token.isascii()
    assert sealer.open(token) == payload


@pytest.mark.parametrize(
    "alter",
    [
        lambda token: token + "x",
        # One character changed inside a segment (a segment's last one may carry unused bits).
        lambda token: _changed_at(
            token, next(i for i in range(len(token) // 2, len(token) - 1) if token[i : i + 2].isalnum())
        ),
        lambda token: "x" + token,
        lambda token: "",
        lambda token: "not a token at all",
    ],
)
def test_an_altered_token_is_refused(alter: t.Callable[[str], str]) -> None:
    sealer = SignedState("secret", max_age=60)
    with pytest.raises(StateRejected, match="integrity"):
        sealer.open(alter(sealer.seal({"a": {}})))


def _changed_at(token: str, index: int) -> str:
    return token[:index] + ("A" if token[index] != "A" else "B") + token[index + 1 :]


def test_another_key_cannot_open_it() -> None:
    with pytest.raises(StateRejected, match="integrity"):
        SignedState("other", max_age=60).open(SignedState("secret", max_age=60).seal({"a": {}}))


def test_an_old_token_has_expired(monkeypatch: pytest.MonkeyPatch) -> None:
    """Sealed 61 seconds ago with a 60-second lifetime: refused, saying so."""
    clock = Clock(START)
    monkeypatch.setattr(itsdangerous.timed, "time", clock)
    sealer = SignedState("secret", max_age=60)
    token = sealer.seal({"a": {}})
    clock.now += 60
    assert sealer.open(token) == {"a": {}}
    clock.now += 1
    with pytest.raises(StateRejected, match="expired"):
        sealer.open(token)


def test_keys_rotate_newest_first() -> None:
    """A state sealed with the old key still opens while it is listed; new states use the newest."""
    old = SignedState("old", max_age=60).seal({"a": 1})
    rotated = SignedState(["new", "old"], max_age=60)
    assert rotated.open(old) == {"a": 1}
    assert SignedState("new", max_age=60).open(rotated.seal({"a": 2})) == {"a": 2}


def test_the_key_function_runs_once_on_first_use() -> None:
    calls: list[int] = []

    def key() -> str:
        calls.append(1)
        return "secret"

    sealer = SignedState(key, max_age=60)
    assert calls == []
    sealer.open(sealer.seal({"a": {}}))
    assert calls == [1]


def test_processes_sharing_a_store_share_the_generated_key() -> None:
    """The first process makes the key; every other one reads the same from the store."""
    app = Flask(__name__)
    cache = Cache(app, config={"CACHE_TYPE": "SimpleCache"})
    with app.app_context():
        first = shared_key(cache)
        assert shared_key(cache) == first == cache.get(KEY_CACHE_KEY)
        a, b = SignedState(lambda: shared_key(cache), 60), SignedState(lambda: shared_key(cache), 60)
        assert b.open(a.seal({"a": {"k": 1}})) == {"a": {"k": 1}}


@pytest.mark.filterwarnings("ignore:Flask-Caching:UserWarning")
def test_a_store_that_keeps_nothing_is_a_clear_error() -> None:
    app = Flask(__name__)
    cache = Cache(app, config={"CACHE_TYPE": "NullCache"})
    with app.app_context(), pytest.raises(RuntimeError, match="MCP_REQUEST_STATE_SECRET"):
        shared_key(cache)
