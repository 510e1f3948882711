"""The conformance suite's "everything" fixtures, built with flask_mcp's public API.

Run it for the official suite with a real threaded server::

    python examples/conformance/app.py --port 3001
    # serves http://127.0.0.1:3001/mcp
"""

from __future__ import annotations

import argparse
import base64
import json
import sys
import typing as t
from pathlib import Path

from flask import Flask

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the fixtures beside it, however it is loaded
import task_fixtures

from flask_mcp import (
    MCP,
    AudioContent,
    Context,
    Elicit,
    EmbeddedResource,
    ImageContent,
    ListRoots,
    PromptMessage,
    Sample,
    TextContent,
    ToolResult,
)

# A 1x1 PNG and a 44-byte WAV header, as the suite's reference server uses.
IMAGE = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
AUDIO = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="

mcp = MCP(name="mcp-conformance-test-server", version="1.0.0")


@mcp.tool(description="Tests simple text content response")
def test_simple_text() -> str:
    return "This is a simple text response for testing."


@mcp.tool(description="Tests image content response")
def test_image_content() -> ImageContent:
    return ImageContent(IMAGE, "image/png")


@mcp.tool(description="Tests audio content response")
def test_audio_content() -> AudioContent:
    return AudioContent(AUDIO, "audio/wav")


@mcp.tool(description="Tests embedded resource content response")
def test_embedded_resource() -> EmbeddedResource:
    return EmbeddedResource(
        "test://embedded-resource", text="This is an embedded resource content.", mime_type="text/plain"
    )


@mcp.tool(description="Tests response with multiple content types (text, image, resource)")
def test_multiple_content_types() -> list[t.Any]:
    return [
        TextContent("Multiple content types test:"),
        ImageContent(IMAGE, "image/png"),
        EmbeddedResource(
            "test://mixed-content-resource",
            text=json.dumps({"test": "data", "value": 123}),
            mime_type="application/json",
        ),
    ]


@mcp.tool(description="Tests tool that emits log messages during execution")
def test_tool_with_logging(ctx: Context) -> str:
    for message in ("Tool execution started", "Tool processing data", "Tool execution completed"):
        ctx.info(message)
    return "Tool with logging executed successfully"


@mcp.tool(description="Tests tool that reports progress notifications")
def test_tool_with_progress(ctx: Context) -> str:
    for step in (0, 50, 100):
        ctx.report_progress(step, total=100, message=f"Completed step {step} of 100")
    return str(ctx.progress_token if ctx.progress_token is not None else 0)


@mcp.tool(description="Tests error response handling")
def test_error_handling() -> ToolResult:
    return ToolResult(["This tool intentionally returns an error for testing"], is_error=True)


@mcp.tool(
    description="Tests SSE stream disconnection and client reconnection (SEP-1699). Server will close "
    "the stream mid-call and send the result after client reconnects."
)
def test_reconnection(ctx: Context) -> str:
    ctx.close_stream()
    return (
        "Reconnection test completed successfully. If you received this, the client properly reconnected "
        "after stream closure."
    )


@mcp.tool(description="Tests server-initiated sampling (LLM completion request)")
def test_sampling(prompt: t.Annotated[str, "The prompt to send to the LLM"], ctx: Context) -> str:
    answer = ctx.sample([{"role": "user", "content": {"type": "text", "text": prompt}}], max_tokens=100)
    return "LLM response: " + answer.get("content", {}).get("text", "No response")


@mcp.tool(description="Tests server-initiated elicitation (user input request)")
def test_elicitation(message: t.Annotated[str, "The message to show the user"], ctx: Context) -> str:
    schema = {
        "type": "object",
        "properties": {"response": {"type": "string", "description": "User's response"}},
        "required": ["response"],
    }
    result = ctx.elicit(message, schema)
    return f"User response: action={result.action}, content={json.dumps(result.content or {})}"


@mcp.tool(description="Tests elicitation with default values per SEP-1034")
def test_elicitation_sep1034_defaults(ctx: Context) -> str:
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "User name", "default": "John Doe"},
            "age": {"type": "integer", "description": "User age", "default": 30},
            "score": {"type": "number", "description": "User score", "default": 95.5},
            "status": {
                "type": "string",
                "description": "User status",
                "enum": ["active", "inactive", "pending"],
                "default": "active",
            },
            "verified": {"type": "boolean", "description": "Verification status", "default": True},
        },
        "required": [],
    }
    result = ctx.elicit("Please review and update the form fields with defaults", schema)
    return f"Elicitation completed: action={result.action}, content={json.dumps(result.content or {})}"


def _titled(prefix: str, titles: list[str]) -> list[dict[str, str]]:
    return [{"const": f"{prefix}{i}", "title": title} for i, title in enumerate(titles, 1)]


