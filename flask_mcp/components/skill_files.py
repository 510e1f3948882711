"""Opening and reading a skill's files safely: inside its folder, through no link, and bounded in size.

A skill's folder is walked once when it is loaded, but what its files are
can change afterwards: a file replaced by a symbolic link to a secret
elsewhere, a folder replaced by a link, a file grown to gigabytes, a named
pipe that blocks whoever opens it. So every read, at load and at request
time alike, opens the file again from the skill's folder one path component
at a time with ``O_NOFOLLOW`` (a link anywhere on the way fails the open),
checks that the folder is the one that was loaded, that what it opened is a
regular file, and reads at most the bound plus one byte.
"""

from __future__ import annotations

import hashlib
import os
import stat
import typing as t
from pathlib import Path

__all__ = ["DEFAULT_MAX_FILE_BYTES", "FileRefused", "FolderId", "digest_file", "folder_id", "read_file"]

#: ``MCP_SKILL_FILE_MAX_BYTES`` by default: the largest skill file served.
DEFAULT_MAX_FILE_BYTES = 4 * 1024 * 1024
#: What identifies a folder on disk: ``(st_dev, st_ino)``.
FolderId = tuple[int, int]

_CHUNK = 64 * 1024
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
# Where the platform cannot open relative to a folder without following links
# (no O_NOFOLLOW, no dir_fd), the path is resolved and checked instead.
_SAFE_OPEN = hasattr(os, "O_NOFOLLOW") and hasattr(os, "O_DIRECTORY") and os.open in os.supports_dir_fd


class FileRefused(OSError):
    """A skill file that is not served as it now is; the message says why."""


def folder_id(root: Path) -> FolderId:
    """What identifies the folder *root* now, to tell later that it is still the same folder."""
    found = os.stat(root)
    return (found.st_dev, found.st_ino)


def _open(root: Path, root_id: FolderId, location: str) -> int:
    """A descriptor of the regular file *location* (``/``-separated, under *root*); no link followed."""
    parts = location.split("/")
    if any(part in ("", ".", "..") for part in parts):
        raise FileRefused(f"{location!r} is not a path inside the skill")
    if not _SAFE_OPEN:
        return _open_resolved(root, location)
    folder = os.open(root, os.O_RDONLY | os.O_DIRECTORY | _CLOEXEC)
    try:
        found = os.fstat(folder)
        if (found.st_dev, found.st_ino) != root_id:
            raise FileRefused("the skill's folder was replaced since it was loaded")
        for part in parts[:-1]:
            try:
                inner = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | _CLOEXEC, dir_fd=folder)
            except OSError as exc:
                raise FileRefused(f"{location}: {part!r} is no longer a folder of the skill ({exc.strerror})") from None
            os.close(folder)
            folder = inner
        # O_NONBLOCK: a named pipe put in the file's place must not block the request that opens it.
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | _CLOEXEC
        try:
            return os.open(parts[-1], flags, dir_fd=folder)
        except OSError as exc:
            raise FileRefused(f"{location} cannot be opened without following a link ({exc.strerror})") from None
    finally:
        os.close(folder)


def _open_resolved(root: Path, location: str) -> int:
    path = root / location
    real = path.resolve()
    if real != path or not real.is_relative_to(root):
        raise FileRefused(f"{location} is a link or leads out of the skill")
    return os.open(real, os.O_RDONLY | _CLOEXEC)


def _chunks(root: Path, root_id: FolderId, location: str, max_bytes: int) -> t.Iterator[bytes]:
    """The contents of *location*, a chunk at a time.

    :raises FileRefused: a link on the way, not a regular file, or more than *max_bytes*.
    """
    descriptor = _open(root, root_id, location)
    with os.fdopen(descriptor, "rb", buffering=0) as file:
        found = os.fstat(file.fileno())
        if not stat.S_ISREG(found.st_mode):
            raise FileRefused(f"{location} is not a regular file")
        if found.st_size > max_bytes:
            raise FileRefused(f"{location} is {found.st_size} bytes, more than MCP_SKILL_FILE_MAX_BYTES ({max_bytes})")
        total = 0
        while True:
            # Never more than the bound plus one byte, however much the file grew since fstat.
            chunk = file.read(min(_CHUNK, max_bytes + 1 - total))
            if not chunk:
                return
            total += len(chunk)
            if total > max_bytes:
                raise FileRefused(f"{location} grew past MCP_SKILL_FILE_MAX_BYTES ({max_bytes}) as it was read")
            yield chunk


def read_file(root: Path, root_id: FolderId, location: str, max_bytes: int) -> bytes:
    """The contents of the skill file *location*, opened safely (see the module docstring).

    :raises FileRefused: why it is not served.
    :raises OSError: it is gone, or cannot be read.
    """
    return b"".join(_chunks(root, root_id, location, max_bytes))


def digest_file(root: Path, root_id: FolderId, location: str, max_bytes: int) -> tuple[int, str]:
    """The size and ``sha256:`` digest of the skill file *location*, read a chunk at a time.

    :raises FileRefused: why it is not served.
    :raises OSError: it is gone, or cannot be read.
    """
    digest = hashlib.sha256()
    size = 0
    for chunk in _chunks(root, root_id, location, max_bytes):
        digest.update(chunk)
        size += len(chunk)
    return size, "sha256:" + digest.hexdigest()
