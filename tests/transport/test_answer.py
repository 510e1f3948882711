"""JSONAnswer and EventStreamAnswer: what werkzeug would send, and their shortcut only while the answer is as made."""

from __future__ import annotations

import json
import typing as t

import pytest
from flask import Flask, Response
from werkzeug.test import create_environ

from flask_mcp import MCP
from flask_mcp.testing import MCPTestClient
from flask_mcp.transport.answer import EVENT_STREAM_HEADERS, EventStreamAnswer, JSONAnswer

BODY = b'{"jsonrpc":"2.0","id":1,"result":{}}'


def sent(answer: Response, method: str = "POST", general: bool = False) -> tuple[bytes, str, list[tuple[str, str]]]:
    """What the server is handed for *answer*: body, status, headers (*general*: werkzeug's own way)."""
    environ = create_environ("/mcp", "http://localhost", method=method)
    app_iter, status, headers = (Response if general else type(answer)).get_wsgi_response(answer, environ)
    try:
        body = b"".join(app_iter)
    finally:
        close = getattr(app_iter, "close", None)
        if close is not None:
            close()
    return body, status, headers


def test_an_answer_as_made_is_handed_over_as_it_is() -> None:
    answer = JSONAnswer(BODY)
    app_iter, status, headers = answer.get_wsgi_response(create_environ("/mcp", method="POST"))
    # The shortcut: the body list itself, no closing iterator around it.
    assert app_iter is answer.response
    assert (status, headers) == ("200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(BODY)))])
    assert sent(answer) == sent(answer, general=True)


def test_the_headers_handed_over_are_a_copy() -> None:
    answer = JSONAnswer(BODY)
    _, _, headers = answer.get_wsgi_response(create_environ("/mcp", method="POST"))
    headers.append(("X-Later", "1"))
    assert "X-Later" not in answer.headers


@pytest.mark.parametrize("status", [200, 400, 404, 500, 503])
def test_a_status_with_a_body_answers_as_werkzeug_does(status: int) -> None:
    answer = JSONAnswer(BODY, status)
    assert sent(answer) == sent(answer, general=True)
    assert sent(answer)[1].startswith(str(status))


def _relative_location(answer: JSONAnswer) -> None:
    answer.headers["Location"] = "/elsewhere"


def _new_body(answer: JSONAnswer) -> None:
    answer.set_data(b'{"replaced":true}')


def _extra_header(answer: JSONAnswer) -> None:
    answer.headers["X-Request-Id"] = "abc"


def _no_length(answer: JSONAnswer) -> None:
    del answer.headers["Content-Length"]


def _no_content(answer: JSONAnswer) -> None:
    answer.status_code = 204


def _not_modified(answer: JSONAnswer) -> None:
    answer.status_code = 304


def _generator_body(answer: JSONAnswer) -> None:
    answer.response = iter([b"{", b"}"])


def _text_body(answer: JSONAnswer) -> None:
    answer.response = ["{}"]


def _passthrough(answer: JSONAnswer) -> None:
    answer.direct_passthrough = True


#: A change made after the answer was, and whether the answer is still handed over as it is.
CHANGES: dict[str, tuple[t.Callable[[JSONAnswer], None], bool]] = {
    "relative Location": (_relative_location, False),
    # set_data keeps the shape: one bytes object, its length set in place.
    "body replaced": (_new_body, True),
    "header added": (_extra_header, False),
    "length removed": (_no_length, False),
    "204": (_no_content, False),
    "304": (_not_modified, False),
    "generator body": (_generator_body, False),
    "str body": (_text_body, False),
    # werkzeug hands such a body over as it is too.
    "direct passthrough": (_passthrough, True),
}


@pytest.mark.parametrize("change", CHANGES, ids=list(CHANGES))
def test_a_changed_answer_is_sent_as_werkzeug_sends_it(change: str) -> None:
    apply, as_it_is = CHANGES[change]
    made, general = JSONAnswer(BODY), JSONAnswer(BODY)
    apply(made)
    apply(general)
    app_iter, _, _ = made.get_wsgi_response(create_environ("/mcp", method="POST"))
    assert (app_iter is made.response) is as_it_is
    if change != "generator body":  # a generator is read once: the other copy is compared
        assert sent(made) == sent(general, general=True)
    else:
        assert sent(made) == (b"{}", "200 OK", sent(general, general=True)[2])


def test_a_head_request_gets_no_body() -> None:
    answer = JSONAnswer(BODY)
    assert sent(answer, "HEAD") == sent(answer, "HEAD", general=True)
    assert sent(answer, "HEAD")[0] == b""


def test_what_is_registered_to_call_on_close_is_called() -> None:
    answer = JSONAnswer(BODY)
    closed: list[bool] = []
    answer.call_on_close(lambda: closed.append(True))
    app_iter, _, _ = answer.get_wsgi_response(create_environ("/mcp", method="POST"))
    assert app_iter is not answer.response
    assert b"".join(app_iter) == BODY and not closed
    app_iter.close()  # type: ignore[attr-defined]
    assert closed == [True]


def test_further_headers_are_kept() -> None:
    answer = JSONAnswer(BODY, 405, {"Allow": "POST"})
    assert sent(answer) == sent(answer, general=True)
    assert ("Allow", "POST") in sent(answer)[2]


# The endpoint's answers in an app whose handlers change them.


@pytest.fixture
def app(make_app: t.Callable[..., Flask], adder: MCP) -> Flask:
    return make_app(adder, MCP_STATELESS=True)


def test_the_endpoint_answers_a_call_as_made(app: Flask, make_client: t.Callable[..., MCPTestClient]) -> None:
    response = make_client(app).post(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "add", "arguments": {"a": 1, "b": 2}}}
    )
    assert response.status_code == 200
    assert list(response.headers.keys()) == ["Content-Type", "Content-Length"]
    assert int(response.headers["Content-Length"]) == len(response.data)
    assert json.loads(response.data)["result"]["structuredContent"] == {"result": 3}


