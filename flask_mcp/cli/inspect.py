"""``flask mcp inspect``: every component with its schemas, or one in detail.

::

    flask mcp inspect                 # tables of tools, resources, templates and prompts
    flask mcp inspect add             # one component: schemas, annotations, permissions
    flask mcp inspect --json          # the full listings, as a client receives them
    flask mcp inspect notes://{id} --json

The components are listed through the protocol core, as the caller of
``--token`` sees them (a filtered listing leaves out what it may not use).
The tables are drawn by rich when stdout is a terminal and written as plain,
stable text otherwise (for ``less``, ``grep`` and tests). The permissions
that guard a component come from the registry: they are not part of what a
client receives.
"""

from __future__ import annotations

import json
import sys
import typing as t

import click
from flask import current_app
from flask.cli import with_appcontext
from rich.console import Console
from rich.json import JSON

from ..components.signature_checks import unsupplied_message
from ..globals import state_of
from . import output
from .client import caller, era_option, list_all, token_option

if t.TYPE_CHECKING:
    from flask import Flask

    from ..components.model import Prompt, Resource, ResourceTemplate, Tool
    from ..core.server import Server

__all__ = ["inspect_command", "schema_summary"]


class _Kind(t.NamedTuple):
    title: str
    method: str
    key: str
    #: The descriptor members a NAME argument is matched against.
    names: tuple[str, ...]


KINDS: dict[str, _Kind] = {
    "tool": _Kind("Tools", "tools/list", "tools", ("name",)),
    "resource": _Kind("Resources", "resources/list", "resources", ("uri", "name")),
    "template": _Kind("Resource templates", "resources/templates/list", "resourceTemplates", ("uriTemplate", "name")),
    "prompt": _Kind("Prompts", "prompts/list", "prompts", ("name",)),
}
#: How the detail view labels the members of a descriptor, in the order it shows them.
LABELS: dict[str, str] = {
    "name": "Name",
    "title": "Title",
    "uri": "URI",
    "uriTemplate": "URI template",
    "mimeType": "MIME type",
    "size": "Size",
    "description": "Description",
    "arguments": "Arguments",
    "annotations": "Annotations",
    "inputSchema": "Input schema",
    "outputSchema": "Output schema",
    "icons": "Icons",
    "_meta": "Meta",
}


def _type_of(schema: t.Any) -> str:
    """A short name for the type a JSON Schema allows: ``integer``, ``array[string]``, ``string|null``."""
    if not isinstance(schema, dict):
        return "any"
    kind = schema.get("type")
    items = schema.get("items")
    if isinstance(kind, (str, list)):
        kinds = [kind] if isinstance(kind, str) else [str(k) for k in kind]
        named = [f"array[{_type_of(items)}]" if k == "array" and isinstance(items, dict) else k for k in kinds]
        return "|".join(named)
    for combined in ("anyOf", "oneOf"):
        if isinstance(schema.get(combined), list):
            return "|".join(_type_of(option) for option in schema[combined])
    if isinstance(schema.get("$ref"), str):
        return str(schema["$ref"]).rsplit("/", 1)[-1]
    if "enum" in schema:
        return "enum"
    return "any"


def schema_summary(schema: t.Any) -> str:
    """The properties of an object schema on one line, e.g. ``a: integer, tags?: array[string]``.

    An optional property ends in ``?``; ``-`` stands for no schema or no properties.
    """
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(properties, dict) or not properties:
        return "-" if not isinstance(schema, dict) or schema.get("type") in (None, "object") else _type_of(schema)
    required = set(schema.get("required") or ())
    return ", ".join(
        f"{name}{'' if name in required else '?'}: {_type_of(value)}" for name, value in properties.items()
    )


def _component(server: Server, kind: str, item: dict[str, t.Any]) -> Tool | Resource | ResourceTemplate | Prompt | None:
    registry = server.registry
    if kind == "tool":
        return registry.tools.get(item["name"])
    if kind == "resource":
        return registry.resources.get(item["uri"])
    if kind == "template":
        return registry.templates.get(item["uriTemplate"])
    return registry.prompts.get(item["name"])


def _permissions(server: Server, kind: str, item: dict[str, t.Any]) -> tuple[str, list[str]]:
    """The permissions guarding a component (``-`` for none) and the scopes they name."""
    component = _component(server, kind, item)
    rules = None if component is None else component.permissions
    if rules is None:
        rules = server.default_permissions
    if not rules:
        return "-", []
    scopes = [scope for rule in rules for scope in rule.required_scopes()]
    return ", ".join(repr(rule) for rule in rules), list(dict.fromkeys(scopes))


def _hints(tool: dict[str, t.Any]) -> str:
    """The tool's annotation hints that are true and its task support, e.g. ``readOnly, task: optional``.

    Task support is shown as the descriptor states it (``execution.taskSupport``);
    a descriptor without one is ``forbidden`` by the protocol's default, and says nothing.
    """
    annotations = tool.get("annotations")
    names = (
        [key.removesuffix("Hint") for key, value in annotations.items() if key.endswith("Hint") and value is True]
        if isinstance(annotations, dict)
        else []
    )
    execution = tool.get("execution")
    support = execution.get("taskSupport") if isinstance(execution, dict) else None
    if isinstance(support, str):
        names.append(f"task: {support}")
    return ", ".join(names) or "-"


