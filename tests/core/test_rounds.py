"""Input-required rounds in the protocol core: keys, answers, and the state bound to caller and request."""

from __future__ import annotations

import secrets
import typing as t

import pytest

from flask_mcp import Context, Elicit, ElicitResult, ListRoots, Sample
from flask_mcp.components.registry import Registry
from flask_mcp.core.client import Call, ClientState
from flask_mcp.core.rounds import InputRequired, MissingCapability, Round
from flask_mcp.core.server import Server
from flask_mcp.policies.principal import Principal
from flask_mcp.protocol.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, MISSING_CAPABILITY, MCPError
from flask_mcp.stores.request_state import SignedState

MODERN = "2026-07-28"
FORM = {"type": "object", "properties": {"name": {"type": "string"}}}
ACCEPTED = {"action": "accept", "content": {"name": "Ada"}}
SAMPLED = {"role": "assistant", "content": {"type": "text", "text": "Paris"}, "model": "m"}
ALL = {"elicitation": {}, "sampling": {}, "roots": {}}


@pytest.fixture
def server() -> Server:
    return Server(Registry(), name="rounds", version="1", sealer=SignedState("secret", 600))


def call_of(
    server: Server,
    params: dict[str, t.Any] | None = None,
    method: str = "tools/call",
    principal: Principal | None = None,
    capabilities: dict[str, t.Any] | None = None,
) -> Call:
    params = {"name": "ask", "arguments": {"n": 1}, **(params or {})}
    state = ClientState(protocol_version=MODERN, capabilities=ALL if capabilities is None else capabilities)
    call = Call(server, state, method, params, 1, principal=principal)
    call.round = Round(call, t.cast(SignedState, server.sealer), server.max_request_state)
    return call


def pending(call: Call, **requests: t.Any) -> dict[str, t.Any]:
    """The input_required result of asking *requests* in *call*."""
    with pytest.raises(InputRequired) as info:
        t.cast(Round, call.round).ask(requests, call.state.capabilities)
    return t.cast(Round, call.round).result(info.value)


def test_a_question_without_an_answer_ends_the_run_with_the_request(server: Server) -> None:
    result = pending(call_of(server), user_name=Elicit("Your name?", FORM))
    assert result["resultType"] == "input_required"
    assert result["inputRequests"] == {
        "user_name": {
            "method": "elicitation/create",
            "params": {"mode": "form", "message": "Your name?", "requestedSchema": FORM},
        }
    }
    assert isinstance(result["requestState"], str)


def test_several_questions_go_out_in_one_round(server: Server) -> None:
    result = pending(call_of(server), name=Elicit("Name?", FORM), greeting=Sample("Hi", 5), roots=ListRoots())
    assert [request["method"] for request in result["inputRequests"].values()] == [
        "elicitation/create",
        "sampling/createMessage",
        "roots/list",
    ]


def test_answers_in_the_retry_are_returned_converted(server: Server) -> None:
    call = call_of(server, {"inputResponses": {"name": ACCEPTED, "model": SAMPLED, "roots": {"roots": []}}})
    answers = t.cast(Round, call.round).ask(
        {"name": Elicit("Name?", FORM), "model": Sample("Capital?", 5), "roots": ListRoots()}, ALL
    )
    assert answers == {"name": ElicitResult("accept", {"name": "Ada"}), "model": SAMPLED, "roots": []}


def test_answers_of_earlier_rounds_travel_in_the_state(server: Server) -> None:
    """Round 2 brings only its own answer; round 1's comes back from requestState."""
    first = call_of(server, {"inputResponses": {"step1": ACCEPTED}})
    t.cast(Round, first.round).ask({"step1": Elicit("1?", FORM)}, ALL)
    second_round = pending(first, step2=Elicit("2?", FORM))
    retry = {"inputResponses": {"step2": {"action": "decline"}}, "requestState": second_round["requestState"]}
    answers = t.cast(Round, call_of(server, retry).round).ask(
        {"step1": Elicit("1?", FORM), "step2": Elicit("2?", FORM)}, ALL
    )
    assert answers == {"step1": ElicitResult("accept", {"name": "Ada"}), "step2": ElicitResult("decline")}


def test_only_answers_the_handler_used_go_on_to_the_next_state(server: Server) -> None:
    """Extra inputResponses are ignored, and never carried (they would only grow the state)."""
    call = call_of(server, {"inputResponses": {"step1": ACCEPTED, "junk": {"x": "y" * 1000}}})
    t.cast(Round, call.round).ask({"step1": Elicit("1?", FORM)}, ALL)
    state = pending(call, step2=Elicit("2?", FORM))["requestState"]
    assert t.cast(SignedState, server.sealer).open(state)["a"] == {"step1": ACCEPTED}


def test_unnamed_questions_are_keyed_by_kind_and_order(server: Server) -> None:
    round_ = t.cast(Round, call_of(server).round)
    keys = [round_.key(Elicit("a", FORM), None), round_.key(Sample("b", 1), None), round_.key(Elicit("c", FORM), None)]
    assert keys == ["elicitation-1", "sampling-1", "elicitation-2"]
    assert round_.key(Elicit("d", FORM), "mine") == "mine"


