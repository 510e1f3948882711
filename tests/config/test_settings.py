"""MCP_* settings read from app.config."""

from __future__ import annotations

import math
import warnings
from datetime import timedelta

import pytest
from flask import Flask

from flask_mcp import MCP
from flask_mcp.config.settings import LateSettingWarning, Settings, UnknownSettingWarning
from flask_mcp.protocol.strict_json import JSONLimits


def settings(**config: object) -> Settings:
    app = Flask(__name__)
    app.config.update(config)
    return Settings.from_app(app)


def test_defaults() -> None:
    result = settings()
    assert (result.url_prefix, result.page_size, result.stateless) == ("/mcp", 100, False)
    assert result.max_content_length == 4 * 1024 * 1024
    assert result.allowed_origins == () and result.allowed_hosts is None and result.mask_errors is None
    assert result.cache_config == {
        "CACHE_TYPE": "SimpleCache",
        "CACHE_KEY_PREFIX": "flask_mcp:",
        "CACHE_THRESHOLD": 40000,
    }
    assert result.ephemeral_cache_overrides == {"CACHE_THRESHOLD": 50000}
    assert (result.max_sessions, result.store_high_water) == (10000, 0.9)


def test_the_audit_writer_s_linger_is_a_positive_number_of_seconds() -> None:
    assert settings().audit.linger == 1.0
    assert settings(MCP_AUDIT_LINGER=0.25).audit.linger == 0.25
    for wrong in (0, -1, None, "1", True, math.inf, math.nan):
        with pytest.raises(ValueError, match="MCP_AUDIT_LINGER"):
            settings(MCP_AUDIT_LINGER=wrong)


@pytest.mark.parametrize(
    "key", ["MCP_TASK_HEARTBEAT", "MCP_LISTEN_MAX_LIFETIME", "MCP_TOOL_TIMEOUT", "MCP_AUDIT_RETENTION_DAYS"]
)
@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan])
def test_a_number_of_seconds_or_days_is_finite(key: str, value: float) -> None:
    """No key takes infinity or NaN: where a key has no bound, ``None`` says so."""
    with pytest.raises(ValueError, match=key):
        settings(**{key: value})


def test_cache_keys_are_passed_on_without_their_prefix() -> None:
    result = settings(MCP_CACHE_TYPE="RedisCache", MCP_CACHE_REDIS_URL="redis://x:1/0", CACHE_TYPE="NullCache")
    assert result.cache_config["CACHE_TYPE"] == "RedisCache"
    assert result.cache_config["CACHE_REDIS_URL"] == "redis://x:1/0"


def test_the_session_cache_threshold_follows_the_session_cap() -> None:
    """SimpleCache must never reach its threshold (and evict) before MCP_MAX_SESSIONS refuses newcomers."""
    assert settings(MCP_MAX_SESSIONS=50).cache_config["CACHE_THRESHOLD"] == 200
    assert settings(MCP_MAX_SESSIONS=50, MCP_CACHE_THRESHOLD=500).cache_config["CACHE_THRESHOLD"] == 500
    with pytest.raises(ValueError, match=r"MCP_CACHE_THRESHOLD .* at least four times MCP_MAX_SESSIONS"):
        settings(MCP_MAX_SESSIONS=50, MCP_CACHE_THRESHOLD=199)


@pytest.mark.parametrize(
    ("key", "value"),
    [("MCP_MAX_SESSIONS", 0), ("MCP_MAX_SESSIONS", None), ("MCP_STORE_HIGH_WATER", 0), ("MCP_STORE_HIGH_WATER", 1.5)],
)
def test_session_load_settings_are_checked(key: str, value: object) -> None:
    with pytest.raises(ValueError, match=key):
        settings(**{key: value})


@pytest.mark.parametrize(
    ("value", "expected"),
    [("https://a.example, https://b.example", ("https://a.example", "https://b.example")), (["x"], ("x",)), ("", ())],
)
def test_origins_accept_lists_and_comma_separated_strings(value: object, expected: tuple[str, ...]) -> None:
    assert settings(MCP_ALLOWED_ORIGINS=value).allowed_origins == expected


@pytest.mark.parametrize("page_size", [0, -1, "10", 2.5])
def test_invalid_page_size_is_refused(page_size: object) -> None:
    with pytest.raises(ValueError, match="MCP_PAGE_SIZE"):
        settings(MCP_PAGE_SIZE=page_size)


def test_page_size_none_disables_pagination() -> None:
    assert settings(MCP_PAGE_SIZE=None).page_size is None


def test_user_values_are_kept() -> None:
    app = Flask(__name__)
    app.config["MCP_SESSION_TTL"] = 60
    Settings.from_app(app)
    assert app.config["MCP_SESSION_TTL"] == 60 and app.config["MCP_STATELESS"] is False


def test_rest_defaults() -> None:
    result = settings()
    assert (result.rest_enabled, result.rest_prefix) == (True, None)
    assert result.swagger_ui_url == ""


