"""Run-time changes made through one gunicorn process hold in another sharing its Redis."""

from __future__ import annotations

import json
import typing as t
import uuid

from .test_streaming import Endpoint, Reply, call, gunicorn


def message(reply: Reply) -> dict[str, t.Any]:
    """The JSON-RPC message of a JSON answer, or the last one of an SSE answer."""
    if reply.headers["Content-Type"].startswith("text/event-stream"):
        data = [line[5:] for line in reply.body.decode().splitlines() if line.startswith("data:") and line[5:].strip()]
        return t.cast(dict[str, t.Any], json.loads(data[-1]))
    return t.cast(dict[str, t.Any], reply.json())


def result(reply: Reply) -> dict[str, t.Any]:
    assert reply.status == 200, reply.body
    answer = message(reply)
    assert "result" in answer, answer
    return t.cast(dict[str, t.Any], answer["result"])


def tool_names(endpoint: Endpoint, session_id: str) -> set[str]:
    answer = endpoint.post({"jsonrpc": "2.0", "id": "list", "method": "tools/list"}, session_id)
    return {tool["name"] for tool in result(answer)["tools"]}


def test_disable_and_removal_on_one_process_hold_on_the_other(redis_url: str) -> None:
    env = {
        "MCP_CACHE_TYPE": "RedisCache",
        "MCP_CACHE_REDIS_URL": redis_url,
        "MCP_CACHE_KEY_PREFIX": f"flask_mcp_removal:{uuid.uuid4().hex}:",
    }
    with gunicorn(**env) as server_a, gunicorn(**env) as server_b:
        a, b = Endpoint(server_a.url), Endpoint(server_b.url)
        session_id = a.initialize({})
        assert {"interview", "spare", "flip", "drop"} <= tool_names(b, session_id)
        assert result(a.post(call("flip"), session_id))["content"] == [{"type": "text", "text": "disabled"}]
        assert "spare" not in tool_names(b, session_id)
        dropped = result(a.post(call("drop", {"name": "interview"}), session_id))
        assert dropped["content"] == [{"type": "text", "text": "removed interview"}]
        assert tool_names(b, session_id) == {"flip", "drop", "confirm_on"}
        assert message(b.post(call("interview", {"prompt": "hi"}), session_id))["error"]["code"] == -32602
