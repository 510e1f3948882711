"""Tools marked ``confirm``: nothing runs until the human approves these exact arguments, once."""

from __future__ import annotations

import io
import json
import typing as t

import pytest
from flask import Flask
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flask_mcp import MCP, Context
from flask_mcp.core.approval import APPROVAL_KEY, APPROVAL_META, LocalLedger
from flask_mcp.core.audit import arguments_digest
from flask_mcp.protocol.jsonrpc import MISSING_CAPABILITY
from flask_mcp.stores.approvals import CacheLedger
from flask_mcp.transport.cgi import serve_cgi

ACCEPT = {"action": "accept"}
FORM = {"elicitation": {}}
NAME = {"type": "object", "properties": {"name": {"type": "string"}}}


class Ran(list[tuple[str, t.Any]]):
    """What the tools' functions were entered with."""


@pytest.fixture
def ran() -> Ran:
    return Ran()


@pytest.fixture
def notes(ran: Ran) -> MCP:
    return notes_server(ran)


def notes_server(ran: Ran) -> MCP:
    """Tools that ask first, and two that never do."""
    mcp = MCP(name="notes")

    @mcp.tool(confirm="Delete note {note_id}?")
    def delete_note(note_id: int, reason: str = "") -> str:
        ran.append(("delete_note", note_id))
        return f"deleted {note_id}"

    @mcp.tool(confirm=True)
    def rename(note_id: int, name: str, ctx: Context) -> str:
        answer = ctx.elicit("Which folder?", NAME, key="folder")
        ran.append(("rename", (note_id, name, (answer.content or {}).get("name"))))
        return "renamed"

    @mcp.tool(annotations={"destructiveHint": True})
    def wipe() -> str:
        ran.append(("wipe", None))
        return "wiped"

    @mcp.tool(annotations={"destructiveHint": True}, confirm=False)
    def purge_cache() -> str:
        ran.append(("purge_cache", None))
        return "purged"

    @mcp.tool(confirm="Send {amount} to {missing}{0}")
    def pay(amount: int) -> str:
        ran.append(("pay", amount))
        return "paid"

    @mcp.tool(confirm=True, task="optional")
    def archive(box: str) -> str:
        ran.append(("archive", box))
        return f"archived {box}"

    return mcp


@pytest.fixture
def app(notes: MCP, make_app: t.Callable[..., Flask]) -> t.Iterator[Flask]:
    app = make_app(notes, MCP_TASK_POLL_INTERVAL=0.01)
    yield app
    app.extensions["mcp"].server.tasks.runner.shutdown(wait=False)


def call(name: str, arguments: dict[str, t.Any], **more: t.Any) -> dict[str, t.Any]:
    return {"name": name, "arguments": arguments, **more}


def approval_question(result: dict[str, t.Any]) -> dict[str, t.Any]:
    assert result["resultType"] == "input_required", result
    return t.cast(dict[str, t.Any], result["inputRequests"][APPROVAL_KEY])


def answered(first: dict[str, t.Any], params: dict[str, t.Any], answer: dict[str, t.Any]) -> dict[str, t.Any]:
    return {**params, "inputResponses": {APPROVAL_KEY: answer}, "requestState": first["requestState"]}


# -- the handshake era: a form on the request's stream -------------------------------------------


def test_a_handshake_client_is_shown_the_exact_arguments_and_accepting_runs_the_tool(
    app: Flask, make_client: t.Any, ran: Ran
) -> None:
    client = make_client(app)
    client.initialize(capabilities=FORM)
    asked: list[dict[str, t.Any]] = []

    def answer(key: str, request: dict[str, t.Any]) -> dict[str, t.Any]:
        asked.append(request)
        assert ran == []  # asked before the function is entered
        return ACCEPT

    result = client.call_tool("delete_note", {"reason": "old", "note_id": 7}, answers=answer)
    assert result["content"][0]["text"] == "deleted 7" and ran == [("delete_note", 7)]
    (question,) = asked
    assert question["method"] == "elicitation/create"
    message = question["params"]["message"]
    assert message.startswith("Delete note 7?") and "delete_note" in message
    assert '"note_id":7' in message and '"reason":"old"' in message
    assert question["params"]["_meta"][APPROVAL_META] == {
        "tool": "delete_note",
        "argumentsDigest": arguments_digest({"note_id": 7, "reason": "old"}),
    }


