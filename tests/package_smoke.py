"""A smoke test of the installed wheel: run by ``nox -s package`` in a fresh environment, not by pytest.

It checks that ``flask_mcp`` comes from the installed wheel (not a checkout), serves the quickstart
with ``flask run`` and calls it with the official SDK's client in both eras, starts
``examples/oauth_app`` (the ``oauth`` extra must bring what it imports), and imports what the
``redis`` and ``otel`` extras are for. Usage: ``python tests/package_smoke.py <checkout>``.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import metadata
from pathlib import Path

import anyio
from mcp import Client
from mcp.client.streamable_http import streamable_http_client


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def serving(command: list[str], url: str) -> Iterator[None]:
    """Run *command* until *url* answers (any HTTP status), then yield; stop it afterwards."""
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                raise SystemExit(f"{command} exited: {process.stderr.read().decode() if process.stderr else ''}")
            try:
                urllib.request.urlopen(url, timeout=2).close()
                break
            except urllib.error.HTTPError:
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise SystemExit(f"{command} never answered {url}") from None
                time.sleep(0.2)  # polling a process's port: there is nothing to wait on
        yield
    finally:
        process.terminate()
        process.wait(timeout=20)


async def call_quickstart(url: str, mode: str) -> None:
    async with Client(streamable_http_client(url), mode=mode) as client:
        tools = await client.list_tools()
        assert {"add", "greet", "get_note"} <= {tool.name for tool in tools.tools}, tools
        answer = await client.call_tool("add", {"a": 2, "b": 40})
        assert answer.structured_content == {"result": 42} or answer.content[0].text == "42", answer  # type: ignore[union-attr]


def main(checkout: Path) -> None:
    import flask_mcp

    location = Path(flask_mcp.__file__).resolve()
    assert "site-packages" in location.parts, f"flask_mcp imported from {location}, not the installed wheel"
    assert flask_mcp.__version__ == metadata.version("flask-mcp")
    # The package's data files came with the wheel.
    assert (location.parent / "official_schema" / "2026-07-28" / "schema.json").is_file()
    assert (location.parent / "oauth" / "templates" / "mcp_oauth" / "consent.html").is_file()
    # What the extras are for imports.
    import redis  # noqa: F401

    import flask_mcp.oauth
    import flask_mcp.sdk
    import flask_mcp.telemetry

    port = free_port()
    flask = [sys.executable, "-m", "flask", "--app", str(checkout / "examples" / "quickstart" / "app.py"), "run"]
    with serving([*flask, "--port", str(port)], f"http://127.0.0.1:{port}/mcp"):
        for mode in ("legacy", "2026-07-28"):
            anyio.run(call_quickstart, f"http://127.0.0.1:{port}/mcp", mode)
    port = free_port()
    oauth_app = [sys.executable, str(checkout / "examples" / "oauth_app" / "app.py"), "--port", str(port)]
    metadata_url = f"http://127.0.0.1:{port}/.well-known/oauth-authorization-server"
    with serving(oauth_app, metadata_url), urllib.request.urlopen(metadata_url, timeout=10) as answer:
        assert json.load(answer)["issuer"] == f"http://127.0.0.1:{port}", "oauth_app's metadata"
    print(f"flask_mcp {flask_mcp.__version__} from {location.parent}: quickstart and oauth_app served")


if __name__ == "__main__":
    main(Path(sys.argv[1]).resolve())
