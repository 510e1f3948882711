"""A flask_mcp app composed from small fragments, one per configuration choice.

Each :class:`Fragment` contributes imports, ``app.config`` entries, lines of
``create_app`` and dependencies when its condition holds for the chosen
:class:`Configuration`; :func:`compose` joins the applicable ones into a
file tree. Every combination yields an importable ``app.py``.
"""

from __future__ import annotations

import dataclasses
import typing as t

__all__ = ["CACHES", "FRAGMENTS", "Configuration", "Fragment", "compose"]

#: Where sessions live: the process's memory, or a Redis server shared by every worker.
CACHES = ("simple", "redis")


@dataclasses.dataclass(frozen=True)
class Configuration:
    """The choices of ``get_app_template``."""

    cache: str
    stateless: bool = False
    rest: bool = True
    auth: bool = False


@dataclasses.dataclass(frozen=True)
class Fragment:
    """A piece of the generated app, used when :attr:`applies` says so."""

    name: str
    applies: t.Callable[[Configuration], bool]
    imports: tuple[str, ...] = ()
    #: ``KEY=value`` entries of ``app.config.update(...)``, each preceded by its comment.
    config: tuple[str, ...] = ()
    #: Lines of ``create_app`` run before ``mcp.init_app(app)`` (indented by four spaces).
    setup: tuple[str, ...] = ()
    dependencies: tuple[str, ...] = ()
    #: Lines of ``.env.example``.
    environment: tuple[str, ...] = ()


FRAGMENTS: tuple[Fragment, ...] = (
    Fragment(
        "base",
        lambda c: True,
        imports=("from flask import Flask", "from flask_mcp import MCP"),
        dependencies=("flask_mcp",),
    ),
    Fragment(
        "cache-simple",
        lambda c: c.cache == "simple",
        config=(
            "# Sessions in this process's memory: right for one worker process.",
            'MCP_CACHE_TYPE="SimpleCache",',
        ),
    ),
    Fragment(
        "cache-redis",
        lambda c: c.cache == "redis",
        imports=("import os",),
        config=(
            "# Sessions in Redis, so every worker process and host can serve every session.",
            'MCP_CACHE_TYPE="RedisCache",',
            'MCP_CACHE_REDIS_URL=os.environ.get("REDIS_URL", "redis://localhost:6379/0"),',
        ),
        dependencies=("flask_mcp[redis]",),
        environment=("REDIS_URL=redis://localhost:6379/0",),
    ),
    Fragment(
        "stateless",
        lambda c: c.stateless,
        config=(
            "# No sessions: every request stands alone (no sampling, elicitation or resumable streams).",
            "MCP_STATELESS=True,",
        ),
    ),
    Fragment(
        "rest",
        lambda c: c.rest,
        config=(
            "# Each tool is also POST /mcp/rest/tools/<name>, described at /mcp/rest/openapi.json.",
            "MCP_REST_ENABLED=True,",
        ),
    ),
    Fragment(
        "no-rest",
        lambda c: not c.rest,
        config=("# Only the MCP endpoint: no REST routes, no OpenAPI document.", "MCP_REST_ENABLED=False,"),
    ),
    Fragment(
        "auth",
        lambda c: c.auth,
        imports=(
            "import hmac",
            "import os",
            "from flask import jsonify, request",
            "from flask.typing import ResponseReturnValue",
        ),
        setup=(
            '# Every route needs "Authorization: Bearer <MCP_API_TOKEN>"; without a token set, nothing is served.',
            'token = os.environ.get("MCP_API_TOKEN", "")',
            "",
            "@app.before_request",
            "def require_token() -> ResponseReturnValue | None:",
            '    given = request.headers.get("Authorization", "").encode()',
            '    if not token or not hmac.compare_digest(given, f"Bearer {token}".encode()):',
            '        return jsonify(error="missing or wrong bearer token"), 401',
            "    return None",
            "",
        ),
        environment=("MCP_API_TOKEN=change-me",),
    ),
)

_TOOL = '''mcp = MCP(name="my-server", version="0.1.0")


@mcp.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b
'''


def _imports(lines: t.Iterable[str]) -> str:
    """Standard library first, then third-party, each group sorted and merged, like isort."""
    names: dict[str, set[str]] = {}
    plain: set[str] = set()
    for line in lines:
        if line.startswith("from "):
            module, _, imported = line[len("from ") :].partition(" import ")
            names.setdefault(module, set()).update(name.strip() for name in imported.split(","))
        else:
            plain.add(line)
    merged = [f"from {module} import {', '.join(sorted(found))}" for module, found in names.items()]
    unique = sorted(plain | set(merged), key=lambda line: line.split()[1])
    stdlib = [line for line in unique if not line.startswith(("from flask", "import flask"))]
    third = [line for line in unique if line not in stdlib]
    return "\n\n".join("\n".join(group) for group in (stdlib, third) if group)


def _app_py(config: Configuration, used: list[Fragment]) -> str:
    entries = [f"        {line}" for f in used for line in f.config]
    setup = [f"    {line}" if line else "" for f in used for line in f.setup]
    choices = ", ".join(f"{key}={value}" for key, value in dataclasses.asdict(config).items())
    body = [
        f'"""A flask_mcp server ({choices}).',
        "",
        "Run it with ``flask --app app.py run``; the MCP endpoint is http://127.0.0.1:5000/mcp.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        _imports(line for f in used for line in f.imports),
        "",
        _TOOL,
        "",
        "def create_app() -> Flask:",
        '    """Build the app with this server\'s settings."""',
        "    app = Flask(__name__)",
        "    app.config.update(",
        *entries,
        "    )",
        *setup,
        "    mcp.init_app(app)",
        "    return app",
        "",
        "",
        "app = create_app()",
        "",
    ]
    return "\n".join(body)


def _file(path: str, content: str) -> dict[str, t.Any]:
    return {"path": path, "content": content, "size": len(content.encode())}


def compose(config: Configuration) -> dict[str, t.Any]:
    """The file tree of an app in *config*: ``configuration``, ``fragments``, ``dependencies``, ``files``."""
    used = [fragment for fragment in FRAGMENTS if fragment.applies(config)]
    # flask_mcp[redis] already names flask_mcp: keep the most specific requirement only.
    dependencies = sorted({d for f in used for d in f.dependencies})
    if "flask_mcp[redis]" in dependencies:
        dependencies.remove("flask_mcp")
    files = [
        _file("app.py", _app_py(config, used)),
        _file("requirements.txt", "".join(f"{d}\n" for d in dependencies)),
    ]
    environment = [line for f in used for line in f.environment]
    if environment:
        files.append(_file(".env.example", "".join(f"{line}\n" for line in environment)))
    return {
        "configuration": dataclasses.asdict(config),
        "fragments": [f.name for f in used],
        "dependencies": dependencies,
        "files": {f["path"]: f for f in files},
    }
