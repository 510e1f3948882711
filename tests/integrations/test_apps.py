"""MCP Apps: a tool's view rendered from a template, linked from the tool, and shown by a real browser host.

The browser test builds the smallest host there is: a page with the view in
a sandboxed frame (``srcdoc``, scripts allowed, an origin of its own) that
answers the view's ``ui/initialize``, waits for ``ui/notifications/initialized``
and sends it the tool's result, as the extension's host side does. Headless
Chromium runs it; the test reads the table the view drew.
"""

from __future__ import annotations

import html
import json
import typing as t
from pathlib import Path

import pytest
from flask import Flask

from flask_mcp import MCP
from flask_mcp.integrations.apps import MIME_TYPE, App

from ..browser import needs_chromium
from ..transport.test_swagger_browser import browser  # noqa: F401 - the fixture

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "sales_app"


def sales_app() -> Flask:
    from examples.sales_app.app import create_app

    return create_app()


def test_the_tool_links_its_view_and_the_view_is_a_ui_resource(make_client: t.Any) -> None:
    app = sales_app()
    client = make_client(app, era="modern")
    assert client.discover()["capabilities"]["extensions"]["io.modelcontextprotocol/ui"] == {}
    (tool,) = client.list_tools()
    assert tool["_meta"]["ui"] == {"resourceUri": "ui://sales_report/view"}
    assert tool["_meta"]["ui/resourceUri"] == "ui://sales_report/view"  # the key older hosts read
    (view,) = client.read_resource("ui://sales_report/view")
    assert view["mimeType"] == MIME_TYPE and view["_meta"] == {"ui": {"prefersBorder": True}}
    page = view["text"]
    assert page.startswith("<!DOCTYPE html>") and "Waiting for the sales_report result" in page
    assert 'request("ui/initialize"' in page  # the static script, inlined
    listed = {resource["uri"]: resource for resource in client.list_resources()}
    assert listed["ui://sales_report/view"]["_meta"] == {"ui": {"prefersBorder": True}}


def test_a_views_csp_and_template_are_its_own(tmp_path: Path, make_app: t.Any, make_client: t.Any) -> None:
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "map.html").write_text("<!DOCTYPE html><p>{{ tool }}</p>")
    mcp = MCP(name="maps")
    csp = {"connectDomains": ["https://api.example.com"], "resourceDomains": ["https://tiles.example.com"]}

    @mcp.tool(app=App("map.html", csp=csp))
    def show_map(place: str) -> dict[str, str]:
        return {"place": place}

    app = Flask("maps", root_path=str(tmp_path))
    app.config["TESTING"] = True
    mcp.init_app(app)
    (view,) = make_client(app, era="modern").read_resource("ui://show_map/view")
    assert view["text"] == "<!DOCTYPE html><p>show_map</p>"
    assert view["_meta"] == {"ui": {"csp": csp}}
    with pytest.raises(ValueError, match="App csp takes"):
        App("x.html", csp={"scriptDomains": []})


def test_a_handshake_client_sees_the_extension(make_client: t.Any) -> None:
    client = make_client(sales_app())
    capabilities = client.initialize()["capabilities"]
    assert capabilities["extensions"] == {"io.modelcontextprotocol/ui": {}}


HOST_PAGE = """<!DOCTYPE html>
<html><body>
<iframe id="view" sandbox="allow-scripts" srcdoc="{view}"></iframe>
<script>
const frame = document.getElementById("view");
const result = {result};
const log = [];
window.addEventListener("message", (event) => {{
  if (event.source !== frame.contentWindow) return;
  const message = event.data;
  log.push(message.method || "response");
  const send = (reply) => frame.contentWindow.postMessage({{ jsonrpc: "2.0", ...reply }}, "*");
  if (message.method === "ui/initialize") {{
    send({{ id: message.id, result: {{
      protocolVersion: "2026-01-26",
      hostInfo: {{ name: "test-host", version: "1" }},
      hostCapabilities: {{}},
      hostContext: {{ toolInfo: {{ tool: {{ name: "sales_report" }} }} }},
    }} }});
  }} else if (message.method === "ui/notifications/initialized") {{
    send({{ method: "ui/notifications/tool-input", params: {{ arguments: {{ year: 2026 }} }} }});
    send({{ method: "ui/notifications/tool-result", params: result }});
  }}
}});
window.hostLog = log;
</script>
</body></html>
"""


@needs_chromium
def test_a_browser_host_shows_the_tools_result_in_its_view(browser: t.Any, tmp_path: Path, make_client: t.Any) -> None:  # noqa: F811
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    client = make_client(sales_app(), era="modern")
    (view,) = client.read_resource("ui://sales_report/view")
    result = client.call_tool("sales_report", {"year": 2026})
    host = tmp_path / "host.html"
    host.write_text(HOST_PAGE.format(view=html.escape(view["text"], quote=True), result=json.dumps(result)))
    browser.get(host.as_uri())
    browser.switch_to.frame(browser.find_element(By.ID, "view"))
    WebDriverWait(browser, 30).until(lambda driver: driver.find_element(By.ID, "total").text == "Total: 358")
    rows = [
        [cell.text for cell in row.find_elements(By.TAG_NAME, "td")]
        for row in browser.find_elements(By.CSS_SELECTOR, "#sales tbody tr")
    ]
    assert rows == [["January", "120"], ["February", "95"], ["March", "143"]]
    assert browser.find_element(By.ID, "title").text == "Sales 2026"
    browser.switch_to.default_content()
    assert browser.execute_script("return window.hostLog") == ["ui/initialize", "ui/notifications/initialized"]


