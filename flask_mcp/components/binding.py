"""From a tool call's ``arguments`` to the keyword arguments of its function.

The steps, decided once at registration by an :class:`ArgumentBinder`:

1. validate the arguments with the input schema, handling names it does not
   declare by the tool's :class:`~flask_mcp.UnknownArguments` policy;
2. build the keyword pool: the validated arguments spread out (or bundled
   as ``data``), merged with what the tool's ``kwargs`` provider returns (who
   wins on a clash is the tool's :class:`~flask_mcp.KwargsPrecedence`);
3. add the server's seeds (``data``, ``user``, ``request``, the
   :class:`~flask_mcp.Context`), which client arguments can never replace;
4. keep what the function accepts.
"""

from __future__ import annotations

import dataclasses
import functools
import heapq
import inspect
import typing as t

import marshmallow as ma

from ..policies.options import ArgumentBinding, KwargsPrecedence, UnknownArguments
from ..schemas.fast_load import FastLoader, fast_loader
from ..schemas.json_schema import validate_json_schema

if t.TYPE_CHECKING:
    from ..policies.principal import Principal
    from ..policies.tool import KwargsProvider

__all__ = ["MAX_LISTED_UNKNOWN", "RESERVED_NAMES", "ArgumentBinder", "BindingCall", "accepted_parameters"]


class RequestSource(t.Protocol):
    """The server a call runs on, as binding sees it: where the ``request`` seed comes from."""

    def current_request(self) -> t.Any:
        """The transport's request object for the call being handled (Flask's ``request``)."""
        ...


class BindingCall(t.Protocol):
    """What binding reads of the call being handled (a :class:`flask_mcp.core.client.Call`)."""

    #: The authenticated caller: the ``user`` seed.
    principal: Principal | None

    @property
    def server(self) -> RequestSource:
        """The server handling the call."""
        ...

    def context(self) -> t.Any:
        """The call's :class:`~flask_mcp.Context`: the ``context`` seed and the provider's argument."""
        ...


#: Names the server fills: never arguments a client can set.
RESERVED_NAMES = frozenset({"request", "user", "data", "context"})

_MARSHMALLOW_UNKNOWN = {
    UnknownArguments.REJECT: ma.RAISE,
    UnknownArguments.PASSTHROUGH: ma.INCLUDE,
    UnknownArguments.IGNORE: ma.EXCLUDE,
}
_UNKNOWN_MESSAGE = "Unknown argument."
#: Unknown argument names an error names at most (the first ones, sorted).
MAX_LISTED_UNKNOWN = 20


def accepted_parameters(func: t.Callable[..., t.Any]) -> frozenset[str] | None:
    """Names *func* takes as keywords; ``None`` when it has ``**kwargs`` (takes any)."""
    params = inspect.signature(func).parameters.values()
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return None
    return frozenset(p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))


def unknown_policy_of(schema: ma.Schema | dict[str, t.Any]) -> UnknownArguments:
    """The policy a schema implies on its own (marshmallow ``unknown``, or ``additionalProperties``)."""
    if isinstance(schema, dict):
        return UnknownArguments.REJECT if schema.get("additionalProperties") is False else UnknownArguments.PASSTHROUGH
    return {ma.RAISE: UnknownArguments.REJECT, ma.INCLUDE: UnknownArguments.PASSTHROUGH}.get(
        schema.unknown, UnknownArguments.IGNORE
    )


