"""Reading a response's event stream as a client does, for :class:`~flask_mcp.testing.MCPTestClient`.

In the handshake era a handler that asks the client something
(``ctx.elicit``, ``ctx.sample``, ``ctx.list_roots``, or ``tasks/result``
bringing a task's questions) sends the request on the response's event
stream and waits for the client to POST the answer. A client that reads
the whole stream before looking at it would wait for ever; this one reads
it event by event and answers each request as it arrives, from canned
answers or a function (the same ones that answer modern ``input_required``
rounds), so a test never hangs on a question it did not expect: a request
without an answer is answered with an error that says so.
"""

from __future__ import annotations

import json
import typing as t

if t.TYPE_CHECKING:
    from werkzeug.test import TestResponse

__all__ = ["NO_ANSWER", "AnswerKeys", "Answers", "answer_for", "events", "read_response"]

#: Canned answers to input requests by key, or a function of the key and the
#: request (``{"method", "params"}``) that returns the answer.
Answers = t.Union[t.Mapping[str, t.Any], t.Callable[[str, dict[str, t.Any]], t.Any]]

#: The JSON-RPC error code a request without an answer gets back.
NO_ANSWER = -32603

#: The key prefix of each method's requests, as handlers' questions are keyed (``elicitation-1``...).
_KINDS = {"elicitation/create": "elicitation", "sampling/createMessage": "sampling", "roots/list": "roots"}


def events(chunks: t.Iterable[bytes]) -> t.Iterator[dict[str, t.Any]]:
    """The JSON-RPC messages of an event stream, each as soon as its event is complete.

    Events without data (the priming event, keep-alive comments) are skipped.
    """
    pending = b""
    for chunk in chunks:
        pending += chunk
        while b"\n\n" in pending:
            event, pending = pending.split(b"\n\n", 1)
            data = b"\n".join(line[len(b"data:") :].strip() for line in event.splitlines() if line.startswith(b"data:"))
            if data:
                yield t.cast(dict[str, t.Any], json.loads(data))


class AnswerKeys:
    """The key of each request a handler sends in one exchange: ``<kind>-<n>``, counted by kind."""

    def __init__(self) -> None:
        self._counts: dict[str, int] = {}

    def key(self, method: str) -> str:
        """The next key for a request to *method*."""
        kind = _KINDS.get(method, method)
        count = self._counts[kind] = self._counts.get(kind, 0) + 1
        return f"{kind}-{count}"


def answer_for(answers: Answers | None, key: str, request: dict[str, t.Any]) -> dict[str, t.Any]:
    """The JSON-RPC response to the server's *request*: its answer from *answers*, or an error saying none was given."""
    method = str(request.get("method"))
    asked = {"method": method, "params": request.get("params") or {}}
    if callable(answers):
        return {"jsonrpc": "2.0", "id": request["id"], "result": answers(key, asked)}
    if answers is not None and key in answers:
        return {"jsonrpc": "2.0", "id": request["id"], "result": answers[key]}
    given = sorted(answers) if answers is not None else []
    message = f"MCPTestClient has no answer for {method} (key {key!r}; given: {given}): pass answers="
    return {"jsonrpc": "2.0", "id": request["id"], "error": {"code": NO_ANSWER, "message": message}}


def read_response(
    response: TestResponse, answers: Answers | None, reply: t.Callable[[dict[str, t.Any]], None]
) -> tuple[dict[str, t.Any], list[dict[str, t.Any]]]:
    """The JSON-RPC response to a POST (read unbuffered), and the notifications its stream carried first.

    Each request on the stream is answered through *reply* (which POSTs the
    answer) as soon as it arrives. The response is closed (its request
    ends); what was read stays readable with ``response.get_data()``.

    :raises AssertionError: the body is neither JSON nor a stream that ends with a response.
    """
    if response.mimetype != "text/event-stream":
        data = b"".join(response.iter_encoded())
        response.close()
        response.set_data(data)
        assert response.mimetype == "application/json", response.get_data(as_text=True)
        return t.cast(dict[str, t.Any], response.get_json()), []
    keys, raw = AnswerKeys(), []
    notifications: list[dict[str, t.Any]] = []

    def recorded() -> t.Iterator[bytes]:
        for chunk in response.iter_encoded():
            raw.append(chunk)
            yield chunk

    try:
        for message in events(recorded()):
            if "method" not in message:
                return message, notifications
            if "id" not in message:
                notifications.append(message)
            else:
                reply(answer_for(answers, keys.key(message["method"]), message))
    finally:
        # Closed before its body is replaced: closing ends the stream's request as a server would.
        response.close()
        response.set_data(b"".join(raw))
    raise AssertionError(f"the stream ended without a response: {response.get_data(as_text=True)}")
