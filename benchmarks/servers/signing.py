"""The signed-in scenarios' credentials: an RS256 key and the access token it signs, and a static token.

flask_mcp (``JWTBackend``) and the signed-in floor verify the same token with
the same public key, for the same issuer and audience: signature, ``exp``,
``aud`` and ``iss``, which is what any resource server checks. The key is a
file of its own, made once for these benchmarks and trusted by nothing else:
generating one in each process costs a number of instructions that varies
by hundreds of millions, which would drown a count per call.
"""

from __future__ import annotations

import time
from pathlib import Path

import jwt
from cryptography.hazmat.primitives import serialization

ISSUER = "https://issuer.bench.example"
AUDIENCE = "http://127.0.0.1:8000/mcp"
_KEY = serialization.load_pem_private_key(Path(__file__).with_name("signing_key.pem").read_bytes(), password=None)
#: The public key in PEM, as both sides are configured with it.
PUBLIC_PEM = (
    _KEY.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode()
)
#: An access token valid for a day, with a scope the tool needs.
TOKEN = jwt.encode(
    {"iss": ISSUER, "aud": AUDIENCE, "sub": "ada", "scope": "notes", "exp": int(time.time()) + 86_400},
    _KEY,
    algorithm="RS256",
)
#: The static-token scenarios' bearer token (``StaticTokenBackend``, and a view comparing it).
STATIC_TOKEN = "bench-static-token-0123456789abcdef"
