"""The docs say only what the code does: the keys they name, the commands they show.

* Every ``MCP_*`` key named in ``docs/*.rst`` or ``README.md`` is a setting
  (:data:`flask_mcp.config.settings.DEFAULTS`), or an ``MCP_CACHE_<X>`` /
  ``MCP_EPHEMERAL_CACHE_<X>`` key passed to flask-caching as a ``CACHE_<X>``
  key flask-caching reads; a family (``MCP_AUTH_*``, ``MCP_CACHE_<X>``) must
  have members.
* Every ``gunicorn`` command in a shell block parses with gunicorn's own
  argument parser and settings, so no option is misspelt.
* Every ``curl`` request of ``docs/deployment.rst`` is answered, without an
  error, by an app with the page's token.
* A page is one a user reads through: no narrative page over 600 lines (the
  references excepted), the benchmarks page at most 400.
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import typing as t
import warnings
from pathlib import Path
from urllib.parse import urlsplit

import flask_caching
import pytest
from flask import Flask
from gunicorn.config import Config
from gunicorn.workers import SUPPORTED_WORKERS

from flask_mcp import MCP, UnknownSettingWarning
from flask_mcp.config.settings import _CACHE_PREFIX, _EPHEMERAL_PREFIX, DEFAULTS

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
DEPLOYMENT = DOCS / "deployment.rst"
PAGES = [*sorted(DOCS.glob("*.rst")), ROOT / "README.md"]

#: The reference pages, looked up rather than read through: no length limit.
REFERENCE_PAGES = {"api.rst", "configuration.rst"}
#: The most lines a narrative page may have, and the benchmarks page (the history lives in git).
MAX_PAGE_LINES = 600
MAX_BENCHMARKS_LINES = 400

#: An ``MCP_*`` key, not the tail of another name (``FLASK_MCP_TOKEN``, ``TASKS_MCP_CACHE_TYPE``).
KEY = re.compile(r"(?<![A-Za-z0-9_])MCP_[A-Z0-9_]*")
#: Misspelt keys shown on purpose: the key -> the page showing it, and the setting the warning suggests.
DELIBERATE_TYPOS = {"MCP_STATELES": ("configuration.rst", "MCP_STATELESS")}
#: The config_prefix of another server that the docs name (its keys are ``MCP_ADMIN_<setting>``).
OTHER_SERVER_PREFIX = "MCP_ADMIN"
#: ``.. code-block:: <language>`` of the blocks that hold shell commands.
SHELL_BLOCK = re.compile(r"^(?P<indent>[ ]*)\.\. code-block:: (?:sh|bash|shell|console)[ ]*$")
ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
#: The token the curl examples of the deployment page send.
TOKEN = "THE-TOKEN"


def _flask_caching_keys() -> frozenset[str]:
    """The ``CACHE_*`` keys flask-caching reads: the string literals of its source."""
    package = Path(flask_caching.__file__).parent
    found: set[str] = set()
    for source in package.rglob("*.py"):
        found.update(re.findall(r"[\"'](CACHE_[A-Z0-9_]+)[\"']", source.read_text(encoding="utf-8")))
    return frozenset(found)


FLASK_CACHING_KEYS = _flask_caching_keys()


def is_setting(key: str) -> bool:
    """Whether *key* is a setting, a pass-through cache key, or (ending in ``_``) a family with members."""
    if key in DEFAULTS:
        return True
    if key == OTHER_SERVER_PREFIX or key.startswith(OTHER_SERVER_PREFIX + "_"):
        # Another server's key: a setting once its prefix is the default one's.
        rest = key[len(OTHER_SERVER_PREFIX) :]
        return not rest or is_setting("MCP" + rest)
    if key.endswith("_"):
        return any(name.startswith(key) for name in DEFAULTS) or any(
            prefix.startswith(key) for prefix in (_CACHE_PREFIX, _EPHEMERAL_PREFIX)
        )
    for prefix in (_EPHEMERAL_PREFIX, _CACHE_PREFIX):
        if key.startswith(prefix):
            return "CACHE_" + key[len(prefix) :] in FLASK_CACHING_KEYS
    return False


def named_keys(path: Path) -> list[tuple[int, str]]:
    """``(line, key)`` for every ``MCP_*`` key *path* names."""
    return [
        (number, match.group())
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        for match in KEY.finditer(line)
    ]


@pytest.mark.parametrize("page", PAGES, ids=lambda path: path.name)
def test_every_key_a_page_names_is_a_setting(page: Path) -> None:
    unknown = [
        f"{page.name}:{number}: {key}"
        for number, key in named_keys(page)
        if DELIBERATE_TYPOS.get(key, ("",))[0] != page.name and not is_setting(key)
    ]
    assert unknown == []


def test_the_check_tells_settings_from_typos() -> None:
    assert is_setting("MCP_SSE_KEEPALIVE") and is_setting("MCP_CACHE_REDIS_URL")
    assert is_setting("MCP_EPHEMERAL_CACHE_DEFAULT_TIMEOUT") and is_setting("MCP_AUTH_")
    assert is_setting("MCP_CACHE_") and is_setting("MCP_")
    assert not is_setting("MCP_SSE_KEEP_ALIVE") and not is_setting("MCP_CACHE_REDIS_ULR")
    assert not is_setting("MCP_NOTHING_") and not is_setting("MCP_REQUIRE_PERMISSION")
    assert is_setting("MCP_ADMIN") and is_setting("MCP_ADMIN_URL_PREFIX") and not is_setting("MCP_ADMIN_URL")
    assert KEY.findall("FLASK_MCP_TOKEN, TASKS_MCP_CACHE_TYPE and ``MCP_AUTH_*``") == ["MCP_AUTH_"]


@pytest.mark.parametrize(("typo", "shown"), DELIBERATE_TYPOS.items())
def test_a_deliberate_typo_is_one_the_extension_warns_about(typo: str, shown: tuple[str, str]) -> None:
    page, meant = shown
    assert typo in {key for _, key in named_keys(DOCS / page)}
    assert not is_setting(typo)
    app = Flask(__name__)
    app.config[typo] = True
    with pytest.warns(UnknownSettingWarning, match=f"did you mean {meant}"):
        MCP(app)


# -- commands ----------------------------------------------------------------------------------------


def shell_commands(path: Path) -> list[tuple[int, list[str]]]:
    """``(line, argv)`` of every command in *path*'s shell blocks.

    Lines continued with ``\\`` are joined, as are the lines of a quoted
    argument; leading ``NAME=value`` assignments and ``#`` comments are left out.
    """
    lines = path.read_text(encoding="utf-8").splitlines()
    commands: list[tuple[int, list[str]]] = []
    block_indent: int | None = None
    pending, start = "", 0
    for number, line in enumerate(lines, start=1):
        directive = SHELL_BLOCK.match(line)
        if directive is not None:
            block_indent = len(directive["indent"])
            continue
        if block_indent is None:
            continue
        if line.strip() and len(line) - len(line.lstrip()) <= block_indent:
            block_indent = None  # the block ended
            continue
        text = line.strip().removeprefix("$ ")
        if not text and not pending:
            continue
        if not pending:
            start = number
        if text.endswith("\\"):
            pending += text[:-1] + " "
            continue
        try:
            argv = shlex.split(pending + text, comments=True)
        except ValueError:  # a quoted argument goes on on the next line
            pending += text + "\n"
            continue
        pending = ""
        while argv and ASSIGNMENT.match(argv[0]):
            argv.pop(0)
        if argv:
            commands.append((start, argv))
    assert not pending, f"{path.name}:{start}: a quote is never closed"
    return commands


def commands_of(program: str, pages: t.Iterable[Path]) -> list[tuple[str, list[str]]]:
    return [
        (f"{page.name}:{number}", argv) for page in pages for number, argv in shell_commands(page) if argv[0] == program
    ]


GUNICORN_COMMANDS = commands_of("gunicorn", sorted(DOCS.glob("*.rst")))


def test_the_deployment_pages_show_gunicorn_commands() -> None:
    pages = (DEPLOYMENT.name, "scaling.rst")
    assert len([where for where, _ in GUNICORN_COMMANDS if where.startswith(pages)]) >= 4


def parse_gunicorn(arguments: list[str]) -> tuple[Config, argparse.Namespace, list[str]]:
    """gunicorn's settings from its command-line *arguments*, the parsed arguments, and the unknown ones.

    Options are taken spelt in full only (gunicorn would accept a prefix).

    :raises SystemExit: gunicorn refuses a value.
    """
    config = Config()
    parser = config.parser()
    parser.allow_abbrev = False
    parsed, unknown = parser.parse_known_args(arguments)
    # What gunicorn does with the options: each value goes through its setting's validator.
    for name, value in vars(parsed).items():
        if value is not None and name != "args":
            config.set(name.lower(), value)
    return config, parsed, unknown


@pytest.mark.parametrize(("where", "argv"), GUNICORN_COMMANDS, ids=[where for where, _ in GUNICORN_COMMANDS])
def test_a_gunicorn_command_parses(where: str, argv: list[str]) -> None:
    try:
        config, parsed, unknown = parse_gunicorn(argv[1:])
    except SystemExit:
        pytest.fail(f"{where}: gunicorn refuses {shlex.join(argv)}")
    assert unknown == [], f"{where}: unknown options"
    assert config.worker_class_str in SUPPORTED_WORKERS, f"{where}: no worker class {config.worker_class_str!r}"
    assert len(parsed.args) == 1 and re.fullmatch(r"[\w.]+:[\w.]+(\(\))?", parsed.args[0]), (
        f"{where}: the app is not one 'module:app' argument: {parsed.args}"
    )


def test_a_misspelt_gunicorn_option_is_noticed() -> None:
    assert parse_gunicorn(["-k", "gthread", "--thread", "4", "app:app"])[2] == ["--thread"]
    with pytest.raises(SystemExit):
        parse_gunicorn(["--threads", "many", "app:app"])


# -- the deployment page's requests ------------------------------------------------------------------


def curl_request(argv: list[str]) -> tuple[str, dict[str, str], str]:
    """The URL, headers and body of a ``curl`` command line."""
    url, body, headers = "", "", {}
    options = iter(argv[1:])
    for option in options:
        if option == "-H":
            name, _, value = next(options).partition(":")
            headers[name.strip()] = value.strip()
        elif option == "-d":
            body = next(options)
        elif option.startswith("http"):
            url = option
    return url, headers, body


CURL_COMMANDS = [(where, argv) for where, argv in commands_of("curl", [DEPLOYMENT]) if "-d" in argv]


def first_message(response: t.Any) -> dict[str, t.Any]:
    """The first JSON-RPC message of a JSON answer or of an event stream (read no further)."""
    chunks = iter(response.response)
    if response.mimetype == "application/json":
        return t.cast(dict[str, t.Any], json.loads(b"".join(chunks)))
    for chunk in chunks:
        for line in chunk.decode().splitlines():
            if line.startswith("data: ") and len(line) > len("data: "):
                return t.cast(dict[str, t.Any], json.loads(line.removeprefix("data: ")))
    raise AssertionError("the stream ended without a message")


@pytest.fixture
def deployed() -> Flask:
    """An app as the page deploys it: a token, public host names, one tool."""
    mcp = MCP(name="deployed", version="1.0.0")

    @mcp.tool(permissions=[])
    def add(a: int, b: int) -> int:
        return a + b

    app = Flask(__name__)
    app.config.update(MCP_AUTH_TOKENS={TOKEN: "ops"}, MCP_ALLOWED_HOSTS=["mcp.example.com"])
    mcp.init_app(app)
    return app


def test_the_deployment_page_shows_requests() -> None:
    methods = {curl_request(argv)[1].get("Mcp-Method") for _, argv in CURL_COMMANDS}
    assert {"server/discover", "subscriptions/listen"} <= methods


@pytest.mark.parametrize(("where", "argv"), CURL_COMMANDS, ids=[where for where, _ in CURL_COMMANDS])
def test_a_request_of_the_deployment_page_is_answered(deployed: Flask, where: str, argv: list[str]) -> None:
    url, headers, body = curl_request(argv)
    parts = urlsplit(url)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a deprecated header or envelope would warn
        response = deployed.test_client().post(
            parts.path, base_url=f"{parts.scheme}://{parts.netloc}", headers=headers, data=body, buffered=False
        )
        try:
            assert response.status_code == 200, f"{where}: {response.status_code}"
            message = first_message(response)
        finally:
            response.close()
    assert "error" not in message, f"{where}: {message}"
    if "result" in message:
        assert message["result"]["resultType"] == "complete"
    else:
        assert message["method"] == "notifications/subscriptions/acknowledged"


# -- installs: one way everywhere ------------------------------------------------------------------

#: ``pip install`` and what follows it, up to the end of the literal or line.
PIP_INSTALL = re.compile(r"pip install (?P<args>[^`\n]*)")
#: An extra of the project as a checkout install names it: ``".[redis,jwt]"`` or ``"/path/to/flask_mcp[redis]"``.
EXTRAS = re.compile(r"""(?:\.|flask_mcp)\[(?P<extras>[a-z,]+)\]""")
INSTALL_PAGES = [*PAGES, *sorted((ROOT / "examples").glob("*/README.md"))]


def _declared_extras() -> set[str]:
    import configparser

    parser = configparser.ConfigParser()
    parser.read(ROOT / "setup.cfg")
    return set(parser["options.extras_require"])


@pytest.mark.parametrize("page", INSTALL_PAGES, ids=lambda path: str(path.relative_to(ROOT)))
def test_installs_of_the_project_are_shown_one_way(page: Path) -> None:
    """From a checkout, ``pip install -e`` with extras setup.cfg declares; never ``flask-mcp[...]`` from an index."""
    extras = _declared_extras()
    for match in PIP_INSTALL.finditer(page.read_text()):
        arguments = match["args"]
        assert "flask-mcp[" not in arguments, f"{page.name}: {match[0]!r} installs from an index"
        for named in EXTRAS.finditer(arguments):
            assert "-e" in arguments.split() or ".whl" in arguments, f"{page.name}: {match[0]!r} is not -e"
            unknown = set(named["extras"].split(",")) - extras
            assert not unknown, f"{page.name}: {match[0]!r} names extras setup.cfg does not declare: {unknown}"


NARRATIVE_PAGES = [page for page in sorted(DOCS.glob("*.rst")) if page.name not in REFERENCE_PAGES]


@pytest.mark.parametrize("page", NARRATIVE_PAGES, ids=lambda page: page.name)
def test_a_narrative_page_stays_readable(page: Path) -> None:
    limit = MAX_BENCHMARKS_LINES if page.name == "benchmarks.rst" else MAX_PAGE_LINES
    assert len(page.read_text().splitlines()) <= limit


def test_the_cache_type_is_written_one_way() -> None:
    """Every ``MCP_CACHE_TYPE`` the pages set is flask-caching's class name (``RedisCache``), never a short name."""
    assigned = {
        f"{page.name}: {match.group(0)}"
        for page in PAGES
        for match in re.finditer(r"MCP_CACHE_TYPE\s*=\s*[\"']?(\w+)", page.read_text())
        if not match.group(1)[0].isupper()
    }
    assert assigned == set()
