"""The table of verified tokens: bounded, oldest first out, nothing returned past its expiry."""

from __future__ import annotations

import time

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from flask import Flask, request
from hypothesis import given, settings
from hypothesis import strategies as st

from flask_mcp import Principal
from flask_mcp.auth import JWTBackend
from flask_mcp.auth.verified import VerifiedTokens

operations = st.lists(
    st.tuples(st.sampled_from(["put", "get", "drop"]), st.integers(0, 30), st.floats(0, 100), st.floats(0, 100)),
    max_size=200,
)


@settings(max_examples=200, deadline=None)
@given(size=st.integers(1, 8), leeway=st.floats(0, 5), steps=operations)
def test_the_table_never_holds_more_than_its_size_nor_answers_an_expired_token(
    size: int, leeway: float, steps: list[tuple[str, int, float, float]]
) -> None:
    table = VerifiedTokens(size=size, leeway=leeway)
    kept: dict[str, float] = {}
    for operation, number, expires_at, now in steps:
        token = f"token-{number}"
        if operation == "put":
            table.put(token, Principal(token, expires_at=expires_at), "key")
            kept.pop(token, None)
            kept[token] = expires_at
            while len(kept) > size:
                del kept[next(iter(kept))]
        elif operation == "drop":
            table.drop(token)
            kept.pop(token, None)
        else:
            found = table.get(token, now)
            if found is not None:
                assert now < kept[token] + leeway and found[0].subject == token and found[1] == "key"
            else:
                assert token not in kept or now >= kept[token] + leeway
                kept.pop(token, None)
        assert len(table) <= size
        assert len(table) == len(kept)


def test_a_token_without_expiry_is_never_kept() -> None:
    table = VerifiedTokens(size=2)
    table.put("forever", Principal("someone"))
    assert table.get("forever", 0) is None and len(table) == 0


def test_a_table_needs_room() -> None:
    with pytest.raises(ValueError, match="room for one"):
        VerifiedTokens(size=0)


def test_the_jwt_backend_verifies_once_then_refuses_past_exp_and_once_its_key_is_gone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    published = {"keys": [{**jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key(), as_dict=True), "kid": "k1"}]}
    current = {"document": published}
    backend = JWTBackend(issuer="https://issuer.example", jwks=lambda: current["document"])
    backend.configure("https://mcp.example/mcp")
    exp = time.time() + 60
    claims = {"sub": "ada", "iss": "https://issuer.example", "aud": "https://mcp.example/mcp", "exp": exp}
    token = jwt.encode(claims, key, algorithm="RS256", headers={"kid": "k1"})
    decoded: list[str] = []
    decode = jwt.decode
    monkeypatch.setattr(jwt, "decode", lambda *args, **kwargs: decoded.append("once") or decode(*args, **kwargs))
    with Flask("jwt").test_request_context(headers={"Authorization": f"Bearer {token}"}):
        principals = [backend.authenticate(request) for _ in range(3)]
        assert [p.subject if p else None for p in principals] == ["ada"] * 3
        assert decoded == ["once"]  # verified once, answered from memory twice
        backend.clock = lambda: exp + 1
        assert backend.authenticate(request) is None  # past exp: refused
        backend.clock = time.time
        assert backend.authenticate(request) is not None
        other = rsa.generate_private_key(public_exponent=65537, key_size=2048).public_key()
        current["document"] = {"keys": [{**jwt.algorithms.RSAAlgorithm.to_jwk(other, as_dict=True), "kid": "k2"}]}
        assert backend.authenticate(request) is None  # the issuer rotated the key out
        current["document"] = published
        assert backend.authenticate(request) is not None
        current["document"] = {"keys": []}  # a source that no longer reads refuses, never fails the request
        assert backend.authenticate(request) is None
