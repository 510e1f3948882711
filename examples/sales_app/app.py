"""An MCP App: a tool whose result a host shows in a view (a table of monthly sales).

``sales_report`` returns its figures as structured content, and its view,
``templates/sales.html`` (a Jinja template, its script inlined from
``static/sales.js``), receives them from the host and draws them. Run it with
``python examples/sales_app/app.py`` (serves http://127.0.0.1:5000/mcp).
"""

from __future__ import annotations

import typing as t
from pathlib import Path

from flask import Flask

from flask_mcp import MCP
from flask_mcp.apps import App

mcp = MCP(name="sales", version="1.0.0")

SALES = {2026: [("January", 120), ("February", 95), ("March", 143)]}


@mcp.tool(app=App("sales.html", prefers_border=True), annotations={"readOnlyHint": True})
def sales_report(year: int) -> dict[str, t.Any]:
    """Monthly sales of a year, shown as a table by hosts that support MCP Apps."""
    rows = [{"month": month, "amount": amount} for month, amount in SALES.get(year, [])]
    return {"year": year, "rows": rows, "total": sum(row["amount"] for row in rows)}


def create_app() -> Flask:
    # The templates and static files beside this file, however the module was loaded.
    app = Flask(__name__, root_path=str(Path(__file__).resolve().parent))
    mcp.init_app(app)
    return app


app = create_app()

if __name__ == "__main__":
    app.run(host="127.0.0.1", port=5000, threaded=True)