@pytest.mark.parametrize(("action", "said"), [("decline", "declined"), ("cancel", "cancelled")])
def test_declining_or_cancelling_runs_nothing_and_says_so(
    app: Flask, make_client: t.Any, ran: Ran, action: str, said: str
) -> None:
    client = make_client(app)
    client.initialize(capabilities=FORM)
    result = client.call_tool("delete_note", {"note_id": 7}, answers=lambda key, request: {"action": action})
    assert result["isError"] is True and ran == []
    assert f"The user {said} the approval of 'delete_note'" in result["content"][0]["text"]
    assert "did not run" in result["content"][0]["text"]


def test_a_handshake_client_without_elicitation_is_refused_and_nothing_runs(
    app: Flask, make_client: t.Any, ran: Ran
) -> None:
    client = make_client(app)
    client.initialize(capabilities={})
    error = client.error("tools/call", call("delete_note", {"note_id": 7}))
    assert "approves" in error["message"] and "elicitation" in error["message"]
    assert error["data"] == {"requiredCapabilities": {"elicitation": {}}}
    assert ran == []


def test_a_stateless_handshake_call_cannot_be_asked_and_nothing_runs(
    notes: MCP, make_app: t.Any, make_client: t.Any, ran: Ran
) -> None:
    app = make_app(notes, MCP_STATELESS=True)
    client = make_client(app)
    error = client.error("tools/call", call("delete_note", {"note_id": 7}))
    assert "session" in error["message"] and ran == []
    app.extensions["mcp"].server.tasks.runner.shutdown(wait=False)


def test_an_unanswered_question_expires_and_nothing_runs(app: Flask, make_client: t.Any, ran: Ran) -> None:
    client = make_client(app)
    client.initialize(capabilities=FORM)
    approvals = app.extensions["mcp"].server.approvals
    now = [1000.0]
    approvals.clock = lambda: now[0]

    def late(key: str, request: dict[str, t.Any]) -> dict[str, t.Any]:
        now[0] += approvals.ttl + 1  # the user answers after the approval's time is up
        return ACCEPT

    result = client.call_tool("delete_note", {"note_id": 7}, answers=late)
    assert result["isError"] is True and "did not answer in time" in result["content"][0]["text"]
    assert ran == []


# -- the modern era: an input_required round --------------------------------------------------


def test_a_modern_call_asks_in_a_round_and_runs_once_accepted(app: Flask, make_client: t.Any, ran: Ran) -> None:
    client = make_client(app, era="modern", capabilities=FORM)
    params = call("delete_note", {"note_id": 7})
    first = client.request("tools/call", params)
    question = approval_question(first)
    assert question["params"]["message"].startswith("Delete note 7?") and ran == []
    done = client.request("tools/call", answered(first, params, ACCEPT))
    assert done["content"][0]["text"] == "deleted 7" and ran == [("delete_note", 7)]


def test_a_modern_decline_runs_nothing(app: Flask, make_client: t.Any, ran: Ran) -> None:
    client = make_client(app, era="modern", capabilities=FORM)
    params = call("delete_note", {"note_id": 7})
    first = client.request("tools/call", params)
    done = client.request("tools/call", answered(first, params, {"action": "decline"}))
    assert done["isError"] is True and ran == []


def test_a_modern_client_without_elicitation_is_refused(app: Flask, make_client: t.Any, ran: Ran) -> None:
    client = make_client(app, era="modern", capabilities={})
    error = client.error("tools/call", call("delete_note", {"note_id": 7}))
    assert error["code"] == MISSING_CAPABILITY and error["data"]["requiredCapabilities"] == {"elicitation": {}}
    assert ran == []


def test_a_replayed_approval_asks_again(app: Flask, make_client: t.Any, ran: Ran) -> None:
    client = make_client(app, era="modern", capabilities=FORM)
    params = call("delete_note", {"note_id": 7})
    first = client.request("tools/call", params)
    retry = answered(first, params, ACCEPT)
    assert client.request("tools/call", retry)["content"][0]["text"] == "deleted 7"
    again = client.request("tools/call", retry)
    approval_question(again)
    assert ran == [("delete_note", 7)]