@pytest.mark.parametrize(
    ("request_", "capabilities", "required"),
    [
        (Elicit("Name?", FORM), {}, {"elicitation": {}}),
        (Elicit("Name?", FORM), {"elicitation": {"url": {}}}, {"elicitation": {}}),
        (Elicit("Go there", url="https://example.org"), {"elicitation": {}}, {"elicitation": {"url": {}}}),
        (Sample("Hi", 5), {"elicitation": {}}, {"sampling": {}}),
        (ListRoots(), {"sampling": {}}, {"roots": {}}),
    ],
)
def test_a_capability_the_request_did_not_declare_is_missing_capability(
    server: Server, request_: t.Any, capabilities: dict[str, t.Any], required: dict[str, t.Any]
) -> None:
    call = call_of(server, capabilities=capabilities)
    with pytest.raises(MissingCapability) as info:
        t.cast(Round, call.round).ask({"q": request_}, capabilities)
    assert info.value.code == MISSING_CAPABILITY
    assert info.value.data == {"requiredCapabilities": required}


@pytest.mark.parametrize(
    ("request_", "answer"),
    [
        (Elicit("Name?", FORM), 12345),
        (Elicit("Name?", FORM), {"action": "maybe"}),
        (Elicit("Name?", FORM), {"action": "accept", "content": "Ada"}),
        (Sample("Hi", 5), {"content": {}}),
        (ListRoots(), {"roots": [{"name": "no uri"}]}),
        (ListRoots(), None),
    ],
)
def test_an_answer_that_does_not_fit_its_question_is_invalid_params(
    server: Server, request_: t.Any, answer: t.Any
) -> None:
    call = call_of(server, {"inputResponses": {"q": answer}})
    with pytest.raises(MCPError) as info:
        t.cast(Round, call.round).ask({"q": request_}, ALL)
    assert info.value.code == INVALID_PARAMS and "'q'" in info.value.message


def state_for(server: Server, **overrides: t.Any) -> str:
    return t.cast(str, pending(call_of(server, **overrides), q=Elicit("?", FORM))["requestState"])


@pytest.mark.parametrize(
    ("retry", "reason"),
    [
        ({"params": {"arguments": {"n": 2}}}, "another request"),
        ({"params": {"name": "other"}}, "another request"),
        ({"method": "prompts/get"}, "another request"),
        ({"principal": Principal("mallory")}, "another caller"),
    ],
)
def test_a_state_is_bound_to_its_caller_and_request(server: Server, retry: dict[str, t.Any], reason: str) -> None:
    state = state_for(server, principal=Principal("ada"))
    params = {**retry.get("params", {}), "requestState": state}
    with pytest.raises(MCPError) as info:
        call_of(
            server, params, method=retry.get("method", "tools/call"), principal=retry.get("principal", Principal("ada"))
        )
    assert info.value.code == INVALID_PARAMS and reason in info.value.message
    assert info.value.data == {"reason": "invalid_request_state"}


def test_the_same_arguments_in_another_order_are_the_same_request(server: Server) -> None:
    state = state_for(server, params={"arguments": {"a": 1, "b": {"x": 1, "y": 2}}})
    call_of(server, {"arguments": {"b": {"y": 2, "x": 1}, "a": 1}, "requestState": state})


def test_a_tampered_state_is_invalid_params(server: Server) -> None:
    with pytest.raises(MCPError, match="integrity") as info:
        call_of(server, {"requestState": state_for(server) + "-TAMPERED"})
    assert info.value.code == INVALID_PARAMS


def test_a_state_past_the_size_limit_is_refused_unread(server: Server) -> None:
    server.max_request_state = 64
    with pytest.raises(MCPError, match="longer than 64 bytes"):
        call_of(server, {"requestState": "x" * 65})


def test_answers_too_large_to_carry_are_a_server_error(server: Server) -> None:
    server.max_request_state = 200
    call = call_of(
        server, {"inputResponses": {"big": {"action": "accept", "content": {"text": secrets.token_hex(200)}}}}
    )
    t.cast(Round, call.round).ask({"big": Elicit("?", FORM)}, ALL)
    with pytest.raises(InputRequired) as asked:
        t.cast(Round, call.round).ask({"next": Elicit("?", FORM)}, ALL)
    with pytest.raises(MCPError, match="MCP_REQUEST_STATE_MAX_BYTES") as info:
        t.cast(Round, call.round).result(asked.value)
    assert info.value.code == INTERNAL_ERROR


def test_context_asks_through_the_round(server: Server) -> None:
    """ctx.elicit in a modern call: a recorded answer is returned, an open one ends the run."""
    call = call_of(server, {"inputResponses": {"user_name": ACCEPTED}})
    ctx = Context(call, None)
    assert ctx.elicit("Name?", FORM, key="user_name") == ElicitResult("accept", {"name": "Ada"})
    with pytest.raises(InputRequired) as info:
        ctx.list_roots()
    assert list(info.value.requests) == ["roots-1"]