@pytest.mark.parametrize(("value", "expected"), [("api/", "/api"), ("/api/v1/", "/api/v1"), ("/", "/")])
def test_rest_prefix_is_normalized(value: str, expected: str) -> None:
    assert settings(MCP_REST_PREFIX=value).rest_prefix == expected


def test_swagger_ui_url_loses_its_trailing_slash() -> None:
    assert settings(MCP_SWAGGER_UI_URL="/static/swagger/").swagger_ui_url == "/static/swagger"


def test_input_limit_defaults() -> None:
    result = settings()
    assert result.json_limits == JSONLimits(max_keys=10_000, max_depth=64, max_string=None)
    assert result.max_uri_length == 8192


def test_input_limits_are_read_and_reach_the_protocol_core() -> None:
    app = Flask(__name__)
    app.config.update(MCP_MAX_JSON_KEYS=50, MCP_MAX_JSON_DEPTH=8, MCP_MAX_JSON_STRING=1000, MCP_MAX_URI_LENGTH=512)
    MCP().init_app(app)
    server = app.extensions["mcp"].server
    assert server.json_limits == JSONLimits(max_keys=50, max_depth=8, max_string=1000)
    assert server.max_uri_length == 512


@pytest.mark.parametrize(
    "key", ["MCP_MAX_JSON_KEYS", "MCP_MAX_JSON_DEPTH", "MCP_MAX_JSON_STRING", "MCP_MAX_URI_LENGTH"]
)
@pytest.mark.parametrize("value", [0, -1, "10", 2.5, True])
def test_invalid_input_limits_are_refused(key: str, value: object) -> None:
    with pytest.raises(ValueError, match=key):
        settings(**{key: value})


@pytest.mark.parametrize("key", ["MCP_MAX_JSON_KEYS", "MCP_MAX_JSON_DEPTH", "MCP_MAX_URI_LENGTH"])
def test_only_the_string_limit_may_be_none(key: str) -> None:
    with pytest.raises(ValueError, match=key):
        settings(**{key: None})


@pytest.mark.parametrize(
    ("key", "hint"),
    [
        ("MCP_STATELES", "did you mean MCP_STATELESS?"),
        ("MCP_PAGESIZE", "did you mean MCP_PAGE_SIZE?"),
        ("MCP_WHATEVER", ""),
    ],
)
def test_unknown_keys_warn_naming_the_closest_setting(key: str, hint: str) -> None:
    with pytest.warns(UnknownSettingWarning, match=f"{key} is not a flask_mcp setting and is ignored") as caught:
        settings(**{key: True})
    assert str(caught[0].message).endswith(hint or "ignored")


def test_cache_keys_are_not_unknown(recwarn: pytest.WarningsRecorder) -> None:
    settings(**{"MCP_CACHE_DEFAULT_TIMEOUT": 10, "MCP_EPHEMERAL_CACHE_THRESHOLD": 5})
    assert not [w for w in recwarn if issubclass(w.category, UnknownSettingWarning)]


@pytest.mark.parametrize(
    ("written", "meant"),
    [
        ("redis", "RedisCache"),
        ("Redis", "RedisCache"),
        ("simple", "SimpleCache"),
        ("null", "NullCache"),
        ("RedisCache", "RedisCache"),
    ],
)
def test_cache_types_take_their_short_names(written: str, meant: str) -> None:
    assert settings(**{"MCP_CACHE_TYPE": written}).cache_config["CACHE_TYPE"] == meant


@pytest.mark.parametrize(("value", "ms"), [(0, 0), (1.5, 1500), (timedelta(minutes=2), 120_000)])
def test_client_cache_ttl_is_seconds_or_a_timedelta(value: object, ms: int) -> None:
    assert settings(**{"MCP_CLIENT_CACHE_TTL": value}).client_cache_ttl_ms == ms


@pytest.mark.parametrize(
    ("key", "value"), [("MCP_CLIENT_CACHE_TTL", -1), ("MCP_CLIENT_CACHE_SCOPE", "shared"), ("MCP_REQUEST_STATE_TTL", 0)]
)
def test_modern_settings_are_checked(key: str, value: object) -> None:
    with pytest.raises(ValueError, match=key):
        settings(**{key: value})


def test_the_request_state_key_falls_back_to_the_secret_key() -> None:
    assert settings(**{"SECRET_KEY": "app-secret"}).request_state_secret == "app-secret"
    assert settings(**{"SECRET_KEY": "s", "MCP_REQUEST_STATE_SECRET": "own"}).request_state_secret == "own"
    assert settings().request_state_secret is None


def test_a_setting_changed_after_init_app_warns_at_the_first_request() -> None:
    app = Flask(__name__)
    MCP(name="late").init_app(app)
    app.config["MCP_PAGE_SIZE"] = 5  # too late: the settings were read in init_app
    http = app.test_client()
    body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    with pytest.warns(LateSettingWarning, match="MCP_PAGE_SIZE changed after the MCP extension was set up"):
        http.post("/mcp", json=body, headers={"Accept": "application/json"})
    with warnings.catch_warnings():
        warnings.simplefilter("error", LateSettingWarning)  # once is enough
        http.post("/mcp", json=body, headers={"Accept": "application/json"})