@mcp.tool(description="Tests elicitation with enum schema improvements per SEP-1330")
def test_elicitation_sep1330_enums(ctx: Context) -> str:
    options = ["option1", "option2", "option3"]
    schema = {
        "type": "object",
        "properties": {
            "untitledSingle": {"type": "string", "description": "Select one option", "enum": options},
            "titledSingle": {
                "type": "string",
                "description": "Select one option with titles",
                "oneOf": _titled("value", ["First Option", "Second Option", "Third Option"]),
            },
            "legacyEnum": {
                "type": "string",
                "description": "Select one option (legacy)",
                "enum": ["opt1", "opt2", "opt3"],
                "enumNames": ["Option One", "Option Two", "Option Three"],
            },
            "untitledMulti": {
                "type": "array",
                "description": "Select multiple options",
                "minItems": 1,
                "maxItems": 3,
                "items": {"type": "string", "enum": options},
            },
            "titledMulti": {
                "type": "array",
                "description": "Select multiple options with titles",
                "minItems": 1,
                "maxItems": 3,
                "items": {"anyOf": _titled("value", ["First Choice", "Second Choice", "Third Choice"])},
            },
        },
        "required": [],
    }
    result = ctx.elicit("Please select options from the enum fields", schema)
    return f"Elicitation completed: action={result.action}, content={json.dumps(result.content or {})}"


@mcp.tool(
    description="Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)",
    input_schema={
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "$anchor": "addressDef",
                "type": "object",
                "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
            }
        },
        "properties": {
            "name": {"type": "string"},
            "address": {"$ref": "#/$defs/address"},
            "contactMethod": {"type": "string", "enum": ["phone", "email"]},
            "phone": {"type": "string"},
            "email": {"type": "string"},
        },
        "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
        "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
        "then": {"required": ["phone"]},
        "else": {"required": ["email"]},
        "additionalProperties": False,
    },
)
def json_schema_2020_12_tool(**arguments: t.Any) -> str:
    return f"JSON Schema 2020-12 tool called with: {json.dumps(arguments)}"


# -- 2026-07-28 fixtures: input_required rounds, capabilities, logging and listen streams --------

NAME_FORM = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
CONFIRM_FORM = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}


@mcp.tool(description="Needs the client's sampling capability (-32021 without it)")
def test_missing_capability(ctx: Context) -> str:
    ctx.sample("Say anything.", max_tokens=10)
    return "Success"


@mcp.tool(description="Answers on the request's own stream, with no request of its own to the client")
def test_streaming_elicitation(ctx: Context) -> str:
    ctx.report_progress(1, total=1, message="streaming")
    return "Streaming complete"


@mcp.tool(description="Logs only when the request asks for a log level")
def test_logging_tool(ctx: Context) -> str:
    ctx.info("Logging tool ran")
    return "Logging evaluated"


@mcp.tool(description="Changes the tool list: listen streams that asked for it are told")
def test_trigger_tool_change() -> str:
    _toggle("test_toggled_tool", "tool")
    return "Mutation triggered"


@mcp.tool(description="Changes the prompt list: listen streams that asked for it are told")
def test_trigger_prompt_change() -> str:
    _toggle("test_toggled_prompt", "prompt")
    return "Mutation triggered"


_disabled: set[str] = set()


def _toggle(name: str, kind: t.Literal["tool", "prompt"]) -> None:
    # Disabling and enabling in turn: each change is announced to every process's listen streams.
    if name in _disabled:
        _disabled.discard(name)
        mcp.enable(name, kind)
    else:
        _disabled.add(name)
        mcp.disable(name, kind)


@mcp.tool(
    description="Routes on a header: its region argument travels in Mcp-Param-Region too",
    input_schema={
        "type": "object",
        "properties": {"region": {"type": "string", "description": "Where to run", "x-mcp-header": "Region"}},
        "required": ["region"],
    },
)
def test_header_param(region: str) -> str:
    return f"Ran in {region}"


@mcp.tool(description="A tool that comes and goes with test_trigger_tool_change")
def test_toggled_tool() -> str:
    return "toggled"


@mcp.tool(description="Asks the user's name in an input_required round")
def test_input_required_result_elicitation(ctx: Context) -> str:
    answer = ctx.elicit("What is your name?", NAME_FORM, key="user_name")
    return f"Hello, {(answer.content or {}).get('name', 'stranger')}!" if answer.action == "accept" else "No name given"


@mcp.tool(description="Asks the client's model a question in an input_required round")
def test_input_required_result_sampling(ctx: Context) -> str:
    answer = ctx.sample("What is the capital of France?", max_tokens=100, key="capital_question")
    return f"The model said: {answer['content'].get('text', '')}"


@mcp.tool(description="Asks for the client's roots in an input_required round")
def test_input_required_result_list_roots(ctx: Context) -> str:
    return f"Found {len(ctx.list_roots(key='roots_request'))} root(s)"


@mcp.tool(description="Carries the answers of earlier rounds in requestState")
def test_input_required_result_request_state(ctx: Context) -> str:
    answer = ctx.elicit("Please confirm", CONFIRM_FORM, key="confirm")
    return "state-ok" if answer.action == "accept" else "state-declined"