def _rows(server: Server, kind: str, items: list[dict[str, t.Any]]) -> tuple[tuple[str, ...], list[tuple[str, ...]]]:
    permissions = [_permissions(server, kind, item)[0] for item in items]
    described = [output.summary(item.get("description")) for item in items]
    if kind == "tool":
        headers: tuple[str, ...] = ("NAME", "INPUT", "OUTPUT", "HINTS", "PERMISSIONS", "DESCRIPTION")
        cells: list[tuple[str, ...]] = [
            (
                x["name"],
                schema_summary(x.get("inputSchema")),
                schema_summary(x.get("outputSchema")),
                _hints(x),
            )
            for x in items
        ]
    elif kind in ("resource", "template"):
        member = "uri" if kind == "resource" else "uriTemplate"
        headers = ("URI" if kind == "resource" else "URI TEMPLATE", "NAME", "MIME TYPE", "PERMISSIONS", "DESCRIPTION")
        cells = [(x[member], x["name"], x.get("mimeType", "-")) for x in items]
    else:
        headers = ("NAME", "ARGUMENTS", "PERMISSIONS", "DESCRIPTION")
        cells = [
            (
                x["name"],
                ", ".join(a["name"] + ("" if a.get("required") else "?") for a in x.get("arguments", [])) or "-",
            )
            for x in items
        ]
    return headers, [(*cell, rule, text) for cell, rule, text in zip(cells, permissions, described, strict=True)]


def _show_detail(server: Server, kind: str, item: dict[str, t.Any], terminal: bool) -> None:
    """One component: its scalar members as lines, its schemas and other objects pretty-printed."""
    permissions, scopes = _permissions(server, kind, item)
    extra = {"Permissions": permissions, "Required scopes": ", ".join(scopes) or "-"}
    members = [key for key in LABELS if key in item] + [key for key in item if key not in LABELS]
    console = Console(file=sys.stdout, highlight=False, markup=False) if terminal else None
    title = f"{kind.capitalize() if kind != 'template' else 'Resource template'}: {item.get('name', '')}"
    lines: list[tuple[str, t.Any]] = [(LABELS.get(key, key), item[key]) for key in members if key != "name"]
    lines += list(extra.items())
    if console is not None:
        console.rule(title, align="left")
    else:
        click.echo(title)
    for label, value in lines:
        if isinstance(value, (dict, list)):
            if console is not None:
                console.print(f"{label}:", style="bold")
                console.print(JSON.from_data(value, indent=2), soft_wrap=True)
            else:
                click.echo(f"  {label}:")
                click.echo(
                    "\n".join("    " + line for line in json.dumps(value, indent=2, ensure_ascii=False).splitlines())
                )
        elif console is not None:
            console.print(f"{label}: {value}")
        else:
            text = str(value).strip().replace("\n", "\n    ")
            click.echo(f"  {label}: {text}")


def tool_problems(server: Server) -> list[str]:
    """Why each tool that cannot be called cannot: a refused schema, a required parameter nothing supplies."""
    found: list[str] = []
    for tool in server.registry.registered("tools").values():
        tool.complete()  # a tool stacked on a route takes its URL's variables first
        if tool.refused is not None:
            found.append(tool.refused)
        elif tool.unsupplied:
            found.append(unsupplied_message(tool.name, tool.unsupplied))
    return found


def _matches(item: dict[str, t.Any], kind: str, name: str) -> bool:
    return any(item.get(member) == name for member in KINDS[kind].names)


@click.command("inspect", short_help="Show every component with its schemas.")
@with_appcontext
@click.argument("name", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print the listings (or the components named NAME) as JSON.")
@era_option
@token_option
def inspect_command(name: str | None, as_json: bool, era: str, token: str | None) -> None:
    """Show the tools, resources, resource templates and prompts with their schemas.

    Without NAME, a table of each kind. With NAME (a tool or prompt name, a
    resource URI or name, a template's URI template or name), every component
    of that name in detail: its input and output schemas, annotations, and
    the permissions and scopes that guard it. With --json, the listings as a
    client receives them (only NAME's components when given).
    """
    app: Flask = current_app._get_current_object()  # type: ignore[attr-defined]
    server = state_of(app).server
    who = caller(app, token)
    listings = {kind: list_all(app, spec.method, spec.key, era, who) for kind, spec in KINDS.items()}
    if name is not None:
        listings = {kind: [x for x in items if _matches(x, kind, name)] for kind, items in listings.items()}
        if not any(listings.values()):
            raise click.ClickException(f"no tool, resource, resource template or prompt is named {name!r}")
    if as_json:
        document = {KINDS[kind].key: items for kind, items in listings.items()}
        click.echo(json.dumps(document, indent=2, ensure_ascii=False))
        return
    terminal = output.stdout_is_terminal()
    if name is not None:
        shown = [(kind, item) for kind, items in listings.items() for item in items]
        for index, (kind, item) in enumerate(shown):
            if index:
                click.echo()
            _show_detail(server, kind, item, terminal)
        return
    for index, (kind, items) in enumerate(listings.items()):
        headers, rows = _rows(server, kind, items)
        output.print_table(KINDS[kind].title, headers, rows, terminal, first=index == 0)
    problems = tool_problems(server)
    if problems:
        # On stderr, where a failing check is looked for; the tables stay as they are.
        click.echo(f"\nProblems ({len(problems)})", err=True)
        for problem in problems:
            click.echo(f"  {problem}", err=True)
