"""The MCP requests of :class:`~flask_mcp.testing.MCPTestClient`, one method each: tools, resources, prompts, tasks.

They are a mixin of the client: each builds a request's params and sends it
through the client's :meth:`~flask_mcp.testing.MCPTestClient.request` (or
``rounds``, which answers ``input_required`` results from ``answers=``).
"""

from __future__ import annotations

import time
import typing as t

from .streams import Answers

__all__ = ["PROGRESS", "TASK_PAUSES", "ClientCalls"]

#: The method of the notifications :attr:`ClientCalls.progress` collects.
PROGRESS = "notifications/progress"
#: The statuses :meth:`ClientCalls.wait_for_task` waits for by default: ended, or waiting for answers.
TASK_PAUSES = frozenset({"completed", "failed", "cancelled", "input_required"})


class ClientCalls:
    """The MCP methods of the test client, sent through its ``request`` and ``rounds``."""

    if t.TYPE_CHECKING:
        notifications: list[dict[str, t.Any]]
        _next_progress: int

        def request(
            self, method: str, params: dict[str, t.Any] | None = None, *, answers: Answers | None = None
        ) -> dict[str, t.Any]: ...

        def rounds(self, method: str, params: dict[str, t.Any], answers: Answers | None) -> dict[str, t.Any]: ...

    def discover(self) -> dict[str, t.Any]:
        """``server/discover`` (modern era)."""
        return self.request("server/discover", {})

    def call_tool(
        self,
        name: str,
        arguments: dict[str, t.Any] | None = None,
        *,
        answers: Answers | None = None,
        progress: bool = True,
    ) -> dict[str, t.Any]:
        """``tools/call``; returns the ``CallToolResult`` (after input rounds answered from *answers*).

        :param progress: ask for progress, as an SDK client given a progress
            callback does: the request carries a ``progressToken`` of its own
            in ``_meta`` (both eras), and the progress the tool reports is in
            :attr:`progress` afterwards. ``False`` sends none: ``ctx.report_progress``
            then sends nothing.
        """
        params: dict[str, t.Any] = {"name": name, "arguments": arguments or {}}
        if progress:
            self._next_progress += 1
            # One token per call, kept across its input rounds: the rounds are one call to the caller.
            params["_meta"] = {"progressToken": f"flask_mcp.testing-{self._next_progress}"}
        return self.rounds("tools/call", params, answers)

    @property
    def progress(self) -> list[dict[str, t.Any]]:
        """The ``params`` of the ``notifications/progress`` that came before the last response.

        Each has ``progressToken``, ``progress`` and, when the tool gave them,
        ``total`` and ``message``. A tool reports progress only to a request
        with a progress token, which :meth:`call_tool` sends unless told not to.
        """
        return [note.get("params") or {} for note in self.notifications if note.get("method") == PROGRESS]

    def get_task(self, task_id: str) -> dict[str, t.Any]:
        """``tasks/get``: the task (in the modern era with its ``result``, ``error`` or ``inputRequests``)."""
        return self.request("tasks/get", {"taskId": task_id})

    def task_result(self, task_id: str, *, answers: Answers | None = None) -> dict[str, t.Any]:
        """``tasks/result`` (2025-11-25): the task's outcome, once it has ended.

        A task waiting for input sends its questions on this request's
        stream; they are answered from *answers*.
        """
        return self.request("tasks/result", {"taskId": task_id}, answers=answers)

    def wait_for_task(
        self, task_id: str, statuses: t.Collection[str] = TASK_PAUSES, *, timeout: float = 10.0
    ) -> dict[str, t.Any]:
        """Poll ``tasks/get`` until the task's status is one of *statuses* (by default: ended, or waiting
        for answers); the task then.

        Polls as a client would, every ``pollIntervalMs`` (at most every 20 ms here).

        :raises AssertionError: it did not get there within *timeout* seconds.
        """
        deadline = time.monotonic() + timeout
        while True:
            task = self.get_task(task_id)
            if task["status"] in statuses:
                return task
            assert time.monotonic() < deadline, f"task {task_id} is still {task['status']} after {timeout} s"
            time.sleep(min(0.02, (task.get("pollIntervalMs") or task.get("pollInterval") or 20) / 1000))

    def list_tools(self) -> list[dict[str, t.Any]]:
        """Every tool descriptor, following ``nextCursor`` across pages."""
        return self._list_all("tools/list", "tools")

    def list_resources(self) -> list[dict[str, t.Any]]:
        """Every static resource descriptor, following ``nextCursor`` across pages."""
        return self._list_all("resources/list", "resources")

    def list_resource_templates(self) -> list[dict[str, t.Any]]:
        """Every resource template descriptor, following ``nextCursor`` across pages."""
        return self._list_all("resources/templates/list", "resourceTemplates")

    def list_prompts(self) -> list[dict[str, t.Any]]:
        """Every prompt descriptor, following ``nextCursor`` across pages."""
        return self._list_all("prompts/list", "prompts")

    def complete(
        self,
        ref: dict[str, t.Any],
        argument: str,
        value: str,
        context: dict[str, str] | None = None,
    ) -> dict[str, t.Any]:
        """``completion/complete``; returns the ``completion`` object (``values``, ``total``, ``hasMore``).

        :param ref: what is completed: ``{"type": "ref/prompt", "name": ...}``
            or ``{"type": "ref/resource", "uri": <template>}``.
        :param argument: the argument (or template variable) being typed.
        :param value: what has been typed so far.
        :param context: the values of arguments already chosen.
        """
        params: dict[str, t.Any] = {"ref": ref, "argument": {"name": argument, "value": value}}
        if context is not None:
            params["context"] = {"arguments": context}
        return t.cast(dict[str, t.Any], self.request("completion/complete", params)["completion"])

    def read_resource(self, uri: str, *, answers: Answers | None = None) -> list[dict[str, t.Any]]:
        """``resources/read``; returns the result's ``contents`` list, not the whole ``ReadResourceResult``.

        Each item is ``{"uri", "mimeType", "text"}`` (or ``"blob"``, base64),
        so ``client.read_resource("config://app")[0]["text"]`` is the first
        content's text. ``request("resources/read", {"uri": uri})`` returns
        the whole result (with its ``_meta``).
        """
        return t.cast(list[dict[str, t.Any]], self.rounds("resources/read", {"uri": uri}, answers)["contents"])

    def get_prompt(
        self, name: str, arguments: dict[str, str] | None = None, *, answers: Answers | None = None
    ) -> dict[str, t.Any]:
        """``prompts/get``; returns the ``GetPromptResult``."""
        return self.rounds("prompts/get", {"name": name, "arguments": arguments or {}}, answers)

    def _list_all(self, method: str, key: str) -> list[dict[str, t.Any]]:
        items: list[dict[str, t.Any]] = []
        params: dict[str, t.Any] = {}
        while True:
            result = self.request(method, params)
            items.extend(result[key])
            if "nextCursor" not in result:
                return items
            params = {"cursor": result["nextCursor"]}
