"""Property-based tests of tasks: whatever several callers send to ``tasks/*``, never a 5xx, never another's data.

Two callers in sessions of their own (2025-11-25) and two anonymous
2026-07-28 callers share one app; two anonymous callers share a stateless
one. Each first makes a task whose result holds a secret of its own. Hypothesis then sends, as
any of them, ``tasks/get``, ``tasks/result``, ``tasks/list``,
``tasks/cancel``, ``tasks/update`` and task-making ``tools/call`` with
params drawn from odd values and every caller's task ids: no answer is a
5xx or leaks internals (as in :mod:`tests.test_fuzz`), and no answer holds
another caller's task id or secret, unless the request named that task and
both are ownerless (whose tasks are read by their ids alone).
"""

from __future__ import annotations

import json
import secrets
import typing as t

import pytest
from flask import Flask
from hypothesis import given
from hypothesis import strategies as st

from flask_mcp import MCP
from flask_mcp.core.tasks import EXTENSION
from flask_mcp.testing import MCPTestClient

from ...test_fuzz import ACCEPT, assert_sound, json_values


class Caller:
    """One caller of the app: its client, the secret its first task returned, and that task's id."""

    def __init__(self, name: str, client: MCPTestClient, ownerless: bool = False) -> None:
        self.name = name
        self.client = client
        #: Neither authenticated nor in a session: its tasks are read by their ids alone.
        self.ownerless = ownerless
        self.secret = f"secret-of-{name}-{secrets.token_hex(8)}"
        self.task_id = ""


def build_app(**config: t.Any) -> Flask:
    server = MCP(name="fuzz-tasks", version="1.0.0")

    @server.tool(task="optional")
    def keep(secret: str) -> str:
        """Return the secret it was given: a task's result only its caller may read."""
        return secret

    @server.tool(task="optional")
    def quick() -> str:
        return "quick"

    app = Flask("fuzz_tasks")
    # Budgets far above what one run sends: the properties are about answers, not quotas.
    app.config.update(
        TESTING=True,
        MCP_SESSION_RATE_LIMIT=None,
        MCP_TASK_MAX_PER_CALLER=None,
        MCP_TASK_POLL_INTERVAL=0.01,
        MCP_CLIENT_REQUEST_TIMEOUT=2,
        # One runner thread, started by the module's first task: a task an example makes while
        # another still runs would otherwise start a thread that outlives its test (the apps are
        # the module's, shut down after its last test).
        MCP_TASK_WORKERS=1,
        **config,
    )
    server.init_app(app)
    return app


def anonymous(app: Flask, address: str, era: t.Literal["modern", "handshake"]) -> MCPTestClient:
    client = MCPTestClient(app, era=era, capabilities={"extensions": {EXTENSION: {}}})
    client.http.environ_base["REMOTE_ADDR"] = address
    return client


@pytest.fixture(scope="module")
def callers() -> t.Iterator[list[Caller]]:
    app, stateless = build_app(), build_app(MCP_STATELESS=True)
    made = []
    for name in ("ada", "bob"):
        client = MCPTestClient(app, era="handshake")
        client.initialize()
        made.append(Caller(name, client))
    made.append(Caller("modern-1", anonymous(app, "10.0.0.1", "modern"), ownerless=True))
    made.append(Caller("modern-2", anonymous(app, "10.0.0.2", "modern"), ownerless=True))
    # Stateless 2025-11-25: no session tells these two apart, from one address or two.
    made.append(Caller("stateless-1", anonymous(stateless, "10.0.0.1", "handshake"), ownerless=True))
    made.append(Caller("stateless-2", anonymous(stateless, "10.0.0.1", "handshake"), ownerless=True))
    for caller in made:
        params: dict[str, t.Any] = {"name": "keep", "arguments": {"secret": caller.secret}}
        if not caller.client.modern:
            params["task"] = {}
        created = caller.client.request("tools/call", params)
        caller.task_id = created["taskId"] if caller.client.modern else created["task"]["taskId"]
        caller.client.wait_for_task(caller.task_id, {"completed"})
    yield made
    for each in (app, stateless):
        each.extensions["mcp"].server.tasks.runner.shutdown(wait=True)


METHODS = ["tasks/get", "tasks/result", "tasks/list", "tasks/cancel", "tasks/update", "tools/call"]


@st.composite
def task_params(draw: st.DrawFn, task_ids: list[str]) -> dict[str, t.Any]:
    """Params of a ``tasks/*`` request (or a task-making ``tools/call``): real ids and odd values."""
    params: dict[str, t.Any] = draw(st.dictionaries(st.sampled_from(["cursor", "ttl", "extra"]), json_values))
    params["taskId"] = draw(st.sampled_from(task_ids) | json_values)
    if draw(st.booleans()):
        params["inputResponses"] = draw(json_values)
    if draw(st.booleans()):
        params["name"] = draw(st.sampled_from(["keep", "quick", "nothing"]) | json_values)
        params["arguments"] = draw(st.fixed_dictionaries({"secret": st.text(max_size=20)}) | json_values)
        params["task"] = draw(st.fixed_dictionaries({"ttl": st.integers(-5, 10**9)}) | json_values)
    return params


@given(data=st.data())
def test_tasks_never_fail_and_never_answer_with_another_callers_data(
    callers: list[Caller], data: st.DataObject
) -> None:
    caller = data.draw(st.sampled_from(callers), label="caller")
    method = data.draw(st.sampled_from(METHODS), label="method")
    params = data.draw(task_params([each.task_id for each in callers]), label="params")
    client = caller.client
    headers = client.headers()
    if client.modern:
        params, extra = client.modern_request(method, params)
        headers.update(extra)
    message = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    response = client.http.post(client.path, json=message, headers={**headers, "Accept": ACCEPT})
    body = response.get_data()
    assert_sound(response.status_code, response.content_type, body)
    text = body.decode("utf-8")
    sent = json.dumps(params)
    for other in callers:
        if other is caller:
            continue
        # The id of an ownerless task is what reads it: a caller given it may (and nobody else hands it out).
        if not (other.ownerless and caller.ownerless and other.task_id in sent):
            assert other.secret not in text, (caller.name, method, params)
        if other.task_id not in sent:
            assert other.task_id not in text, (caller.name, method, params)
