"""Citations name the project's own docs, which a clone has, and what they cite is there.

Product code (``base/ daemon/ drivers/ broadcast/``) cites ``docs/NAME.md``, a numbered
section of it (``docs/protocol.md §7.2``), the start of a heading (``docs/daemon.md,
"Mode 23"``) or a paragraph's bold name (``docs/protocol.md §7.2, "Observed"``);
never the shared specs beside the checkout (``../shared/spec/…``), which a clone does
not have. Tests, benchmarks and the docs may read data from ``../shared/data`` but cite
no spec there either.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PRODUCT = ("base", "daemon", "drivers", "broadcast")
TEXT = {".py", ".js", ".html", ".css", ".toml", ".md", ".txt"}

#: What product code must not name: the shared folder, or the spec files in it.
SHARED = re.compile(r"\.\./shared|\bshared/(?:spec|design|data)\b")
SPECS = re.compile(
    r"\b(?:dgt-protocol|tournament-rules|livechess-api)\.md\b|\bshared/(?:spec|design)\b"
)
#: A Markdown file named anywhere, with what precedes it.
MD_NAME = re.compile(r"([\w./-]*?)([\w-]+)\.md\b")
#: A citation of a doc, with the sections (§N, §N.M) or a quoted heading after it.
CITATION = re.compile(
    r"docs/([\w-]+)\.md"
    r"(?P<sections>(?:[ ,;()–-]*§\d+(?:\.\d+)?)*)"
    r"""(?:,? (?:"(?P<double>[^"\n]+)"|'(?P<single>[^'\n]+)'))?"""
)
HEADING = re.compile(r"^#+\s+(.+?)\s*$", re.M)
NUMBER = re.compile(r"^(\d+(?:\.\d+)?)\.?\s")


def _files(*folders: str) -> Iterator[Path]:
    for folder in folders:
        for path in sorted((ROOT / folder).rglob("*")):
            skip = {"__pycache__", "node_modules"} & set(path.parts)
            if path.is_file() and path.suffix in TEXT and not skip:
                yield path


def _headings(doc: str) -> tuple[list[str], list[str]]:
    """A doc's headings and its bold runs (the names of paragraphs), without backticks."""
    text = (DOCS / f"{doc}.md").read_text(encoding="utf-8")
    text = re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)  # no comments of code blocks
    bold = re.findall(r"\*\*(.+?)\*\*", re.sub(r"\s+", " ", text))
    return [h.replace("`", "") for h in HEADING.findall(text)], [b.replace("`", "") for b in bold]


def _problems(path: Path) -> Iterator[str]:
    text = path.read_text(encoding="utf-8")
    flat = re.sub(r"\s*\n\s*(?:#\s*|\*\s*|//\s*)?", " ", text)  # citations wrapped over lines
    for match in MD_NAME.finditer(text):
        prefix, name = match.groups()
        if prefix.endswith("docs/") and (DOCS / f"{name}.md").is_file():
            continue
        if prefix == "" and name in {"README", "LICENSE"}:
            continue
        yield f"names {match.group(0)!r}, which is not a file of docs/"
    for match in CITATION.finditer(flat):
        doc = match.group(1)
        if not (DOCS / f"{doc}.md").is_file():
            continue  # reported above
        headings, bold = _headings(doc)
        numbers = {m.group(1) for h in headings if (m := NUMBER.match(h))}
        for number in re.findall(r"§(\d+(?:\.\d+)?)", match.group("sections")):
            if number not in numbers:
                yield f"cites docs/{doc}.md §{number}, which has no such numbered section"
        heading = match.group("double") or match.group("single")
        if heading is None:
            continue
        name = heading.replace("`", "").lower()
        if not any(h.lower().startswith(name) for h in headings) and not any(
            name in b.lower() for b in bold
        ):
            yield f'cites docs/{doc}.md, "{heading}", which is no heading or bold name there'


def test_product_code_cites_only_the_projects_docs_and_what_they_hold() -> None:
    problems = [
        f"{path.relative_to(ROOT)}: {problem}"
        for path in _files(*PRODUCT)
        for problem in _problems(path)
    ]
    problems += [
        f"{path.relative_to(ROOT)}: names {m.group(0)!r} (the clone has no ../shared)"
        for path in _files(*PRODUCT)
        for m in SHARED.finditer(path.read_text(encoding="utf-8"))
    ]
    assert problems == []


@pytest.mark.parametrize("folder", ["tests", "bench", "docs"])
def test_tests_benchmarks_and_docs_cite_no_shared_spec(folder: str) -> None:
    this = Path(__file__).resolve()
    problems = [
        f"{path.relative_to(ROOT)}:{text.count(chr(10), 0, m.start()) + 1}: {m.group(0)}"
        for path in _files(folder)
        if path.resolve() != this
        for text in [path.read_text(encoding="utf-8")]
        for m in SPECS.finditer(text)
    ]
    assert problems == []


def test_the_docs_sections_cited_by_the_docs_exist() -> None:
    problems = [
        f"{path.relative_to(ROOT)}: {problem}"
        for path in _files("docs")
        for problem in _problems(path)
        if "cites" in problem
    ]
    assert problems == []


def test_a_wrong_citation_is_found(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text(
        '"""See dgt-protocol.md §7.2, docs/protocol.md §99, docs/daemon.md, "No such heading",\n'
        'docs/nosuch.md and docs/protocol.md §7.2."""\n',
        encoding="utf-8",
    )
    assert list(_problems(bad)) == [
        "names 'dgt-protocol.md', which is not a file of docs/",
        "names 'docs/nosuch.md', which is not a file of docs/",
        "cites docs/protocol.md §99, which has no such numbered section",
        'cites docs/daemon.md, "No such heading", which is no heading or bold name there',
    ]
