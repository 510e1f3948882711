"""Content objects a handler can return for full control over the result.

Plain Python values are converted automatically (see :mod:`flask_mcp.results.convert`);
these classes are for when a tool needs an image, several blocks, annotations,
``_meta`` or an explicit error result.
"""

from __future__ import annotations

import base64
import dataclasses
import mimetypes
import os
import typing as t

__all__ = [
    "AudioContent",
    "Content",
    "EmbeddedResource",
    "ImageContent",
    "PromptMessage",
    "ResourceLink",
    "TextContent",
    "ToolResult",
]


def _b64(data: bytes | str) -> str:
    # Strings are taken as already base64-encoded, bytes are encoded here.
    if isinstance(data, bytes):
        return base64.b64encode(data).decode("ascii")
    return data


def _common(
    block: dict[str, t.Any], annotations: dict[str, t.Any] | None, meta: dict[str, t.Any] | None
) -> dict[str, t.Any]:
    if annotations:
        block["annotations"] = dict(annotations)
    if meta:
        block["_meta"] = dict(meta)
    return block


class Content:
    """Base class of every content block; subclasses implement :meth:`to_dict`."""

    def to_dict(self) -> dict[str, t.Any]:
        """Return the block as it goes on the wire."""
        raise NotImplementedError


@dataclasses.dataclass
class TextContent(Content):
    """A block of text.

    :param text: the text.
    :param annotations: optional ``audience``/``priority``/``lastModified`` hints.
    :param meta: optional ``_meta`` object.
    """

    text: str
    annotations: dict[str, t.Any] | None = None
    meta: dict[str, t.Any] | None = None

    def to_dict(self) -> dict[str, t.Any]:
        """Return ``{"type": "text", "text": ...}``."""
        return _common({"type": "text", "text": self.text}, self.annotations, self.meta)


@dataclasses.dataclass
class ImageContent(Content):
    """An image, sent base64-encoded.

    :param data: raw bytes, or a string that is already base64.
    :param mime_type: for example ``"image/png"``.
    """

    data: bytes | str
    mime_type: str
    annotations: dict[str, t.Any] | None = None
    meta: dict[str, t.Any] | None = None

    kind: t.ClassVar[str] = "image"

    @classmethod
    def from_file(cls, path: str | os.PathLike[str], mime_type: str | None = None) -> t.Self:
        """Read a file, guessing the MIME type from its name unless given."""
        guessed = mime_type or mimetypes.guess_type(os.fspath(path))[0] or "application/octet-stream"
        with open(path, "rb") as fh:
            return cls(fh.read(), guessed)

    def to_dict(self) -> dict[str, t.Any]:
        """Return ``{"type": "image"|"audio", "data": ..., "mimeType": ...}``."""
        block = {"type": self.kind, "data": _b64(self.data), "mimeType": self.mime_type}
        return _common(block, self.annotations, self.meta)


@dataclasses.dataclass
class AudioContent(ImageContent):
    """Audio, sent base64-encoded; same fields as :class:`ImageContent`."""

    kind: t.ClassVar[str] = "audio"


@dataclasses.dataclass
class ResourceLink(Content):
    """A link to a resource the client may read with ``resources/read``."""

    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None
    annotations: dict[str, t.Any] | None = None
    meta: dict[str, t.Any] | None = None

    def to_dict(self) -> dict[str, t.Any]:
        """Return ``{"type": "resource_link", "uri": ..., "name": ...}``."""
        block: dict[str, t.Any] = {"type": "resource_link", "uri": self.uri, "name": self.name}
        for key, value in (
            ("title", self.title),
            ("description", self.description),
            ("mimeType", self.mime_type),
            ("size", self.size),
        ):
            if value is not None:
                block[key] = value
        return _common(block, self.annotations, self.meta)


@dataclasses.dataclass
class EmbeddedResource(Content):
    """The contents of a resource, embedded in the result.

    Give exactly one of *text* and *blob* (bytes, or a base64 string).
    """

    uri: str
    text: str | None = None
    blob: bytes | str | None = None
    mime_type: str | None = None
    annotations: dict[str, t.Any] | None = None
    meta: dict[str, t.Any] | None = None

    def __post_init__(self) -> None:
        if (self.text is None) == (self.blob is None):
            raise ValueError("EmbeddedResource needs exactly one of 'text' and 'blob'")

    def to_dict(self) -> dict[str, t.Any]:
        """Return ``{"type": "resource", "resource": {...}}``."""
        resource: dict[str, t.Any] = {"uri": self.uri}
        if self.mime_type:
            resource["mimeType"] = self.mime_type
        if self.text is not None:
            resource["text"] = self.text
        else:
            resource["blob"] = _b64(t.cast(t.Union[bytes, str], self.blob))
        return _common({"type": "resource", "resource": resource}, self.annotations, self.meta)


@dataclasses.dataclass
class ToolResult:
    """A complete tool result, for full control.

    :param content: content blocks (:class:`Content` objects, strings or raw dicts).
    :param structured_content: the optional ``structuredContent`` object.
    :param is_error: mark the result as a tool failure the model should see.
    :param meta: optional ``_meta`` object.
    """

    content: list[Content | str | dict[str, t.Any]] = dataclasses.field(default_factory=list)
    structured_content: dict[str, t.Any] | None = None
    is_error: bool = False
    meta: dict[str, t.Any] | None = None

    def to_dict(self) -> dict[str, t.Any]:
        """Return the ``CallToolResult`` object; ``isError`` only when true."""
        result: dict[str, t.Any] = {"content": [content_block(item) for item in self.content]}
        if self.structured_content is not None:
            result["structuredContent"] = self.structured_content
        if self.is_error:
            result["isError"] = True
        if self.meta:
            result["_meta"] = dict(self.meta)
        return result


@dataclasses.dataclass
class PromptMessage:
    """One message of a prompt.

    :param role: ``"user"`` or ``"assistant"``.
    :param content: a :class:`Content` object, a string or a raw content dict.
    """

    role: t.Literal["user", "assistant"]
    content: Content | str | dict[str, t.Any]

    def __post_init__(self) -> None:
        if self.role not in ("user", "assistant"):
            raise ValueError(f"role must be 'user' or 'assistant', not {self.role!r}")

    def to_dict(self) -> dict[str, t.Any]:
        """Return ``{"role": ..., "content": {...}}``."""
        return {"role": self.role, "content": content_block(self.content)}


def content_block(item: Content | str | dict[str, t.Any]) -> dict[str, t.Any]:
    """Turn a content object, a string or a raw block dict into a wire block."""
    if isinstance(item, Content):
        return item.to_dict()
    if isinstance(item, str):
        return {"type": "text", "text": item}
    if isinstance(item, dict) and isinstance(item.get("type"), str):
        return item
    raise TypeError(f"not a content block: {item!r}")
