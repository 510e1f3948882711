"""The first ``argument_binding`` example of docs/tools.rst runs as written."""

from __future__ import annotations

import textwrap
import typing as t
from pathlib import Path

from flask import Flask

TOOLS_PAGE = Path(__file__).resolve().parents[1] / "docs" / "tools.rst"


def first_python_block_after(page: Path, marker: str) -> str:
    """The source of the first ``.. code-block:: python`` after the line *marker*, dedented."""
    lines = page.read_text(encoding="utf-8").splitlines()
    start = next(number for number, line in enumerate(lines) if line.strip() == marker)
    directive = next(number for number in range(start, len(lines)) if lines[number].strip() == ".. code-block:: python")
    indent = len(lines[directive]) - len(lines[directive].lstrip())
    block: list[str] = []
    for line in lines[directive + 1 :]:
        if line.strip() and len(line) - len(line.lstrip()) <= indent:
            break
        block.append(line)
    return textwrap.dedent("\n".join(block)).strip() + "\n"


def test_the_first_argument_binding_example_runs_as_written(make_client: t.Any) -> None:
    source = first_python_block_after(TOOLS_PAGE, "``argument_binding``")
    assert '@mcp.tool(argument_binding="bundle")' in source  # the example meant, not another
    namespace: dict[str, t.Any] = {"__name__": "tools_page_example"}
    exec(compile(source, f"{TOOLS_PAGE}:argument_binding", "exec"), namespace)  # the page's own code, as written

    app = Flask("tools_page")
    app.config.update(TESTING=True)
    namespace["mcp"].init_app(app)
    client = make_client(app, era="modern")
    (tool,) = client.list_tools()
    assert tool["name"] == "create_invoice" and tool["inputSchema"]["required"] == ["amount"]
    assert client.call_tool("create_invoice", {"amount": 12})["structuredContent"] == {
        "id": 1,
        "amount": 12,
        "currency": "EUR",
    }
    assert namespace["invoices"] == [{"amount": 12, "currency": "EUR"}]
    refused = client.call_tool("create_invoice", {"amount": "twelve"})
    assert refused["isError"] is True and "amount" in refused["content"][0]["text"]
