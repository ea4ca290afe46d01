"""Code blocks of README.md and the guide (docs/*.md), for the tests that run them."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


def doc_block(page: str, heading: str, language: str = "python") -> str:
    """The first ```language block after ``heading`` (a whole heading line) in ``page``.

    ``page`` is a markdown file relative to the repository root: ``"README.md"``,
    ``"docs/engine-api.md"``.
    """
    lines = (ROOT / page).read_text(encoding="utf-8").splitlines()
    start = lines.index(heading)
    opening = next(i for i in range(start, len(lines)) if lines[i] == f"```{language}")
    closing = next(i for i in range(opening + 1, len(lines)) if lines[i] == "```")
    return "\n".join(lines[opening + 1 : closing]) + "\n"


def readme_block(heading: str, language: str = "python") -> str:
    """The first ```language block after ``heading`` in README.md."""
    return doc_block("README.md", heading, language)
