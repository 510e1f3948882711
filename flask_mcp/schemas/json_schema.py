"""marshmallow schemas to self-contained JSON Schema (draft 2020-12).

apispec's marshmallow converter does the field-by-field work in its OpenAPI
3.1 dialect, which is JSON Schema 2020-12 plus ``$ref`` pointers into
``#/components/schemas``. This module only post-processes what apispec
produces: nested schemas move under ``$defs`` with their references
rewritten, and the fields that do not belong to one direction are dropped
(``readOnly`` ones from input, ``writeOnly`` ones from output), and a value
that may be null is spelled ``anyOf: [{...}, {"type": "null"}]`` rather than
with a type list (:func:`portable_nulls`).

A schema or a field with a ``json_schema_for(direction)`` method supplies
its own JSON Schema instead (pydantic models and types,
:mod:`flask_mcp.schemas.pydantic_models`); a field's ``$defs`` join the
root's, renamed on a clash.

:func:`validate_json_schema` checks a value against a raw JSON Schema, for
tools declared with one instead of a marshmallow schema.
"""

from __future__ import annotations

import copy
import typing as t

import marshmallow as ma
from apispec import APISpec
from apispec.ext.marshmallow import MarshmallowPlugin

__all__ = ["non_null", "portable_nulls", "schema_to_json_schema", "validate_json_schema"]

Direction = t.Literal["input", "output"]

_COMPONENTS_PREFIX = "#/components/schemas/"
_DEFS_PREFIX = "#/$defs/"


#: Keywords that describe a value rather than constrain it: they stay beside
#: ``anyOf`` when a nullable schema is split, where clients show them.
_ANNOTATIONS = frozenset(
    {"title", "description", "default", "examples", "deprecated", "readOnly", "writeOnly", "$comment"}
)
#: Keywords whose values are JSON data, not schemas: never rewritten.
_DATA = frozenset({"enum", "const", "default", "examples"})


