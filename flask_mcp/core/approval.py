"""What an approval is: its outcome, the question, the ledger of spent nonces, and the server's settings.

How it is asked is :mod:`flask_mcp.core.approve`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import secrets
import string
import threading
import time
import typing as t

from ..protocol import jsonrpc
from ..protocol.jsonrpc import MCPError
from .audit import ApprovalOutcome
from .context import CAPABILITY_MISSING
from .input_requests import Elicit
from .rounds import Round

if t.TYPE_CHECKING:
    from ..components.model import Tool
    from .approval_pages import ApprovalPages
    from .client import Call

__all__ = [
    "APPROVAL_KEY",
    "APPROVAL_META",
    "NOT_ASKED",
    "Approval",
    "ApprovalLedger",
    "ApprovalQuestion",
    "ApprovalUnavailable",
    "Approvals",
    "LocalLedger",
    "ACTIONS",
    "NO_FIELDS",
    "approval_message",
    "approver_of",
    "carried",
    "unavailable",
]

#: The key of the approval question in a modern round's ``inputRequests``.
APPROVAL_KEY = "io.flask-mcp/approval"
#: The ``_meta`` member of the question's params naming the tool and the digest it approves.
APPROVAL_META = "io.flask-mcp/approval"
#: An empty form: the question is the message; accept, decline or cancel is the answer.
NO_FIELDS: dict[str, t.Any] = {"type": "object", "properties": {}}
#: The outcome of each answer a client may give.
ACTIONS: dict[str, ApprovalOutcome] = {"accept": "accepted", "decline": "declined", "cancel": "cancelled"}


@dataclasses.dataclass(frozen=True)
class Approval:
    """What became of the approval of one call."""

    outcome: ApprovalOutcome = "none"
    #: ``"form"``, ``"url"`` or ``"terminal"``; ``None`` when nothing was asked.
    mode: str | None = None
    #: Who said yes (or no): the principal's subject, when there is one.
    approver: str | None = None

    @property
    def granted(self) -> bool:
        """Whether the call may run: approved, or no approval needed."""
        return self.outcome in ("none", "accepted")


#: The approval of a call that needs none.
NOT_ASKED = Approval()


class ApprovalUnavailable(MCPError):
    """The call needs an approval and there is no way to ask for one; nothing ran."""


class ApprovalLedger(t.Protocol):
    """Remembers spent approval nonces, across every process serving the app."""

    def spend(self, nonce: str, ttl: float) -> bool:
        """Mark *nonce* spent for *ttl* seconds; ``True`` only the first time."""
        ...


class LocalLedger:
    """An :class:`ApprovalLedger` in this process's memory, for a core used without the Flask layer."""

    def __init__(self, clock: t.Callable[[], float] = time.monotonic) -> None:
        self._spent: dict[str, float] = {}
        self._lock = threading.Lock()
        self._clock = clock

    def spend(self, nonce: str, ttl: float) -> bool:
        """``True`` the first time *nonce* is spent within *ttl* seconds."""
        now = self._clock()
        with self._lock:
            for old in [key for key, until in self._spent.items() if until <= now]:
                del self._spent[old]  # expired nonces: their states have expired too
            if nonce in self._spent:
                return False
            self._spent[nonce] = now + ttl
            return True


class Approvals:
    """How a server asks for approvals.

    :param ledger: where spent nonces are remembered (the shared cache in a Flask app).
    :param ttl: seconds from the question to the answer (``MCP_CONFIRM_TTL``).
    :param mode: ``"auto"``, ``"form"`` or ``"url"`` (``MCP_CONFIRM_MODE``).
    :param pages: the approval pages of URL mode; ``None``: forms only.
    :param clock: seconds since the epoch.
    """

    def __init__(
        self,
        ledger: ApprovalLedger | None = None,
        *,
        ttl: float = 300.0,
        mode: str = "auto",
        pages: ApprovalPages | None = None,
        clock: t.Callable[[], float] = time.time,
    ) -> None:
        self.ledger: ApprovalLedger = ledger if ledger is not None else LocalLedger()
        self.ttl = ttl
        self.mode = mode
        self.pages = pages
        self.clock = clock


class ApprovalQuestion(Elicit):
    """The form elicitation asking the human to approve one call; its ``_meta`` names the tool and digest."""

    def __init__(self, message: str, tool: str, digest: str) -> None:
        super().__init__(message, NO_FIELDS)
        self.tool = tool
        self.digest = digest

    @property
    def params(self) -> dict[str, t.Any]:
        """The form's params, with ``_meta`` naming what is approved."""
        return {**super().params, "_meta": {APPROVAL_META: {"tool": self.tool, "argumentsDigest": self.digest}}}


class _Fields(dict[str, t.Any]):
    # A placeholder naming no argument is left as written rather than failing the message.
    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


def approval_message(tool: Tool, template: str, arguments: t.Mapping[str, t.Any]) -> str:
    """What the human is shown: the tool's own message (*template* formatted with the arguments), the
    tool's name and its exact arguments.

    A template that does not format (a bad placeholder) falls back to the default question.
    """
    exact = jsonrpc.dumps(dict(arguments)) if arguments else "(no arguments)"
    question = f"Allow the tool {tool.name!r} to run?"
    if template:
        # A template that does not format leaves the default question, which still shows what runs.
        with contextlib.suppress(ValueError, IndexError, KeyError, AttributeError, TypeError):
            question = string.Formatter().vformat(template, (), _Fields(arguments))
    return f"{question}\n\nTool: {tool.name}\nArguments: {exact}"


def approver_of(call: Call) -> str | None:
    """Who answers the question: the caller's subject, when there is one."""
    return call.principal.subject if call.principal is not None else None


def unavailable(question: ApprovalQuestion, needs: str) -> ApprovalUnavailable:
    """The error of a call whose approval cannot be asked for: nothing ran; *needs* says what would be needed."""
    return ApprovalUnavailable(
        CAPABILITY_MISSING,
        f"The tool {question.tool!r} runs only once the user approves it, which needs {needs}; nothing was run",
        {"requiredCapabilities": question.required_capabilities()},
    )


def carried(round_: Round, digest: str, now: float, approver: str | None, mode: str = "form") -> Approval:
    """An accepted approval, carried in the state of any further round of the same request.

    Should the run ask the client more, its next state carries the approval under a fresh nonce:
    each state approves one run, so replaying any of them asks again.
    """
    round_.approval_out = {"n": secrets.token_urlsafe(16), "d": digest, "t": now, "m": mode, "ok": True}
    if approver is not None:
        round_.approval_out["by"] = approver
    return Approval("accepted", mode, approver)
