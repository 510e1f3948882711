"""marshmallow schemas to self-contained JSON Schema (draft 2020-12).

apispec's marshmallow converter does the field-by-field work in its OpenAPI
3.1 dialect, which is JSON Schema 2020-12 plus ``$ref`` pointers into
``#/components/schemas``. This module only post-processes what apispec
produces: nested schemas move under ``$defs`` with their references
rewritten, and the fields that do not belong to one direction are dropped
(``readOnly`` ones from input, ``writeOnly`` ones from output).

:func:`validate_json_schema` checks a value against a raw JSON Schema, for
tools declared with one instead of a marshmallow schema.
"""

from __future__ import annotations

import copy
import typing as t

import marshmallow as ma
from apispec import APISpec
from apispec.ext.marshmallow import MarshmallowPlugin

__all__ = ["schema_to_json_schema", "validate_json_schema"]

Direction = t.Literal["input", "output"]

_COMPONENTS_PREFIX = "#/components/schemas/"
_DEFS_PREFIX = "#/$defs/"


def _converter() -> tuple[APISpec, MarshmallowPlugin]:
    # A fresh spec per conversion: components of one tool never leak into
    # (or clash with) another tool's schema.
    plugin = MarshmallowPlugin()
    spec = APISpec(title="flask_mcp", version="1", openapi_version="3.1.0", plugins=[plugin])
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
    spec, plugin = _converter()
    assert plugin.converter is not None  # set by APISpec(plugins=[...])
    instance = schema() if isinstance(schema, type) else schema
    root = plugin.converter.schema2jsonschema(instance)  # type: ignore[no-untyped-call]
    components = spec.to_dict().get("components", {}).get("schemas", {})
    drop_flag = "readOnly" if direction == "input" else "writeOnly"
    result = _rewrite(copy.deepcopy(root), drop_flag)
    result["type"] = "object"
    result.setdefault("properties", {})
    if components:
        result["$defs"] = {name: _rewrite(copy.deepcopy(defn), drop_flag) for name, defn in components.items()}
    return t.cast(dict[str, t.Any], result)


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
