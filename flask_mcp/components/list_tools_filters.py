"""The filters of list tools: the lookups, the arguments they add, and how items are matched.

A filter is declared by an item schema field name, alone for equality or
followed by ``__`` and a lookup, as in Django: ``"status"``,
``"title__icontains"``, ``"priority__in"``, ``"due__lte"``. Or as a mapping
from field name to lookups, ``{"title": ["exact", "icontains"]}``, where
``exact`` is the bare name.

Each filter becomes one optional argument of the tool, typed for its lookup
(:func:`argument_field`). The same lookup means the same thing on a Python
collection (:func:`matches`, here) and in SQL
(:func:`~flask_mcp.components.list_tools_sql.condition`).
"""

from __future__ import annotations

import copy
import dataclasses
import operator
import typing as t

import marshmallow as ma
from marshmallow import fields

from ..schemas.hints import JSONBoolean

__all__ = ["LOOKUPS", "TEXT_LOOKUPS", "Filter", "FilterSpec", "argument_field", "matches", "parse_filters", "value_of"]

#: What ``filter_fields`` accepts: names (``field`` or ``field__lookup``), or field -> lookups.
FilterSpec = t.Union[t.Sequence[str], t.Mapping[str, t.Union[str, t.Sequence[str]]]]

#: Lookups on text: their argument is a string, and only a string field may have them.
TEXT_LOOKUPS = frozenset({"contains", "icontains", "startswith", "istartswith", "endswith", "iendswith"})
#: Lookups comparing with the field's own values (ordered, so not containers).
_COMPARISONS = {"gt": operator.gt, "gte": operator.ge, "lt": operator.lt, "lte": operator.le}

#: Every lookup, with the argument's description (``{name}`` is the field's name).
LOOKUPS: dict[str, str] = {
    "exact": "Only items whose {name} equals this value.",
    "contains": "Only items whose {name} contains this text (case-sensitive).",
    "icontains": "Only items whose {name} contains this text, ignoring case.",
    "startswith": "Only items whose {name} starts with this text (case-sensitive).",
    "istartswith": "Only items whose {name} starts with this text, ignoring case.",
    "endswith": "Only items whose {name} ends with this text (case-sensitive).",
    "iendswith": "Only items whose {name} ends with this text, ignoring case.",
    "in": "Only items whose {name} is one of these values.",
    "gt": "Only items whose {name} is greater than this value.",
    "gte": "Only items whose {name} is greater than or equal to this value.",
    "lt": "Only items whose {name} is less than this value.",
    "lte": "Only items whose {name} is less than or equal to this value.",
    "isnull": "true: only items without a {name}; false: only items with one.",
}

#: Fields whose values are containers: neither ``in`` nor comparisons apply.
_CONTAINERS = (fields.Nested, fields.List, fields.Tuple, fields.Dict, fields.Pluck)
#: Fields whose values have no order in Python (an Enum member, a bool is hardly one): no comparisons.
_UNORDERED = (*_CONTAINERS, fields.Boolean, fields.Enum)


@dataclasses.dataclass(frozen=True)
class Filter:
    """One filter argument of a list tool."""

    #: The argument's name (as loaded; its wire name may differ by the field's ``data_key``).
    argument: str
    #: The item schema field it filters on.
    field: str
    #: The item's attribute (or key, or column) compared: the field's ``attribute`` or name.
    attribute: str
    #: One of :data:`LOOKUPS`.
    lookup: str


def parse_filters(spec: FilterSpec, declared: t.Mapping[str, fields.Field[t.Any]], tool: str) -> list[Filter]:
    """The filters *spec* declares on an item schema whose fields are *declared*.

    :raises ValueError: a field the item schema lacks, an unknown lookup, or
        a lookup that does not apply to its field's type; each names the
        offending entries.
    """
    entries: list[tuple[str, str, str]] = []  # (argument, field, lookup)
    if isinstance(spec, str):
        raise TypeError(f"list tool {tool!r}: filter_fields must be a list of names or a mapping, not a string")
    if isinstance(spec, t.Mapping):
        for name, lookups in spec.items():
            for lookup in [lookups] if isinstance(lookups, str) else lookups:
                entries.append((name if lookup == "exact" else f"{name}__{lookup}", name, lookup))
    else:
        for name in spec:
            field, separator, lookup = name.rpartition("__")
            # A field whose own name holds "__" is that field, compared for equality.
            if name in declared or not separator or field not in declared:
                entries.append((name, name, "exact"))
            else:
                entries.append((name, field, lookup))
    absent = [argument for argument, field, _ in entries if field not in declared]
    if absent:
        raise ValueError(f"list tool {tool!r}: filter_fields not in the item schema: {', '.join(absent)}")
    unknown = [argument for argument, _, lookup in entries if lookup not in LOOKUPS]
    if unknown:
        raise ValueError(
            f"list tool {tool!r}: unknown lookup(s) in filter_fields: {', '.join(unknown)} "
            f"(the lookups are {', '.join(LOOKUPS)})"
        )
    misfits = [
        f"{argument} ({lookup} needs {need}, {field} is {type(declared[field]).__name__})"
        for argument, field, lookup in entries
        if (need := _unfit(declared[field], lookup)) is not None
    ]
    if misfits:
        raise ValueError(f"list tool {tool!r}: lookup(s) that do not apply to their field: {'; '.join(misfits)}")
    found: dict[str, Filter] = {}
    for argument, field, lookup in entries:
        found.setdefault(argument, Filter(argument, field, declared[field].attribute or field, lookup))
    return list(found.values())