def portable_nulls(node: t.Any) -> t.Any:
    """*node* with every nullable type list rewritten as ``anyOf`` with ``{"type": "null"}``, recursively.

    apispec (like JSON Schema 2020-12 allows) spells a marshmallow field with
    ``allow_none=True`` as ``{"type": ["string", "null"], "maxLength": 5}``.
    That form is valid JSON Schema and valid in the MCP schema, but not
    portable: Gemini's function declarations take an OpenAPI 3.0 subset whose
    ``type`` is one value, and refuse a list ("Proto field is not repeating,
    cannot start list"); OpenAI's strict function schemas accept both forms.
    ``anyOf: [{"type": "string", "maxLength": 5}, {"type": "null"}]`` is
    accepted by all of them, and is what pydantic, and so the official
    Python SDK's ``MCPServer``, emits for ``str | None``: clients meet one
    spelling whichever server they talk to.

    The constraints move into the non-null branch (``enum`` without its
    ``null``), annotations (``title``, ``description``, ``default``,
    ``x-*`` extensions, ...) stay beside ``anyOf``. Values of data keywords
    (``enum``, ``default``, ...) are left alone. A new object is returned.
    """
    if isinstance(node, list):
        return [portable_nulls(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: value if key in _DATA or key.startswith("x-") else portable_nulls(value) for key, value in node.items()}
    kinds = out.get("type")
    if not (isinstance(kinds, list) and "null" in kinds):
        return out
    others = [kind for kind in kinds if kind != "null"]
    if not others:
        out["type"] = "null"
        return out
    kept = {key: value for key, value in out.items() if key in _ANNOTATIONS or key.startswith("x-")}
    constraints = {key: value for key, value in out.items() if key not in kept and key != "type"}
    if isinstance(constraints.get("enum"), list):
        constraints["enum"] = [value for value in constraints["enum"] if value is not None]
    # Several non-null types (["string", "integer", "null"]): one branch each, every
    # constraint in each (JSON Schema applies a keyword only to values of its type).
    branches = [{"type": kind, **constraints} for kind in others]
    return {"anyOf": [*branches, {"type": "null"}], **kept}


def non_null(schema: t.Any) -> t.Any:
    """The schema of *schema*'s non-null values: the one other branch of a nullable ``anyOf``, else *schema*.

    For readers of a property's ``type`` (the CLI's argument parsing): with
    :func:`portable_nulls`, a nullable property keeps it one level down.
    """
    if isinstance(schema, dict) and isinstance(schema.get("anyOf"), list):
        branches = [b for b in schema["anyOf"] if not (isinstance(b, dict) and b.get("type") == "null")]
        if len(branches) == 1 and len(branches) < len(schema["anyOf"]):
            return branches[0]
    return schema


def _dumped_as_string(self: t.Any, field: ma.fields.Field[t.Any], ret: dict[str, t.Any], **kwargs: t.Any) -> t.Any:
    """A number field with ``as_string=True`` dumps a string, which apispec calls a number."""
    if not (isinstance(field, ma.fields.Number) and field.as_string):
        return {}
    kind = ret.get("type")
    return {"type": ["string", "null"] if isinstance(kind, list) and "null" in kind else "string"}


def _converter(direction: Direction) -> tuple[APISpec, MarshmallowPlugin]:
    # A fresh spec per conversion: components of one tool never leak into
    # (or clash with) another tool's schema.
    plugin = MarshmallowPlugin()
    spec = APISpec(title="flask_mcp", version="1", openapi_version="3.1.0", plugins=[plugin])
    if direction == "output":
        assert plugin.converter is not None  # set by APISpec(plugins=[...])
        plugin.converter.add_attribute_function(_dumped_as_string)  # type: ignore[no-untyped-call]
    return spec, plugin


def _rewrite(node: t.Any, drop_flag: str) -> t.Any:
    """Rewrite refs to ``$defs`` and drop properties flagged *drop_flag*, recursively."""
    if isinstance(node, list):
        return [_rewrite(item, drop_flag) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, t.Any] = {}
    for key, value in node.items():
        if key == "$ref" and isinstance(value, str) and value.startswith(_COMPONENTS_PREFIX):
            out[key] = _DEFS_PREFIX + value[len(_COMPONENTS_PREFIX) :]
        elif key == "properties" and isinstance(value, dict):
            out[key] = {
                name: _rewrite(prop, drop_flag)
                for name, prop in value.items()
                if not (isinstance(prop, dict) and prop.get(drop_flag))
            }
        else:
            out[key] = _rewrite(value, drop_flag)
    if "required" in out and isinstance(out.get("properties"), dict):
        required = [name for name in out["required"] if name in out["properties"]]
        if required:
            out["required"] = required
        else:
            del out["required"]
    return out


def schema_to_json_schema(schema: type[ma.Schema] | ma.Schema, direction: Direction = "input") -> dict[str, t.Any]:
    """Convert a marshmallow schema to a self-contained JSON Schema object.

    :param schema: a :class:`marshmallow.Schema` class or instance.
    :param direction: ``"input"`` drops ``dump_only`` (``readOnly``) fields,
        ``"output"`` drops ``load_only`` (``writeOnly``) fields.
    :returns: a dict with ``"type": "object"``, ``properties``, ``required``,
        ``additionalProperties: false`` when the schema raises on unknown
        fields, and ``$defs`` for nested schemas (recursion works).
    """
    instance = schema() if isinstance(schema, type) else schema
    own = getattr(instance, "json_schema_for", None)
    if own is not None:
        return t.cast(dict[str, t.Any], portable_nulls(own(direction)))
    spec, plugin = _converter(direction)
    assert plugin.converter is not None  # set by APISpec(plugins=[...])
    root = plugin.converter.schema2jsonschema(instance)  # type: ignore[no-untyped-call]
    components = spec.to_dict().get("components", {}).get("schemas", {})
    drop_flag = "readOnly" if direction == "input" else "writeOnly"
    result = _rewrite(copy.deepcopy(root), drop_flag)
    result["type"] = "object"
    result.setdefault("properties", {})
    if components:
        result["$defs"] = {name: _rewrite(copy.deepcopy(defn), drop_flag) for name, defn in components.items()}
    for name, field in instance.fields.items():
        key = field.data_key or name
        if hasattr(field, "json_schema_for") and key in result["properties"]:
            result["properties"][key] = _merge_defs(result, field.json_schema_for(direction))
    return t.cast(dict[str, t.Any], portable_nulls(result))


def _merge_defs(root: dict[str, t.Any], schema: dict[str, t.Any]) -> dict[str, t.Any]:
    """*schema* without its ``$defs``, which join *root*'s (a name taken by another definition is renamed)."""
    defs = schema.pop("$defs", None)
    if not defs:
        return schema
    merged = root.setdefault("$defs", {})
    renames: dict[str, str] = {}
    for name, definition in defs.items():
        new, number = name, 1
        while new in merged and merged[new] != definition:
            number += 1
            new = f"{name}{number}"
        if new != name:
            renames[_DEFS_PREFIX + name] = _DEFS_PREFIX + new
    if renames:
        defs = {
            renames.get(_DEFS_PREFIX + name, _DEFS_PREFIX + name)[len(_DEFS_PREFIX) :]: d for name, d in defs.items()
        }
        defs, schema = _renamed(defs, renames), _renamed(schema, renames)
    merged.update(defs)
    return schema


def _renamed(node: t.Any, renames: dict[str, str]) -> t.Any:
    if isinstance(node, list):
        return [_renamed(item, renames) for item in node]
    if not isinstance(node, dict):
        return node
    return {
        key: renames.get(value, value) if key == "$ref" and isinstance(value, str) else _renamed(value, renames)
        for key, value in node.items()
    }


def validate_json_schema(schema: dict[str, t.Any], instance: dict[str, t.Any]) -> dict[str, t.Any]:
    """Check *instance* against a raw JSON Schema when ``jsonschema`` is installed.

    :raises marshmallow.ValidationError: naming each offending location, so
        raw schemas fail like marshmallow ones.
    """
    try:
        import jsonschema
    except ImportError:  # optional: without it a raw schema is advertised, not enforced
        return instance
    validator = jsonschema.Draft202012Validator(schema)
    messages: dict[str, list[str]] = {}
    for error in validator.iter_errors(instance):
        location = ".".join(str(part) for part in error.absolute_path) or "_schema"
        messages.setdefault(location, []).append(error.message)
    if messages:
        raise ma.ValidationError(messages)
    return instance
