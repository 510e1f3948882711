"""Property-based tests of the Agent Skills methods: any request, from any caller, is answered soundly and
shows a skill only to a caller who may read it.

Hypothesis sends ``skills/list``, ``skills/get``, ``resources/directory/read``,
``resources/read`` and ``resources/list`` with drawn URIs and cursors, in both
protocol eras, as a caller with the scope a guarded skill needs, as one without
it, and as nobody. Whatever it sends: never a 5xx, strict JSON without
internals (:func:`tests.test_fuzz.assert_sound`), and nothing that tells the
guarded skill's contents (its description, its file names, its digests) to a
caller without the scope, nor a skill left out by its tags to anyone, unless the
request itself carried the text. ``HYPOTHESIS_PROFILE=fuzz`` runs thousands of
examples, as for ``tests/test_fuzz.py``.
"""

from __future__ import annotations

import json
import tempfile
import typing as t
from pathlib import Path

from flask import Flask
from hypothesis import given
from hypothesis import strategies as st

from flask_mcp import MCP, ScopeRequired
from flask_mcp.components.registry import encode_cursor
from flask_mcp.components.skills import load_skill

from ..test_fuzz import ACCEPT, assert_sound, json_values

MODERN = "2026-07-28"
TOKENS = {"full": {"subject": "f", "scopes": ["secret"]}, "plain": {"subject": "p", "scopes": []}}
#: Text only the guarded skill holds; and only the skill left out by its tags.
SECRET_MARKERS = ("MARKER-7F3A", "ledger-7f3a", "Secret fields")
EXCLUDED_MARKERS = ("internal-tools", "MARKER-INTERNAL")


def _skill(root: Path, name: str, description: str, extra: dict[str, str]) -> Path:
    folder = root / name
    (folder / "references").mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n---\n\nRead the references.\n")
    for relative, text in extra.items():
        (folder / relative).write_text(text)
    return folder


def build_app(root: Path) -> tuple[Flask, set[str]]:
    """Three skills (public, guarded by the scope ``secret``, left out by its tags), and the guarded one's digests."""
    public = _skill(root, "open-notes", "Notes for all", {"references/FORMS.md": "Fields.\n", "notes.txt": "n\n"})
    secret = _skill(
        root,
        "secret-plans",
        "The plans MARKER-7F3A",
        {"references/FORMS.md": "Secret fields.\n", "ledger-7f3a.csv": "pin,1234\n"},
    )
    internal = _skill(root, "internal-tools", "Tools MARKER-INTERNAL", {"references/RUN.md": "Run.\n"})
    server = MCP(name="fuzz-skills", version="1.0.0")
    server.add_skill(public)
    server.add_skill(secret, permissions=[ScopeRequired("secret")])
    server.add_skill(internal, tags=["internal"])
    app = Flask("fuzz_skills")
    app.config.update(TESTING=True, MCP_SESSION_RATE_LIMIT=None, MCP_AUTH_TOKENS=TOKENS)
    app.config.update(MCP_EXCLUDE_TAGS=["internal"], MCP_PAGE_SIZE=2)  # pages of two: cursors matter
    # resources/list too shows a caller only what it may read (the SKILL.md's description is the frontmatter's).
    app.config.update(MCP_FILTER_LISTINGS_BY_PERMISSIONS=True)
    server.init_app(app)
    return app, {file.digest for file in load_skill(secret).files}


_FOLDER = tempfile.TemporaryDirectory(prefix="fuzz-skills-")  # removed when the module is unloaded
APP, SECRET_DIGESTS = build_app(Path(_FOLDER.name))
HTTP = APP.test_client()
_SESSIONS: dict[str, str] = {}


def session_for(token: str) -> str:
    """A live handshake session of *token*'s caller, made once per process."""
    if token not in _SESSIONS:
        response = HTTP.post(
            "/mcp",
            json={
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "f", "version": "1"},
                },
            },
            headers={"Accept": ACCEPT, "Authorization": f"Bearer {token}"},
        )
        _SESSIONS[token] = response.headers["Mcp-Session-Id"]
    return _SESSIONS[token]


