"""Code blocks of README.md, for the tests that run them."""

from __future__ import annotations

from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def readme_block(heading: str, language: str = "python") -> str:
    """The first ```language block after ``heading`` (a whole heading line) in README.md."""
    lines = README.read_text(encoding="utf-8").splitlines()
    start = lines.index(heading)
    opening = next(i for i in range(start, len(lines)) if lines[i] == f"```{language}")
    closing = next(i for i in range(opening + 1, len(lines)) if lines[i] == "```")
    return "\n".join(lines[opening + 1 : closing]) + "\n"
