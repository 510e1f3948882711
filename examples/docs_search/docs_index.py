"""reStructuredText pages split into sections, ranked by Okapi BM25.

Standard library only, so it can be read (and tested) on its own. A page is
cut at each section heading; every section is one document of the index,
its title counted with its text.

BM25 as implemented here, for a query with the distinct terms ``q``::

    score(D) = sum over q of  idf(q) * f(q, D) * (k1 + 1) / (f(q, D) + k1 * (1 - b + b * |D| / avgdl))
    idf(q)   = ln(1 + (N - n(q) + 0.5) / (n(q) + 0.5))

where ``f(q, D)`` is how often ``q`` occurs in document ``D``, ``|D|`` the
number of tokens of ``D``, ``avgdl`` the mean of ``|D|``, ``N`` the number of
documents and ``n(q)`` how many of them contain ``q``. This ``idf`` (the one
Lucene uses) stays positive for terms found in most documents, so a match
never lowers a score.
"""

from __future__ import annotations

import collections
import dataclasses
import math
import re
import typing as t
from pathlib import Path

__all__ = ["BM25", "DocsIndex", "Section", "parse_sections", "snippet", "tokenize"]

#: Every page of this folder is the documentation of the checkout it sits in,
#: hence one version; :data:`VERSIONS` names what ``search_docs`` accepts.
PAGE_VERSION = "latest"
VERSIONS = (PAGE_VERSION, "all")

_TOKEN = re.compile(r"[a-z0-9]+")
# An underline (or overline): one punctuation character repeated, nothing else.
_ADORNMENT = re.compile(r"^([!-/:-@\[-`{-~])\1+\s*$")
_ROLE = re.compile(r":[\w.+-]+:`~?([^`<]*?)\s*(?:<[^`]*>)?`")
_LINK = re.compile(r"`([^`<]*?)\s*(?:<[^`]*>)?`__?")
_LABEL = re.compile(r"^\.\. _[^:]+:\s*$")
_DIRECTIVE = re.compile(r"^(\s*)\.\. [\w:-]+::\s?")
_OPTION = re.compile(r"^\s+:[\w-]+:(\s.*)?$")


def tokenize(text: str) -> list[str]:
    """Lower-case runs of letters and digits: ``"MCP_STATELESS = True"`` gives ``mcp, stateless, true``."""
    return _TOKEN.findall(text.lower())


class BM25:
    """Okapi BM25 over a fixed list of tokenised documents.

    :param documents: the tokens of each document.
    :param k1: term-frequency saturation.
    :param b: how much the document length normalises the term frequency.
    """

    def __init__(self, documents: t.Sequence[t.Sequence[str]], k1: float = 1.5, b: float = 0.75) -> None:
        self.k1 = k1
        self.b = b
        self.frequencies = [collections.Counter(doc) for doc in documents]
        self.lengths = [len(doc) for doc in documents]
        self.avgdl = sum(self.lengths) / len(documents) if documents else 0.0
        self.document_frequency: collections.Counter[str] = collections.Counter()
        for counts in self.frequencies:
            self.document_frequency.update(counts.keys())

    def idf(self, term: str) -> float:
        """Inverse document frequency of *term* (positive, see the module docstring)."""
        n = self.document_frequency[term]
        return math.log(1 + (len(self.lengths) - n + 0.5) / (n + 0.5))

    def scores(self, terms: t.Iterable[str]) -> list[float]:
        """The score of every document for the distinct *terms*, in document order."""
        scores = [0.0] * len(self.lengths)
        for term in dict.fromkeys(terms):  # distinct, in order: a repeated word counts once
            if not self.document_frequency[term]:
                continue
            idf = self.idf(term)
            for i, counts in enumerate(self.frequencies):
                f = counts[term]
                if f:
                    norm = self.k1 * (1 - self.b + self.b * self.lengths[i] / self.avgdl)
                    scores[i] += idf * f * (self.k1 + 1) / (f + norm)
        return scores


@dataclasses.dataclass(frozen=True)
class Section:
    """One section of a page: the unit that ``search_docs`` ranks and returns."""

    #: ``<page>#<slug of the title>``, unique in the index.
    id: str
    title: str
    #: The page name: the file's path under the docs folder, without ``.rst``.
    page: str
    #: The page's own title, grouping its sections.
    category: str
    #: The file, relative to the repository root.
    path: str
    #: The section's text with the reST markup stripped, whitespace collapsed.
    text: str
    version: str = PAGE_VERSION