def _variants(uri: str) -> list[str]:
    return [uri, uri + "/", uri.upper(), uri.replace("://", ":///"), uri.replace("skill://", "skill://./")]


KNOWN_URIS = [
    variant
    for uri in (
        "skill://secret-plans/SKILL.md",
        "skill://secret-plans",
        "skill://secret-plans/references",
        "skill://secret-plans/references/FORMS.md",
        "skill://secret-plans/ledger-7f3a.csv",
        "skill://internal-tools/SKILL.md",
        "skill://internal-tools",
        "skill://open-notes/SKILL.md",
        "skill://open-notes",
        "skill://open-notes/references",
        "skill://open-notes/../secret-plans/SKILL.md",
        "skill://",
        "skill:",
    )
    for variant in _variants(uri)
]
methods = st.sampled_from(
    ["skills/list", "skills/get", "resources/directory/read", "resources/read", "resources/list"]
) | st.text(max_size=12)
uris = st.sampled_from(KNOWN_URIS) | st.text(max_size=40) | json_values
cursors = st.sampled_from([encode_cursor(offset) for offset in range(6)]) | st.text(max_size=16) | json_values
params = st.fixed_dictionaries({}, optional={"uri": uris, "cursor": cursors, "_meta": json_values})


def _headers(token: str | None, era: str, method: t.Any, params: dict[str, t.Any]) -> dict[str, str]:
    headers = {"Accept": ACCEPT, "Content-Type": "application/json"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    if era == "handshake":
        if token is not None:
            headers["Mcp-Session-Id"] = session_for(token)
        return headers
    headers["MCP-Protocol-Version"] = MODERN
    routing = {"Mcp-Method": method, "Mcp-Name": params.get("uri") if method == "resources/read" else None}
    for name, value in routing.items():
        if isinstance(value, str) and value.isascii() and value.isprintable():  # what a header can carry
            headers[name] = value
    return headers


def _assert_hidden(body: str, request: str, markers: t.Iterable[str]) -> None:
    for marker in markers:
        # An error may say the URI it was given back; the marker must not come from anywhere else.
        if marker.lower() not in request.lower():
            assert marker.lower() not in body.lower(), (marker, body[:500])


@given(
    method=methods,
    params=params,
    token=st.sampled_from(["full", "plain", None]),
    era=st.sampled_from(["modern", "handshake"]),
)
def test_skills_requests_are_answered_soundly_and_show_no_skill_the_caller_may_not_read(
    method: t.Any, params: dict[str, t.Any], token: str | None, era: str
) -> None:
    if era == "modern":
        meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
        params = {
            **params,
            "_meta": {
                **meta,
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        }
    envelope = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    request = json.dumps(envelope)
    response = HTTP.post("/mcp", data=request, headers=_headers(token, era, method, params))
    body = response.get_data()
    assert_sound(response.status_code, response.content_type, body)
    text = body.decode("utf-8")
    _assert_hidden(text, request, EXCLUDED_MARKERS)
    if token != "full":
        _assert_hidden(text, request, SECRET_MARKERS)
        assert not any(digest in text for digest in SECRET_DIGESTS), text[:500]


def test_the_caller_with_the_scope_is_shown_the_guarded_skill() -> None:
    """The property above could hold by showing nobody anything: the full caller does see the skill."""
    headers = _headers("full", "modern", "skills/get", {})
    meta = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}
    envelope = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "skills/get",
        "params": {"uri": "skill://secret-plans/SKILL.md", "_meta": meta},
    }
    answer = HTTP.post("/mcp", json=envelope, headers=headers).get_json()
    assert {resource["digest"] for resource in answer["result"]["skill"]["resources"]} == SECRET_DIGESTS
