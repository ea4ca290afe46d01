"""The CI script's fixed expectations agree with what the README shows for the same commands."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_ci_scripts_patched_check_line_is_the_readmes() -> None:
    # (a spec added to every check moved the README's "5 passed" while the script kept "4 passed")
    script = (ROOT / ".ci" / "run").read_text()
    expected = re.search(r'tail -n 1 check-patched\.txt\)" = "([^"]+)"', script)
    assert expected, "the CI script no longer checks the patched recording's last line"
    readme = (ROOT / "README.md").read_text()
    shown = readme.split("prefixbench check --trace patched.jsonl --windows 32k", 1)[1].split("```", 1)[0]
    assert expected.group(1) == shown.strip().splitlines()[-1]