def _view_app(tmp_path: Path, mcp: MCP, **config: t.Any) -> Flask:
    (tmp_path / "templates").mkdir(exist_ok=True)
    (tmp_path / "templates" / "view.html").write_text("<!DOCTYPE html><p>{{ tool }}</p>")
    app = Flask("views", root_path=str(tmp_path))
    app.config.update(TESTING=True, **config)
    mcp.init_app(app)
    return app


def test_a_csp_origin_given_as_a_string_is_one_origin(tmp_path: Path, make_client: t.Any) -> None:
    mcp = MCP(name="one-origin")

    @mcp.tool(app=App("view.html", csp={"connectDomains": "https://*.example.com"}))
    def show() -> str:
        return "shown"

    (view,) = make_client(_view_app(tmp_path, mcp), era="modern").read_resource("ui://show/view")
    assert view["_meta"]["ui"]["csp"] == {"connectDomains": ["https://*.example.com"]}


@pytest.mark.parametrize(
    "csp",
    [
        {"connectDomains": ["*"]},
        {"connectDomains": ["https://*"]},
        {"resourceDomains": ["data:"]},
        {"resourceDomains": ["javascript:alert(1)"]},
        {"frameDomains": ["https:"]},
        {"connectDomains": ["'unsafe-eval'"]},
        {"connectDomains": ["https://a.example.com; script-src *"]},
        {"connectDomains": ["https://a.example.com https://b.example.com"]},
        {"connectDomains": ["https://*.com"]},
        {"connectDomains": ["ftp://files.example.com"]},
        {"connectDomains": [""]},
        {"connectDomains": [42]},
        {"connectDomains": 42},
        {"connectDomains": {"https://a.example.com": True}},
        ["connectDomains"],
        "https://a.example.com",
    ],
)
def test_a_csp_that_opens_the_view_is_refused_at_registration(csp: t.Any) -> None:
    mcp = MCP(name="refused")
    with pytest.raises((ValueError, TypeError), match="App csp"):

        @mcp.tool(app=App("view.html", csp=csp))
        def show() -> str:
            return "shown"

    assert "show" not in mcp.tools


def test_a_wide_source_is_served_when_allowed_deliberately(tmp_path: Path, make_client: t.Any) -> None:
    mcp = MCP(name="deliberate")
    csp = {"resourceDomains": ["https://cdn.example.com", "data:"]}

    @mcp.tool(app=App("view.html", csp=csp, allow_unsafe_sources=["data:"]))
    def show() -> str:
        return "shown"

    (view,) = make_client(_view_app(tmp_path, mcp), era="modern").read_resource("ui://show/view")
    assert view["_meta"]["ui"]["csp"] == csp
    with pytest.raises(TypeError, match="allow_unsafe_sources"):
        App("view.html", allow_unsafe_sources="data:")
    with pytest.raises(TypeError, match="prefers_border"):
        App("view.html", prefers_border="yes")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="app= takes"):
        mcp.tool(app=42)(lambda: "x")  # type: ignore[arg-type]


def _listed_and_readable(client: t.Any, uri: str) -> tuple[bool, bool]:
    listed = uri in {resource["uri"] for resource in client.list_resources()}
    read = client.envelope("resources/read", {"uri": uri})
    return listed, "result" in read


@pytest.mark.parametrize("era", ["modern", "handshake"])
def test_a_view_is_left_out_with_its_tool_by_tags(tmp_path: Path, make_client: t.Any, era: str) -> None:
    mcp = MCP(name="tags")

    @mcp.tool(app="view.html", tags=["internal"])
    def hidden() -> str:
        return "hidden"

    @mcp.tool(app="view.html", tags=["public"])
    def shown() -> str:
        return "shown"

    client = make_client(_view_app(tmp_path, mcp, MCP_INCLUDE_TAGS=["public"]), era=era)
    if era == "handshake":
        client.initialize()
    assert [tool["name"] for tool in client.list_tools()] == ["shown"]
    assert _listed_and_readable(client, "ui://hidden/view") == (False, False)
    assert _listed_and_readable(client, "ui://shown/view") == (True, True)  # it has its tool's tags


@pytest.mark.parametrize("era", ["modern", "handshake"])
def test_a_view_follows_its_tool_disabled_enabled_and_removed(
    tmp_path: Path, make_client: t.Any, era: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    mcp = MCP(name="switched")
    announced: list[str] = []
    monkeypatch.setattr(mcp, "_broadcast", lambda method, params: announced.append(method))

    @mcp.tool(app="view.html")
    def report() -> str:
        return "report"

    app = _view_app(tmp_path, mcp)
    client = make_client(app, era=era)
    if era == "handshake":
        client.initialize()
    assert _listed_and_readable(client, "ui://report/view") == (True, True)
    with app.app_context():
        mcp.disable("report")
    assert _listed_and_readable(client, "ui://report/view") == (False, False)
    # Clients are told both listings changed.
    assert announced == ["notifications/tools/list_changed", "notifications/resources/list_changed"]
    with app.app_context():
        mcp.enable("report")
    assert _listed_and_readable(client, "ui://report/view") == (True, True)
    with app.app_context():
        mcp.remove_tool("report")
    assert _listed_and_readable(client, "ui://report/view") == (False, False)
    assert "ui://report/view" not in mcp.registry.registered("resources")

    @mcp.tool(app="view.html")  # registered again, view and all
    def report() -> str:  # noqa: F811
        return "report again"

    assert _listed_and_readable(client, "ui://report/view") == (True, True)
