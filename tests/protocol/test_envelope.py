"""The modern era's per-request envelope: which requests are modern, and what they must carry."""

from __future__ import annotations

import typing as t

import pytest

from flask_mcp.protocol.envelope import (
    CLIENT_CAPABILITIES,
    CLIENT_INFO,
    LOG_LEVEL,
    PROTOCOL_VERSION,
    Envelope,
    is_modern,
    read_envelope,
    served_revision,
)
from flask_mcp.protocol.jsonrpc import INVALID_PARAMS, UNSUPPORTED_VERSION, MCPError
from flask_mcp.protocol.versions import ALL_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

MODERN = MODERN_PROTOCOL_VERSIONS[0]
META = {PROTOCOL_VERSION: MODERN, CLIENT_CAPABILITIES: {}}


@pytest.mark.parametrize(
    ("params", "modern"),
    [
        ({"_meta": META}, True),
        ({"_meta": {PROTOCOL_VERSION: None}}, True),  # the key decides: its errors are the modern era's
        ({"_meta": {"progressToken": 1}}, False),
        ({"_meta": None}, False),
        ({}, False),
        (None, False),
        ([1], False),
    ],
)
def test_the_protocol_version_key_makes_a_request_modern(params: t.Any, modern: bool) -> None:
    assert is_modern(params) is modern


def test_a_complete_envelope_is_read() -> None:
    info = {"name": "client", "version": "1"}
    meta = {**META, CLIENT_CAPABILITIES: {"sampling": {}}, CLIENT_INFO: info, LOG_LEVEL: "warning"}
    assert read_envelope({"_meta": meta}) == Envelope(MODERN, {"sampling": {}}, info, "warning")


def test_client_info_and_log_level_are_optional() -> None:
    assert read_envelope({"_meta": META}) == Envelope(MODERN, {})


@pytest.mark.parametrize(
    ("meta", "named"),
    [
        (None, "params._meta"),
        ("x", "params._meta"),
        ({CLIENT_CAPABILITIES: {}}, PROTOCOL_VERSION),
        ({PROTOCOL_VERSION: MODERN}, CLIENT_CAPABILITIES),
        ({}, PROTOCOL_VERSION),
        ({**META, PROTOCOL_VERSION: 20260728}, PROTOCOL_VERSION),
        ({**META, CLIENT_CAPABILITIES: []}, CLIENT_CAPABILITIES),
        ({**META, CLIENT_INFO: {"version": "1"}}, CLIENT_INFO),
        ({**META, CLIENT_INFO: "client"}, CLIENT_INFO),
        ({**META, LOG_LEVEL: "loud"}, LOG_LEVEL),
    ],
)
def test_a_broken_envelope_is_invalid_params_naming_the_member(meta: t.Any, named: str) -> None:
    with pytest.raises(MCPError) as info:
        read_envelope({"_meta": meta})
    assert info.value.code == INVALID_PARAMS
    assert named in info.value.message


@pytest.mark.parametrize("version", ["2099-01-01", "v999.0.0", "2025-11-25", ""])
def test_a_revision_not_served_statelessly_is_unsupported(version: str) -> None:
    """-32022 lists every revision served, so a client knows whether it may initialize instead."""
    with pytest.raises(MCPError) as info:
        read_envelope({"_meta": {**META, PROTOCOL_VERSION: version}})
    assert info.value.code == UNSUPPORTED_VERSION
    assert info.value.data == {"supported": list(ALL_PROTOCOL_VERSIONS), "requested": version}


def test_the_version_check_can_wait_for_the_transport() -> None:
    """HTTP compares the headers with the envelope before it refuses the revision."""
    envelope = read_envelope({"_meta": {**META, PROTOCOL_VERSION: "2099-01-01"}}, check_version=False)
    assert envelope.protocol_version == "2099-01-01"


@pytest.mark.parametrize(
    "meta",
    [
        META,
        {**META, "progressToken": 1},
        {**META, PROTOCOL_VERSION: "2025-11-25"},
        {**META, PROTOCOL_VERSION: "2099-01-01"},
        {**META, PROTOCOL_VERSION: 20260728},
        {PROTOCOL_VERSION: MODERN},
        {**META, CLIENT_CAPABILITIES: []},
        {**META, CLIENT_CAPABILITIES: None},
        {**META, CLIENT_INFO: {"name": "c", "version": "1"}},
        {**META, CLIENT_INFO: {"version": "1"}},
        {**META, CLIENT_INFO: "c"},
        {**META, CLIENT_INFO: None},
        {**META, LOG_LEVEL: "debug"},
        {**META, LOG_LEVEL: "loud"},
        {**META, LOG_LEVEL: None},
        {**META, CLIENT_INFO: {"name": "c"}, LOG_LEVEL: "info"},
        {},
        None,
        [META],
    ],
)
def test_served_revision_names_the_revision_exactly_when_the_envelope_is_accepted(meta: t.Any) -> None:
    try:
        accepted: str | None = read_envelope({"_meta": meta}).protocol_version
    except MCPError:
        accepted = None
    assert served_revision(meta) == accepted
