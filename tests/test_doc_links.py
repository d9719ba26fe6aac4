"""What README.md and docs/ point at exists: each relative link, each install of this project."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
# [text](target): a Markdown link; its target up to a title or an anchor.
LINK = re.compile(r"\[[^\]]*\]\(([^)\s#]*)[^)]*\)")
# `docs/api.md`, `bot/questions/`: a path in code quotes that points into the checkout.
QUOTED = re.compile(r"`((?:docs|bot|adapters|tests|deploy|bench)/[\w./-]*)`")


def _targets(page: Path) -> list[tuple[str, Path]]:
    """(as written, where it points) for each relative link and each quoted checkout path."""
    text = page.read_text()
    found = []
    for target in LINK.findall(text):
        if target and not re.match(r"[a-z][a-z0-9+.-]*:", target):
            found.append((target, (page.parent / target).resolve()))
    for path in QUOTED.findall(text):
        found.append((path, ROOT / path))
    return found


def test_every_relative_link_in_the_readme_and_docs_exists() -> None:
    """A page that points at a file of the checkout points at one that is there."""
    broken = [
        f"{page.relative_to(ROOT)}: {written}"
        for page in PAGES
        for written, target in _targets(page)
        if not target.exists()
    ]
    assert not broken, broken


def test_the_link_check_reads_both_kinds_of_link() -> None:
    """It finds the README's Markdown links and a page's quoted paths: a pass means something."""
    readme = [written for written, _ in _targets(ROOT / "README.md")]
    production = [written for written, _ in _targets(ROOT / "docs" / "production.md")]
    assert "docs/api.md" in readme and "deploy/Containerfile" in production, readme


# docs/production.md, "Allowed hosts": a page, then the words of the section it means.
POINTER = re.compile(r'\b(README|docs/[\w/-]+\.md)\b[\s,(]*"(\w[^"]*)"')
POINTING = [
    "Makefile",
    "manifest.yml",
    ".env.example",
    "bot",
    "adapters",
    "deploy",
    "tests",
    "docs",
]


def test_every_page_the_code_points_at_has_the_section_it_names() -> None:
    """A comment, message or setting that sends a person to a page names one with that section."""
    files = [
        path
        for name in POINTING
        for path in ([ROOT / name] if (ROOT / name).is_file() else (ROOT / name).rglob("*"))
        if path.is_file() and path.suffix in {"", ".py", ".md", ".yml", ".yaml", ".example"}
    ]
    wrong = []
    for path in files:
        text = path.read_text()
        for page, words in POINTER.findall(text):
            target = ROOT / ("README.md" if page == "README" else page)
            here = target.read_text() if target.exists() else ""
            if re.sub(r"\s+", " ", words) not in re.sub(r"\s+", " ", here):
                wrong.append(f"{path.relative_to(ROOT)}: {page} {words!r}")
    assert not wrong, wrong


def test_every_install_of_this_project_is_from_the_checkout() -> None:
    """The package is on no index: no page or message installs it by name, only from a path."""
    by_name = re.compile(r"pip install[^\n`]*chatops-hitl-bridge")
    sources = [
        *PAGES,
        *sorted((ROOT / "bot").rglob("*.py")),
        *sorted((ROOT / "adapters").rglob("*.py")),
    ]
    named = [str(path.relative_to(ROOT)) for path in sources if by_name.search(path.read_text())]
    assert not named, named