def test_an_answer_without_the_question_asks_again(app: Flask, make_client: t.Any, ran: Ran) -> None:
    client = make_client(app, era="modern", capabilities=FORM)
    forged = call("delete_note", {"note_id": 7}, inputResponses={APPROVAL_KEY: ACCEPT})
    approval_question(client.request("tools/call", forged))
    tampered = {**forged, "requestState": "not-a-state"}
    approval_question(client.request("tools/call", tampered))
    assert ran == []


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    note_id=st.integers(min_value=-(2**31), max_value=2**31),
    reason=st.text(max_size=20),
)
def test_a_state_approved_for_other_arguments_asks_again_with_these(
    app: Flask, make_client: t.Any, ran: Ran, note_id: int, reason: str
) -> None:
    client = make_client(app, era="modern", capabilities=FORM)
    shown = call("delete_note", {"note_id": 7, "reason": "old"})
    first = client.request("tools/call", shown)
    changed = {"note_id": note_id, "reason": reason}
    if changed == shown["arguments"]:
        return
    retry = answered(first, call("delete_note", changed), ACCEPT)
    question = approval_question(client.request("tools/call", retry))
    assert question["params"]["_meta"][APPROVAL_META]["argumentsDigest"] == arguments_digest(changed)
    assert ran == []


def test_an_answer_after_the_ttl_is_expired_and_runs_nothing(app: Flask, make_client: t.Any, ran: Ran) -> None:
    client = make_client(app, era="modern", capabilities=FORM)
    approvals = app.extensions["mcp"].server.approvals
    now = [1000.0]
    approvals.clock = lambda: now[0]
    params = call("delete_note", {"note_id": 7})
    first = client.request("tools/call", params)
    now[0] += approvals.ttl + 0.5
    done = client.request("tools/call", answered(first, params, ACCEPT))
    assert done["isError"] is True and "did not answer in time" in done["content"][0]["text"] and ran == []


def test_concurrent_calls_get_separate_approvals(app: Flask, make_client: t.Any, ran: Ran) -> None:
    client = make_client(app, era="modern", capabilities=FORM)
    params = call("delete_note", {"note_id": 7})
    first, second = client.request("tools/call", params), client.request("tools/call", params)
    assert first["requestState"] != second["requestState"]
    for asked in (first, second):
        assert client.request("tools/call", answered(asked, params, ACCEPT))["content"][0]["text"] == "deleted 7"
    assert ran == [("delete_note", 7), ("delete_note", 7)]
    approval_question(client.request("tools/call", answered(second, params, ACCEPT)))


def test_an_approval_holds_over_the_tools_own_rounds_and_each_state_once(
    app: Flask, make_client: t.Any, ran: Ran
) -> None:
    client = make_client(app, era="modern", capabilities=FORM)
    params = call("rename", {"note_id": 1, "name": "n"})
    first = client.request("tools/call", params)
    approval_question(first)
    folder = client.request("tools/call", answered(first, params, ACCEPT))
    assert set(folder["inputRequests"]) == {"folder"} and ran == []
    retry = {
        **params,
        "inputResponses": {"folder": {"action": "accept", "content": {"name": "inbox"}}},
        "requestState": folder["requestState"],
    }
    assert client.request("tools/call", retry)["content"][0]["text"] == "renamed"
    assert ran == [("rename", (1, "n", "inbox"))]
    approval_question(client.request("tools/call", retry))  # that state approved one run
    assert len(ran) == 1


# -- which tools ask, and what they show ------------------------------------------------------


def test_destructive_tools_ask_under_confirm_destructive_unless_they_opt_out(
    notes: MCP, make_app: t.Any, make_client: t.Any, ran: Ran
) -> None:
    plain = make_app(notes)
    client = make_client(plain, era="modern", capabilities=FORM)
    assert client.request("tools/call", call("wipe", {}))["content"][0]["text"] == "wiped"
    plain.extensions["mcp"].server.tasks.runner.shutdown(wait=False)
    strict = make_app(notes_server(ran), MCP_CONFIRM_DESTRUCTIVE=True)
    client = make_client(strict, era="modern", capabilities=FORM)
    question = approval_question(client.request("tools/call", call("wipe", {})))
    assert question["params"]["message"].startswith("Allow the tool 'wipe' to run?")
    assert client.request("tools/call", call("purge_cache", {}))["content"][0]["text"] == "purged"
    assert ran == [("wipe", None), ("purge_cache", None)]
    strict.extensions["mcp"].server.tasks.runner.shutdown(wait=False)