def _plain(lines: t.Iterable[str]) -> str:
    """Readable text of reST lines: roles, literals, labels and directive options removed."""
    kept: list[str] = []
    for line in lines:
        if _LABEL.match(line) or _OPTION.match(line) or _ADORNMENT.match(line.strip() or "x"):
            continue
        line = _DIRECTIVE.sub(r"\1", line)
        line = _LINK.sub(r"\1", _ROLE.sub(r"\1", line).replace("``", ""))
        kept.append(line)
    return " ".join(" ".join(kept).split())


def _slug(title: str) -> str:
    return "-".join(tokenize(title)) or "section"


def _headings(lines: list[str]) -> list[int]:
    """Indices of the title lines: unindented text over an adornment at least as long."""
    found = []
    for i in range(len(lines) - 1):
        title, under = lines[i].rstrip(), lines[i + 1].rstrip()
        is_text = bool(title) and not title[0].isspace() and not _ADORNMENT.match(title)
        if is_text and _ADORNMENT.match(under) and len(under) >= len(title):
            found.append(i)
    return found


def parse_sections(page: str, source: str, path: str) -> list[Section]:
    """Split the reST *source* of *page* into sections at its headings.

    Text before the first heading joins the first section; a page without
    headings is one section titled by its page name.
    """
    lines = source.splitlines()
    starts = _headings(lines)
    if not starts:
        return [Section(f"{page}#{_slug(page)}", page, page, page, path, _plain(lines))]
    category = lines[starts[0]].strip()
    sections: list[Section] = []
    seen: collections.Counter[str] = collections.Counter()
    for n, start in enumerate(starts):
        end = starts[n + 1] if n + 1 < len(starts) else len(lines)
        title = lines[start].strip()
        body = lines[start + 2 : end]
        if n == 0:
            body = lines[:start] + body
        slug = _slug(title)
        seen[slug] += 1
        if seen[slug] > 1:
            slug = f"{slug}-{seen[slug]}"
        sections.append(Section(f"{page}#{slug}", title, page, category, path, _plain(body)))
    return sections


def snippet(text: str, terms: t.Collection[str], width: int = 160) -> str:
    """About *width* characters of *text* around the first occurrence of any of *terms*.

    Matches whole tokens only (``hook`` does not match ``hooks``); without
    one, the start of the text. Cuts are marked with ``…``.
    """
    first = next((m.start() for m in _TOKEN.finditer(text.lower()) if m.group() in terms), 0)
    start = max(0, min(first - width // 3, len(text) - width))
    end = min(len(text), start + width)
    return ("…" if start else "") + text[start:end].strip() + ("…" if end < len(text) else "")


class DocsIndex:
    """Every section of the ``.rst`` pages under *docs_dir*, ready to search.

    Pages under ``_build`` (Sphinx output) are left out.

    :param docs_dir: the documentation folder.
    :param root: the folder paths in results are relative to.
    """

    def __init__(self, docs_dir: Path, root: Path) -> None:
        self.docs_dir = docs_dir
        self.pages: dict[str, Path] = {}
        self.sections: list[Section] = []
        # By page name ("oauth" before "oauth-clients"), not by file name ("-" sorts before ".").
        for file in sorted(docs_dir.rglob("*.rst"), key=lambda path: path.with_suffix("").as_posix()):
            relative = file.relative_to(docs_dir)
            if "_build" in relative.parts:
                continue
            page = relative.with_suffix("").as_posix()
            self.pages[page] = file
            source = file.read_text(encoding="utf-8")
            self.sections.extend(parse_sections(page, source, file.relative_to(root).as_posix()))
        self.bm25 = BM25([tokenize(f"{s.title} {s.text}") for s in self.sections])

    def page_titles(self) -> dict[str, str]:
        """Each page's title by page name."""
        return {s.page: s.category for s in reversed(self.sections)}

    def search(self, query: str, limit: int = 10, version: str = "all") -> list[dict[str, t.Any]]:
        """The best *limit* sections for *query*, scores divided by the best one.

        Only sections matching at least one term are returned; a query
        without any word gives no results.
        """
        terms = tokenize(query)
        if not terms:
            return []
        scores = self.bm25.scores(terms)
        ranked = sorted(
            (i for i, score in enumerate(scores) if score > 0 and version in ("all", self.sections[i].version)),
            key=lambda i: -scores[i],  # sorted() is stable: equal scores keep page order
        )[:limit]
        if not ranked:
            return []
        top = scores[ranked[0]]
        wanted = set(terms)
        return [
            {
                "id": self.sections[i].id,
                "title": self.sections[i].title,
                "page": self.sections[i].page,
                "category": self.sections[i].category,
                "source": {"path": self.sections[i].path},
                "score": round(scores[i] / top, 6),
                "snippet": snippet(self.sections[i].text, wanted),
            }
            for i in ranked
        ]
