"""Source code of a new flask_mcp tool: a marshmallow schema, the tool, and its test.

The generated tool echoes its validated arguments, dumped through the same
schema (so dates come back as ISO strings), until its body is written.
"""

from __future__ import annotations

import keyword
import re
import typing as t

__all__ = ["FIELD_TYPES", "RESERVED_FIELD_NAMES", "FieldSpec", "generate", "sanitize_name"]


class FieldSpec(t.TypedDict):
    """One argument of the generated tool."""

    name: str
    type: str
    required: bool


#: Field type -> (marshmallow field, Python hint, a sample JSON value for the test).
FIELD_TYPES: dict[str, tuple[str, str, str]] = {
    "string": ("fields.String()", "str", '"example"'),
    "integer": ("fields.Integer(strict=True)", "int", "1"),
    "number": ("fields.Float(allow_nan=False)", "float", "1.5"),
    "boolean": ("fields.Boolean()", "bool", "True"),
    "date": ("fields.Date()", "datetime.date", '"2024-01-31"'),
    "array": ("fields.List(fields.Raw())", "list[t.Any]", "[1, 2]"),
    "object": ("fields.Dict(keys=fields.String())", "dict[str, t.Any]", '{"key": "value"}'),
}

#: Names that would shadow ``marshmallow.fields`` or the options class inside the generated schema class.
RESERVED_FIELD_NAMES = frozenset({"fields", "Meta"})


def sanitize_name(name: str) -> str:
    """A lower-case Python identifier from *name*: ``"Create Invoice!"`` gives ``create_invoice``.

    Runs of other characters become one ``_``; a leading digit gets a
    ``tool_`` prefix and a keyword a trailing ``_``. Empty when *name* has no
    letter or digit.
    """
    cleaned = re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")
    if cleaned[:1].isdigit():
        cleaned = f"tool_{cleaned}"
    if keyword.iskeyword(cleaned):
        cleaned += "_"
    return cleaned


def _class_name(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_") if part) + "Args"


def _field_line(spec: FieldSpec) -> str:
    field = FIELD_TYPES[spec["type"]][0]
    # An optional argument defaults to None in the function, so the schema must let None through.
    extra = "required=True" if spec["required"] else "allow_none=True"
    field = f"{field[:-1]}{', ' if not field.endswith('()') else ''}{extra})"
    return f"    {spec['name']} = {field}"


def _module(name: str, specs: list[FieldSpec]) -> str:
    cls = _class_name(name)
    # Required parameters first: Python wants the ones with defaults last.
    ordered = sorted(specs, key=lambda spec: not spec["required"])
    params = ", ".join(
        f"{s['name']}: {FIELD_TYPES[s['type']][1]}" + ("" if s["required"] else " | None = None") for s in ordered
    )
    echo = ", ".join(f'"{s["name"]}": {s["name"]}' for s in specs)
    imports = ["import datetime"] if any(s["type"] == "date" for s in specs) else []
    lines = [
        f'"""The ``{name}`` tool."""',
        "",
        "from __future__ import annotations",
        "",
        *imports,
        "import typing as t",
        "",
        "from marshmallow import Schema, fields",
        "",
        "from flask_mcp import MCP",
        "",
        "# In an app with several tool modules, import its one MCP object instead.",
        f'mcp = MCP(name="{name}", version="0.1.0")',
        "",
        "",
        f"class {cls}(Schema):",
        f'    """Arguments of ``{name}``."""',
        "",
        *(_field_line(spec) for spec in specs),
        "",
        "",
        f"@mcp.tool(input_schema={cls}, output_schema={cls})",
        f"def {name}({params}) -> dict[str, t.Any]:",
        f'    """Describe what {name} does: this text is the tool\'s description."""',
        "    # Echo the validated arguments until the real work is written.",
        f"    return {{{echo}}}",
        "",
    ]
    return "\n".join(lines)


def _test(name: str, specs: list[FieldSpec]) -> str:
    sample = ", ".join(f'"{s["name"]}": {FIELD_TYPES[s["type"]][2]}' for s in specs if s["required"])
    return "\n".join(
        [
            f'"""Tests of the ``{name}`` tool."""',
            "",
            "from __future__ import annotations",
            "",
            "from flask import Flask",
            "",
            "from flask_mcp.testing import MCPTestClient",
            f"from tools.{name} import mcp",
            "",
            "",
            f"def test_{name}_accepts_its_required_arguments() -> None:",
            "    app = Flask(__name__)",
            "    mcp.init_app(app)",
            "    client = MCPTestClient(app)",
            "    client.initialize()",
            f'    result = client.call_tool("{name}", {{{sample}}})',
            '    assert not result.get("isError"), result',
            "",
        ]
    )


def _file(path: str, content: str, kind: str) -> dict[str, t.Any]:
    return {"path": path, "content": content, "kind": kind, "size": len(content.encode())}


def generate(name: str, specs: list[FieldSpec]) -> dict[str, t.Any]:
    """The files of a tool called *name* (already sanitised) with the fields *specs*.

    :returns: ``name``, ``fieldCount`` and ``files`` by path: the module
        (``kind`` ``"module"``) and its pytest test (``kind`` ``"test"``).
    """
    files = [
        _file(f"tools/{name}.py", _module(name, specs), "module"),
        _file(f"tests/test_{name}.py", _test(name, specs), "test"),
    ]
    return {"name": name, "fieldCount": len(specs), "files": {f["path"]: f for f in files}}
