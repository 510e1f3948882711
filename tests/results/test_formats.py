"""Output formats of the text block (JSON, TOON, auto) and error formats."""

from __future__ import annotations

import builtins
import json
import typing as t

import pytest

from flask_mcp import MCP, ErrorFormat, NotFoundError, OutputFormat, ToolError
from flask_mcp.results.formats import TOON_MARKER, ToonUnavailableWarning, error_result, render_text

toon_format = pytest.importorskip("toon_format")

ROWS = [{"id": 1, "name": "ada"}, {"id": 2, "name": "bob"}]


def _toon_payload(text: str) -> t.Any:
    marker, fence, *body, closing = text.split("\n")
    assert (marker, fence, closing) == (TOON_MARKER, "```toon", "```")
    return toon_format.decode("\n".join(body))


@pytest.mark.parametrize(
    ("value", "output_format", "toon"),
    [
        (ROWS, OutputFormat.TOON, True),
        ({"a": 1}, OutputFormat.TOON, True),
        (ROWS, OutputFormat.AUTO, True),
        ([{"id": 1}, {"name": "x"}], OutputFormat.AUTO, False),  # keys differ
        ([], OutputFormat.AUTO, False),
        ([1, 2], OutputFormat.AUTO, False),
        ({"rows": ROWS}, OutputFormat.AUTO, False),
        (ROWS, OutputFormat.JSON, False),
    ],
)
def test_render_text(value: t.Any, output_format: OutputFormat, toon: bool) -> None:
    text = render_text(value, output_format)
    if toon:
        assert _toon_payload(text) == value
    else:
        assert json.loads(text) == value


class _Level(int):
    """An int subclass whose repr is not its JSON (as an IntEnum's is not)."""

    def __repr__(self) -> str:
        return "Level(3)"


@pytest.mark.parametrize("value", [0, 42, -7, 2**64, 10**300, True, False, _Level(3)])
@pytest.mark.parametrize("output_format", [OutputFormat.JSON, OutputFormat.AUTO])
def test_render_text_writes_integers_as_the_encoder_does(value: int, output_format: OutputFormat) -> None:
    # Integers skip the encoder; booleans and int subclasses must not.
    assert render_text(value, output_format) == json.dumps(value)


def test_toon_falls_back_to_json_with_a_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    real_import = builtins.__import__

    def no_toon(name: str, *args: t.Any, **kwargs: t.Any) -> t.Any:
        if name == "toon_format":
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_toon)
    with pytest.warns(ToonUnavailableWarning, match="toon-format"):
        text = render_text(ROWS, OutputFormat.TOON)
    assert json.loads(text) == ROWS


def test_render_text_refuses_nan() -> None:
    with pytest.raises(ValueError):
        render_text({"x": float("nan")}, OutputFormat.TOON)


@pytest.mark.parametrize("option", ["toon", OutputFormat.TOON])
def test_tool_output_format(mcp: MCP, make_app: t.Any, make_client: t.Any, option: t.Any) -> None:
    @mcp.tool(output_format=option)
    def rows() -> list[dict[str, t.Any]]:
        return ROWS

    client = make_client(make_app(mcp))
    client.initialize()
    result = client.call_tool("rows")
    assert _toon_payload(result["content"][0]["text"]) == ROWS
    assert result["structuredContent"] == {"result": ROWS}  # always JSON


def test_server_wide_output_format(mcp: MCP, make_app: t.Any, make_client: t.Any) -> None:
    @mcp.tool
    def rows() -> list[dict[str, t.Any]]:
        return ROWS

    @mcp.tool(output_format="json")
    def rows_json() -> list[dict[str, t.Any]]:
        return ROWS

    client = make_client(make_app(mcp, MCP_OUTPUT_FORMAT="auto"))
    client.initialize()
    assert client.call_tool("rows")["content"][0]["text"].startswith(TOON_MARKER)
    assert json.loads(client.call_tool("rows_json")["content"][0]["text"]) == ROWS


def test_bad_output_format_setting(mcp: MCP, make_app: t.Any) -> None:
    with pytest.raises(ValueError, match="MCP_OUTPUT_FORMAT must be one of 'json', 'toon', 'auto', not 'xml'"):
        make_app(mcp, MCP_OUTPUT_FORMAT="xml")


@pytest.mark.parametrize(
    ("error_format", "expected"),
    [
        (ErrorFormat.TEXT, "Error executing tool: boom"),
        (ErrorFormat.JSON, {"error": {"type": "service_error", "message": "boom", "detail": None}}),
        (ErrorFormat.PLAIN, {"error": "boom"}),
    ],
)
def test_error_result_formats(error_format: ErrorFormat, expected: t.Any) -> None:
    result = error_result("boom", error_format=error_format)
    assert result["isError"] is True
    text = result["content"][0]["text"]
    assert (text if isinstance(expected, str) else json.loads(text)) == expected
    assert "structuredContent" not in result


def _failing_tools(mcp: MCP, **options: t.Any) -> None:
    @mcp.tool(**options)
    def fails(kind: str) -> None:
        if kind == "missing":
            raise NotFoundError("no such invoice")
        raise ToolError("card declined")


@pytest.mark.parametrize("config", [{}, {"MCP_ERROR_FORMAT": "json"}])
def test_json_error_types(mcp: MCP, make_app: t.Any, make_client: t.Any, config: dict[str, t.Any]) -> None:
    _failing_tools(mcp, **({} if config else {"error_format": "json"}))
    client = make_client(make_app(mcp, **config))
    client.initialize()

    def error(arguments: dict[str, t.Any]) -> dict[str, t.Any]:
        result = client.call_tool("fails", arguments)
        assert result["isError"] is True
        return t.cast(dict[str, t.Any], json.loads(result["content"][0]["text"])["error"])

    assert error({"kind": "missing"}) == {"type": "not_found", "message": "no such invoice", "detail": None}
    assert error({"kind": "other"}) == {"type": "service_error", "message": "card declined", "detail": None}
    invalid = error({"kind": 3})
    assert invalid["type"] == "validation_error"
    assert invalid["message"] == "Invalid arguments: kind: Not a valid string."
    assert invalid["detail"] == {"kind": ["Not a valid string."]}
    assert "value" not in invalid


@pytest.mark.parametrize(
    ("error_format", "check"),
    [
        ("json", lambda text: json.loads(text)["error"]["value"] == {"kind": 3}),
        (
            "plain",
            lambda text: (
                json.loads(text) == {"error": "Invalid arguments: kind: Not a valid string.", "value": {"kind": 3}}
            ),
        ),
        ("text", lambda text: text.endswith(' (arguments: {"kind":3})')),
    ],
)
def test_validation_value_echo(
    mcp: MCP, make_app: t.Any, make_client: t.Any, error_format: str, check: t.Callable[[str], bool]
) -> None:
    _failing_tools(mcp, error_format=error_format)
    client = make_client(make_app(mcp, MCP_INCLUDE_VALIDATION_VALUE=True))
    client.initialize()
    assert check(client.call_tool("fails", {"kind": 3})["content"][0]["text"])


def test_plain_error_format(mcp: MCP, make_app: t.Any, make_client: t.Any) -> None:
    _failing_tools(mcp, error_format="plain")
    client = make_client(make_app(mcp))
    client.initialize()
    assert json.loads(client.call_tool("fails", {"kind": "x"})["content"][0]["text"]) == {"error": "card declined"}