def test_a_template_naming_no_argument_still_shows_the_exact_call(app: Flask, make_client: t.Any) -> None:
    client = make_client(app, era="modern", capabilities=FORM)
    message = approval_question(client.request("tools/call", call("pay", {"amount": 5})))["params"]["message"]
    assert "Tool: pay" in message and '"amount":5' in message


def test_a_task_tool_asks_before_the_task_is_created(app: Flask, make_client: t.Any, ran: Ran) -> None:
    from flask_mcp.core.tasks import EXTENSION

    client = make_client(app, era="modern", capabilities={**FORM, "extensions": {EXTENSION: {}}})
    params = call("archive", {"box": "b1"})
    first = client.request("tools/call", params)
    approval_question(first)
    assert "taskId" not in first and ran == []
    created = client.request("tools/call", answered(first, params, ACCEPT))
    assert created["resultType"] == "task"
    assert client.wait_for_task(created["taskId"])["result"]["content"][0]["text"] == "archived b1"
    assert ran == [("archive", "b1")]


# -- surfaces that cannot ask -----------------------------------------------------------------


def test_rest_answers_403_and_runs_nothing(app: Flask, ran: Ran) -> None:
    response = app.test_client().post("/mcp/rest/tools/delete_note", json={"note_id": 7})
    assert response.status_code == 403
    assert response.get_json()["error"].startswith("Approval required: the tool 'delete_note' runs only once")
    assert ran == []


def test_cgi_answers_403_and_runs_nothing(app: Flask, ran: Ran, monkeypatch: pytest.MonkeyPatch) -> None:
    body = json.dumps({"note_id": 7}).encode()
    environ = {
        "REQUEST_METHOD": "POST",
        "PATH_INFO": "/tools/delete_note",
        "CONTENT_TYPE": "application/json",
        "CONTENT_LENGTH": str(len(body)),
    }
    for key, value in environ.items():
        monkeypatch.setenv(key, value)
    stdout = io.BytesIO()
    serve_cgi(app, stdin=io.BytesIO(body), stdout=stdout)
    assert stdout.getvalue().startswith(b"Status: 403") and b"Approval required" in stdout.getvalue()
    assert ran == []


# -- the ledgers ------------------------------------------------------------------------------


def test_a_nonce_is_spent_once_in_the_shared_store_and_in_memory() -> None:
    from flask_caching import Cache

    ledger_app = Flask("ledger")
    cache = Cache(config={"CACHE_TYPE": "SimpleCache"})
    cache.init_app(ledger_app)
    with ledger_app.app_context():
        for ledger in (CacheLedger(cache), LocalLedger()):
            assert ledger.spend("n1", 60) is True
            assert ledger.spend("n1", 60) is False
            assert ledger.spend("n2", 60) is True


@pytest.mark.filterwarnings("ignore::flask_mcp.UnprotectedToolWarning")
def test_an_approval_is_only_for_the_caller_it_was_asked_of(
    notes: MCP, make_app: t.Any, make_client: t.Any, ran: Ran
) -> None:
    app = make_app(notes, MCP_AUTH_TOKENS={"alice-token": "alice", "bob-token": "bob"})
    alice = make_client(app, era="modern", capabilities=FORM, token="alice-token")
    bob = make_client(app, era="modern", capabilities=FORM, token="bob-token")
    params = call("delete_note", {"note_id": 7})
    first = alice.request("tools/call", params)
    approval_question(bob.request("tools/call", answered(first, params, ACCEPT)))
    assert ran == []
    assert alice.request("tools/call", answered(first, params, ACCEPT))["content"][0]["text"] == "deleted 7"
    app.extensions["mcp"].server.tasks.runner.shutdown(wait=False)
