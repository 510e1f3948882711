"""Content objects and their wire form."""

from __future__ import annotations

import base64

import pytest

from flask_mcp import AudioContent, EmbeddedResource, ImageContent, PromptMessage, ResourceLink, TextContent
from flask_mcp.results.content import content_block


def test_image_from_file_guesses_the_mime_type(tmp_path) -> None:
    path = tmp_path / "dot.png"
    path.write_bytes(b"\x89PNG\r\n")
    image = ImageContent.from_file(path)
    assert image.to_dict() == {
        "type": "image",
        "data": base64.b64encode(b"\x89PNG\r\n").decode(),
        "mimeType": "image/png",
    }
    assert AudioContent.from_file(path, "audio/wav").to_dict()["type"] == "audio"


def test_resource_link_leaves_out_unset_members() -> None:
    assert ResourceLink("x://1", "one").to_dict() == {"type": "resource_link", "uri": "x://1", "name": "one"}
    full = ResourceLink("x://1", "one", title="One", description="d", mime_type="text/plain", size=3).to_dict()
    assert (full["title"], full["mimeType"], full["size"]) == ("One", "text/plain", 3)


def test_embedded_resource_text() -> None:
    assert EmbeddedResource("x://t", text="hi").to_dict() == {
        "type": "resource",
        "resource": {"uri": "x://t", "text": "hi"},
    }


def test_prompt_message_roles() -> None:
    assert PromptMessage("assistant", TextContent("ok")).to_dict() == {
        "role": "assistant",
        "content": {"type": "text", "text": "ok"},
    }
    with pytest.raises(ValueError, match="role"):
        PromptMessage("system", "x")  # type: ignore[arg-type]


def test_content_block_accepts_raw_blocks_and_refuses_others() -> None:
    raw = {"type": "text", "text": "raw"}
    assert content_block(raw) is raw
    with pytest.raises(TypeError):
        content_block({"text": "no type"})