def _unfit(field: fields.Field[t.Any], lookup: str) -> str | None:
    """What *lookup* needs that *field* is not, or ``None`` when it applies."""
    if lookup in TEXT_LOOKUPS and not isinstance(field, fields.String):
        return "a string field"
    if lookup == "in" and isinstance(field, _CONTAINERS):
        return "a field of single values"
    if lookup in _COMPARISONS and isinstance(field, _UNORDERED):
        return "an ordered field"
    return None


def argument_field(declared: fields.Field[t.Any], spec: Filter) -> fields.Field[t.Any]:
    """The optional argument of filter *spec*, typed for its lookup from the item schema's *declared* field.

    Equality takes a value of the field's type (its validators and
    ``allow_none`` too); ``in`` a list of them (never ``null``: ``isnull``
    asks for that); a comparison one value of the field's type, without its
    validators (``priority__lt=6`` is a fair question when 5 is the highest
    priority); a text lookup a string; ``isnull`` a boolean.
    """
    field: fields.Field[t.Any]
    if spec.lookup in TEXT_LOOKUPS:
        field = fields.String()
    elif spec.lookup == "isnull":
        field = JSONBoolean()
    elif spec.lookup == "in":
        field = fields.List(_value(declared, allow_none=False, validators=True))
    else:
        exact = spec.lookup == "exact"
        field = _value(declared, allow_none=exact and declared.allow_none, validators=exact)
    field.required = False
    field.load_default = ma.missing
    field.dump_only = field.load_only = False
    # Loaded under the argument's name, which the pipeline looks for; the item's attribute is kept apart.
    field.attribute = None
    # On the wire a renamed field (data_key) keeps its lookup suffix: amountCents__gte.
    field.data_key = None if declared.data_key is None else declared.data_key + spec.argument[len(spec.field) :]
    field.metadata = {**declared.metadata, "description": LOOKUPS[spec.lookup].format(name=spec.field)}
    return field


def _value(declared: fields.Field[t.Any], *, allow_none: bool, validators: bool) -> fields.Field[t.Any]:
    """A copy of *declared* that loads one value of its type."""
    field = copy.deepcopy(declared)
    field.allow_none = allow_none
    field.data_key = field.attribute = None
    if not validators:
        field.validators = []
    return field


# -- matching Python items -----------------------------------------------


def value_of(item: t.Any, attribute: str) -> t.Any:
    """*item*'s *attribute*: a key of a mapping, else an attribute; ``None`` when absent."""
    if isinstance(item, t.Mapping):
        return item.get(attribute)
    return getattr(item, attribute, None)


def _text(test: t.Callable[[str, str], bool], fold: bool) -> t.Callable[[t.Any, t.Any], bool]:
    def check(value: t.Any, wanted: t.Any) -> bool:
        # Like SQL, a missing value (NULL) or a value that is no text matches no text lookup.
        if not isinstance(value, str):
            return False
        return test(value.lower(), wanted.lower()) if fold else test(value, wanted)

    return check


_TESTS: dict[str, t.Callable[[t.Any, t.Any], bool]] = {
    "exact": operator.eq,
    "contains": _text(operator.contains, fold=False),
    "icontains": _text(operator.contains, fold=True),
    "startswith": _text(str.startswith, fold=False),
    "istartswith": _text(str.startswith, fold=True),
    "endswith": _text(str.endswith, fold=False),
    "iendswith": _text(str.endswith, fold=True),
    # ``in`` lists hold no None, so a missing value is never in them, as NULL is never IN (...) in SQL.
    "in": lambda value, wanted: value in wanted,
    "isnull": lambda value, wanted: (value is None) is wanted,
}


def matches(item: t.Any, active: t.Sequence[tuple[Filter, t.Any]], tool: str) -> bool:
    """Whether *item* passes every filter of *active* (each with the value the caller gave).

    :raises TypeError: a comparison between the item's value and the
        argument that Python cannot order (the item does not hold the type
        its schema field says).
    """
    for spec, wanted in active:
        value = value_of(item, spec.attribute)
        compare = _COMPARISONS.get(spec.lookup)
        if compare is None:
            if not _TESTS[spec.lookup](value, wanted):
                return False
            continue
        # As in SQL, a missing value is neither greater nor less than anything.
        if value is None:
            return False
        try:
            if not compare(value, wanted):
                return False
        except TypeError:
            raise TypeError(
                f"list tool {tool!r}: cannot compare {spec.attribute} ({type(value).__name__}) "
                f"with the {spec.argument} argument ({type(wanted).__name__})"
            ) from None
    return True