def test_an_after_request_handlers_header_and_callback_reach_the_client(
    app: Flask, make_client: t.Callable[..., MCPTestClient]
) -> None:
    closed: list[str] = []

    @app.after_request
    def tag(response: Response) -> Response:
        response.headers["X-Served-By"] = "test"
        response.call_on_close(lambda: closed.append(response.headers["X-Served-By"]))
        return response

    response = make_client(app).post(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "add", "arguments": {"a": 1, "b": 2}}}
    )
    response.close()
    assert response.headers["X-Served-By"] == "test"
    assert json.loads(response.data)["result"]["structuredContent"] == {"result": 3}
    assert closed == ["test"]


def test_an_after_request_handlers_new_body_is_sent_with_its_length(
    app: Flask, make_client: t.Callable[..., MCPTestClient]
) -> None:
    @app.after_request
    def wrap(response: Response) -> Response:
        response.set_data(b'{"jsonrpc":"2.0","id":1,"result":{"content":[]}}')
        return response

    response = make_client(app).post(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "add", "arguments": {"a": 1, "b": 2}}}
    )
    assert response.data == b'{"jsonrpc":"2.0","id":1,"result":{"content":[]}}'
    assert int(response.headers["Content-Length"]) == len(response.data)


# Event streams: the chunks handed to the server as they are made.

EVENTS = (b"id: s:0\nretry: 1000\ndata: \n\n", b"event: message\ndata: {}\n\n")


def _stream(closed: list[str]) -> tuple[EventStreamAnswer, list[str]]:
    def chunks() -> t.Iterator[bytes]:
        try:
            yield from EVENTS
        finally:
            closed.append("stream")

    return EventStreamAnswer(chunks(), lambda: closed.append("run")), closed


def test_a_stream_as_made_is_handed_over_as_it_is_and_closed_with_its_run() -> None:
    answer, closed = _stream([])
    app_iter, status, headers = answer.get_wsgi_response(create_environ("/mcp", method="POST"))
    assert (status, headers) == ("200 OK", list(EVENT_STREAM_HEADERS))
    assert iter(app_iter) is answer.response  # the stream itself, no wrapper around each chunk
    assert b"".join(app_iter) == b"".join(EVENTS) and closed == ["stream"]
    app_iter.close()  # type: ignore[attr-defined]
    assert closed == ["stream", "run"]


def test_a_stream_the_client_left_is_closed_and_its_run_finished() -> None:
    answer, closed = _stream([])
    app_iter, _, _ = answer.get_wsgi_response(create_environ("/mcp", method="POST"))
    next(iter(app_iter))
    app_iter.close()  # type: ignore[attr-defined]
    assert closed == ["stream", "run"]


@pytest.mark.parametrize("change", ["header", "callback", "status", "head"])
def test_a_changed_stream_goes_werkzeugs_way_and_its_run_is_finished_first(change: str) -> None:
    answer, closed = _stream([])
    method = "HEAD" if change == "head" else "POST"
    if change == "header":
        answer.headers["X-Served-By"] = "test"
    elif change == "callback":
        answer.call_on_close(lambda: closed.append("callback"))
    elif change == "status":
        answer.status_code = 206
    app_iter, _, headers = answer.get_wsgi_response(create_environ("/mcp", method=method))
    assert iter(app_iter) is not answer.response
    body = b"".join(app_iter)
    app_iter.close()  # type: ignore[attr-defined]
    assert body == (b"" if change == "head" else b"".join(EVENTS))
    # A HEAD request's stream never starts: there is nothing of it to close.
    expected = {"callback": ["stream", "run", "callback"], "head": ["run"]}.get(change, ["stream", "run"])
    assert closed == expected
    if change == "header":
        assert ("X-Served-By", "test") in headers