@mcp.tool(description="Asks three things in one round")
def test_input_required_result_multiple_inputs(ctx: Context) -> str:
    answers = ctx.ask(
        user_name=Elicit("What is your name?", NAME_FORM),
        greeting=Sample("Generate a greeting", max_tokens=50),
        client_roots=ListRoots(),
    )
    name = (answers["user_name"].content or {}).get("name")
    return f"{answers['greeting']['content'].get('text', '')} {name}, with {len(answers['client_roots'])} root(s)"


@mcp.tool(description="Asks one thing per round, over two rounds")
def test_input_required_result_multi_round(ctx: Context) -> str:
    name = (ctx.elicit("Step 1: What is your name?", NAME_FORM, key="step1").content or {}).get("name")
    color_form = {"type": "object", "properties": {"color": {"type": "string"}}, "required": ["color"]}
    color = (ctx.elicit("Step 2: What is your favorite color?", color_form, key="step2").content or {}).get("color")
    return f"{name} likes {color}"


@mcp.tool(description="Refuses a requestState that was altered")
def test_input_required_result_tampered_state(ctx: Context) -> str:
    answer = ctx.elicit("Please confirm", CONFIRM_FORM, key="confirm")
    return "state-ok" if answer.action == "accept" else "state-declined"


@mcp.tool(description="Asks only for what the client declared it can do")
def test_input_required_result_capabilities(ctx: Context) -> str:
    if "elicitation" in ctx.client_capabilities:
        answer: t.Any = ctx.elicit("What is your name?", NAME_FORM, key="user_name").content
    else:
        answer = ctx.sample("Pick a name.", max_tokens=20, key="sample_input")["content"]
    return f"capabilities-ok: received {json.dumps(answer)}"


@mcp.prompt(description="A prompt that asks the user for context in an input_required round")
def test_input_required_result_prompt(ctx: Context) -> str:
    form = {"type": "object", "properties": {"context": {"type": "string"}}, "required": ["context"]}
    answer = ctx.elicit("What context should the prompt use?", form, key="user_context")
    return f"Prompt with context: {(answer.content or {}).get('context', '')}"


@mcp.prompt(description="A prompt that comes and goes with test_trigger_prompt_change")
def test_toggled_prompt() -> str:
    return "toggled"


@mcp.resource("test://static-text", name="static-text", title="Static Text Resource",
              description="A static text resource for testing", mime_type="text/plain")  # fmt: skip
def static_text() -> str:
    return "This is the content of the static text resource."


@mcp.resource("test://static-binary", name="static-binary", title="Static Binary Resource",
              description="A static binary resource (image) for testing", mime_type="image/png")  # fmt: skip
def static_binary() -> bytes:
    return base64.b64decode(IMAGE)


@mcp.resource("test://watched-resource", name="watched-resource", title="Watched Resource",
              description="A resource that auto-updates every 3 seconds", mime_type="text/plain")  # fmt: skip
def watched_resource() -> str:
    return "Watched resource content"


@mcp.resource("test://template/{id}/data", name="template", title="Resource Template",
              description="A resource template with parameter substitution", mime_type="application/json")  # fmt: skip
def template(id: str) -> str:
    return json.dumps({"id": id, "templateTest": True, "data": f"Data for ID: {id}"})


@mcp.prompt(title="Simple Test Prompt", description="A simple prompt without arguments")
def test_simple_prompt() -> str:
    return "This is a simple prompt for testing."


@mcp.prompt(title="Prompt With Arguments", description="A prompt with required arguments")
def test_prompt_with_arguments(
    arg1: t.Annotated[str, "First test argument"], arg2: t.Annotated[str, "Second test argument"]
) -> str:
    return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"


@mcp.prompt(title="Prompt With Embedded Resource", description="A prompt that includes an embedded resource")
def test_prompt_with_embedded_resource(resourceUri: t.Annotated[str, "URI of the resource to embed"]) -> list[t.Any]:
    return [
        PromptMessage(
            "user", EmbeddedResource(resourceUri, text="Embedded resource content for testing.", mime_type="text/plain")
        ),
        PromptMessage("user", "Please process the embedded resource above."),
    ]


@mcp.prompt(title="Prompt With Image", description="A prompt that includes image content")
def test_prompt_with_image() -> list[t.Any]:
    return [
        PromptMessage("user", ImageContent(IMAGE, "image/png")),
        PromptMessage("user", "Please analyze the image above."),
    ]


task_fixtures.register(mcp)


def create_app() -> Flask:
    """The app; sessions in the default SimpleCache."""
    app = Flask(__name__)
    mcp.init_app(app)
    return app


app = create_app()

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Serve the conformance fixtures at http://127.0.0.1:PORT/mcp")
    parser.add_argument("--port", type=int, default=3001)
    port = parser.parse_args().port
    app.run(host="127.0.0.1", port=port, threaded=True)