@dataclasses.dataclass(frozen=True)
class ArgumentBinder:
    """Validates a tool's arguments and builds its keyword arguments."""

    schema: ma.Schema | dict[str, t.Any]
    binding: ArgumentBinding
    unknown: UnknownArguments
    #: Parameters the function accepts; ``None`` for ``**kwargs``.
    accepts: frozenset[str] | None
    context_param: str | None = None
    provider: KwargsProvider | None = None
    precedence: KwargsPrecedence = KwargsPrecedence.PROVIDER

    @functools.cached_property
    def fast(self) -> FastLoader | None:
        """The schema's compiled validator, when it has one (:mod:`flask_mcp.schemas.fast_load`).

        Found once: most tools take a few plain values, checked without marshmallow.
        """
        return fast_loader(self.schema) if isinstance(self.schema, ma.Schema) else None

    @functools.cached_property
    def plain(self) -> frozenset[str] | None:
        """The names the function takes, when it takes only its own named arguments; else ``None``.

        Decided once: a function that takes no provider's values, context or
        seeds gets exactly those of the validated data.
        """
        if (
            self.provider is not None
            or self.context_param is not None
            or self.accepts is None
            or self.binding is ArgumentBinding.BUNDLE
            or self.accepts & RESERVED_NAMES
        ):
            return None
        return self.accepts

    @functools.cached_property
    def plain_besides_context(self) -> frozenset[str] | None:
        """The names the function takes besides its :class:`~flask_mcp.Context`, when that and its
        own named arguments are all it takes; else ``None`` (as :attr:`plain`, for a tool with a context).
        """
        context = self.context_param
        if (
            context is None
            or self.provider is not None
            or self.accepts is None
            or self.binding is ArgumentBinding.BUNDLE
            or (self.accepts - {context}) & RESERVED_NAMES
        ):
            return None
        return self.accepts - {context}

    @functools.cached_property
    def declared(self) -> frozenset[str]:
        """Argument names the input schema declares."""
        if isinstance(self.schema, dict):
            return frozenset(self.schema.get("properties") or ())
        return frozenset(field.data_key or name for name, field in self.schema.load_fields.items())

    def validate(self, arguments: dict[str, t.Any]) -> dict[str, t.Any]:
        """Validate *arguments* by the schema and the unknown-argument policy.

        The cost is linear in the number of arguments, however many are
        unknown: they are found with one set operation, and under ``reject``
        only the first :data:`MAX_LISTED_UNKNOWN` of them (sorted) are named.

        :raises marshmallow.ValidationError: naming each offending field;
            unknown names (under ``reject``) are listed sorted, first.
        """
        declared = self.declared
        # The common case, every name declared, costs one subset test.
        unknown = () if arguments.keys() <= declared else arguments.keys() - declared
        if not unknown and self.fast is not None:
            loaded = self.fast(arguments)
            if loaded is not None:
                return loaded
        reject = bool(unknown) and self.unknown is UnknownArguments.REJECT
        if isinstance(self.schema, dict):
            known = {k: v for k, v in arguments.items() if k in declared} if unknown else arguments
            if reject:
                raise self._unknown_error(unknown, self._json_schema_errors(known))
            data = validate_json_schema(self.schema, dict(known))
        else:
            try:
                data = self.schema.load(arguments, unknown=ma.EXCLUDE if unknown else ma.RAISE)
            except ma.ValidationError as exc:
                if reject:
                    raise self._unknown_error(unknown, exc.messages) from None
                raise
            if reject:
                raise self._unknown_error(unknown, {})
        if unknown and self.unknown is UnknownArguments.PASSTHROUGH and isinstance(data, dict):
            # In the caller's order, not the set's.
            skip = declared | RESERVED_NAMES
            data = {**data, **{name: value for name, value in arguments.items() if name not in skip}}
        return data

    def _json_schema_errors(self, arguments: dict[str, t.Any]) -> t.Any:
        try:
            validate_json_schema(self.schema, arguments)  # type: ignore[arg-type]
        except ma.ValidationError as exc:
            return exc.messages
        return {}

    @staticmethod
    def _unknown_error(unknown: t.Collection[str], others: t.Any) -> ma.ValidationError:
        listed = heapq.nsmallest(MAX_LISTED_UNKNOWN, unknown)
        messages: dict[str, t.Any] = {name: [_UNKNOWN_MESSAGE] for name in listed}
        if isinstance(others, dict):
            messages.update(others)
        error = ma.ValidationError(messages)
        #: The first unknown names, sorted, for the one-line description.
        error.unknown_arguments = listed  # type: ignore[attr-defined]
        #: How many there are in all.
        error.unknown_count = len(unknown)  # type: ignore[attr-defined]
        return error

    def bind(self, call: BindingCall, data: t.Any, sent: t.Collection[str] = ()) -> dict[str, t.Any]:
        """The keyword arguments of the function for validated *data*.

        :param sent: the argument names the caller gave; under the ``caller``
            precedence only those beat the provider, not the schema's defaults.
        """
        plain = self.plain
        if plain is not None and isinstance(data, dict):
            return {name: value for name, value in data.items() if name in plain}
        if self.binding is ArgumentBinding.BUNDLE:
            pool: dict[str, t.Any] = {}
        else:
            pool = {k: v for k, v in data.items() if k not in RESERVED_NAMES} if isinstance(data, dict) else {}
        context = None
        if self.provider is not None:
            context = call.context()
            extra = dict(self.provider(context))
            if self.precedence is KwargsPrecedence.PROVIDER:
                pool = {**pool, **extra}
            else:
                pool = {**pool, **extra, **{name: pool[name] for name in sent if name in pool}}
        accepts = self.accepts
        # The seeds: the server's, whatever the client or the provider sent.
        for name in RESERVED_NAMES:
            pool.pop(name, None)
        if accepts is None or "data" in accepts:
            pool["data"] = data
        if self.context_param is not None or (accepts is not None and "context" in accepts):
            context = context or call.context()
            pool[self.context_param or "context"] = context
            if accepts is not None and "context" in accepts:
                pool["context"] = context
        if accepts is not None:
            if "user" in accepts:
                principal = call.principal
                pool["user"] = principal.user if principal is not None and principal.user is not None else principal
            if "request" in accepts:
                pool["request"] = call.server.current_request()
            return {name: value for name, value in pool.items() if name in accepts}
        if self.binding is ArgumentBinding.SPREAD:
            pool.pop("data", None)  # **kwargs takes the arguments, not the bundle
        return pool
