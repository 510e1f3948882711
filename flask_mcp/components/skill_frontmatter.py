"""The YAML frontmatter of a ``SKILL.md``: read as YAML 1.2, small, and plain JSON data.

The frontmatter is sent as it is in every ``skills/list`` and ``skills/get``
answer, so what it may be is bounded when the skill is loaded, never when it
is listed:

- at most :data:`MAX_FRONTMATTER_BYTES` bytes;
- no YAML aliases (``*name``, and so no ``<<`` merge keys): an alias is a
  reference, expanded at every listing, so a few hundred bytes of them make
  megabytes of JSON, and one that refers to itself cannot be written at all;
- only what JSON can say (mappings with string keys, lists, strings, finite
  numbers, booleans, null), nested at most :data:`MAX_FRONTMATTER_DEPTH` deep.

A frontmatter that is none of these is refused with a :class:`SkillError`
saying why, so one bad skill is never loaded and cannot break the listing of
the others.
"""

from __future__ import annotations

import math
import re
import typing as t

import yaml

__all__ = ["MAX_FRONTMATTER_BYTES", "MAX_FRONTMATTER_DEPTH", "SkillError", "parse_frontmatter"]

#: The longest frontmatter accepted, in UTF-8 bytes.
MAX_FRONTMATTER_BYTES = 32 * 1024
#: How deep lists and mappings may nest in a frontmatter.
MAX_FRONTMATTER_DEPTH = 16
#: The file that makes a folder a skill.
SKILL_FILE = "SKILL.md"
_FRONTMATTER = re.compile(r"\A\ufeff?---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)


class SkillError(ValueError):
    """A folder that is not a valid skill; the message says why."""


class _Yaml12Loader(yaml.SafeLoader):
    """YAML as the 1.2 core schema reads it: ``yes``, ``on`` and dates stay strings, as other hosts parse them.

    It refuses aliases: see the module docstring.
    """

    def compose_node(self, parent: yaml.Node | None, index: t.Any) -> yaml.Node | None:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()  # type: ignore[no-untyped-call]
            raise yaml.composer.ComposerError(
                None, None, "aliases (*name) are not allowed in a skill's frontmatter", event.start_mark
            )
        return super().compose_node(parent, index)


_DROPPED = ("tag:yaml.org,2002:timestamp", "tag:yaml.org,2002:bool")
_Yaml12Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag not in _DROPPED]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Yaml12Loader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)


def parse_frontmatter(text: str) -> dict[str, t.Any]:
    """The YAML frontmatter at the start of a ``SKILL.md``.

    :raises SkillError: no frontmatter, too long, an alias, not a mapping of
        JSON data, or no ``name``/``description``.
    """
    found = _FRONTMATTER.match(text)
    if found is None:
        raise SkillError(f"{SKILL_FILE} must start with YAML frontmatter between '---' lines")
    source = found.group(1)
    if len(source.encode("utf-8", "surrogatepass")) > MAX_FRONTMATTER_BYTES:
        raise SkillError(f"the frontmatter of {SKILL_FILE} is longer than {MAX_FRONTMATTER_BYTES} bytes")
    try:
        data = yaml.load(source, Loader=_Yaml12Loader)  # a SafeLoader, without aliases
    except yaml.YAMLError as exc:
        raise SkillError(f"the frontmatter of {SKILL_FILE} is not valid YAML: {exc}") from None
    except (ValueError, TypeError, OverflowError, RecursionError) as exc:  # a number too long, nesting too deep
        raise SkillError(f"the frontmatter of {SKILL_FILE} cannot be read: {type(exc).__name__}") from None
    if not isinstance(data, dict):
        raise SkillError(f"the frontmatter of {SKILL_FILE} must be a mapping")
    problem = _not_json(data, MAX_FRONTMATTER_DEPTH)
    if problem is not None:
        raise SkillError(f"the frontmatter of {SKILL_FILE} {problem}")
    for key in ("name", "description"):
        if not isinstance(data.get(key), str) or not data[key].strip():
            raise SkillError(f"the frontmatter of {SKILL_FILE} needs a non-empty {key!r}")
    return data


def _not_json(value: t.Any, depth: int) -> str | None:
    """Why *value* is not plain JSON data nested at most *depth* deep; ``None`` when it is."""
    if isinstance(value, (str, bool, int)) or value is None:
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else "has a number JSON cannot carry (.inf or .nan)"
    if depth <= 0:
        return f"nests deeper than {MAX_FRONTMATTER_DEPTH} levels"
    if isinstance(value, list):
        items: t.Iterable[t.Any] = value
    elif isinstance(value, dict):
        if not all(isinstance(key, str) for key in value):
            return "has a key that is not a string"
        items = value.values()
    else:
        return f"has a value JSON cannot carry ({type(value).__name__})"
    for item in items:
        problem = _not_json(item, depth - 1)
        if problem is not None:
            return problem
    return None
