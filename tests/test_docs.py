"""README.md stays short, and the links of README.md and the guide (docs/) resolve."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

#: [text](target) outside code; an image ![alt](target) matches too.
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^(```|~~~)")


def unfenced(text: str) -> str:
    """The text without its fenced code blocks."""
    kept, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line.lstrip()):
            fenced = not fenced
        elif not fenced:
            kept.append(line)
    return "\n".join(kept)


def prose(text: str) -> str:
    """The text without code blocks and inline code spans (a link there is not a link)."""
    return re.sub(r"`[^`]*`", "", unfenced(text))


def slug(heading: str) -> str:
    """The anchor Python-Markdown's toc extension (mkdocs) gives a heading."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).replace("`", "")
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def anchors(page: Path) -> set[str]:
    headings = re.findall(r"^#{1,6}\s+(.*?)\s*#*\s*$", unfenced(page.read_text(encoding="utf-8")), flags=re.M)
    return {slug(h) for h in headings}


def relative_links(page: Path) -> list[str]:
    targets = LINK.findall(prose(page.read_text(encoding="utf-8")))
    return [t for t in targets if not re.match(r"^[a-z][a-z0-9+.-]*:", t, flags=re.I)]


def test_readme_is_at_most_350_lines():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 350, f"README.md has {len(lines)} lines; move detail into docs/"


def test_the_guide_exists_and_is_linked_from_the_readme():
    assert (ROOT / "docs" / "index.md").is_file()
    linked = {(ROOT / t.split("#")[0]).resolve() for t in relative_links(ROOT / "README.md") if t.split("#")[0]}
    assert {p.resolve() for p in (ROOT / "docs").glob("*.md")} <= linked


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_points_to_a_file_that_exists(page):
    broken = []
    for target in relative_links(page):
        path, _, anchor = target.partition("#")
        resolved = (page.parent / path).resolve() if path else page
        if not resolved.exists():
            broken.append(f"{target}: no such file")
        elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
            broken.append(f"{target}: no heading with that anchor")
    assert broken == [], f"{page.relative_to(ROOT)}: {broken}"


def test_every_page_is_in_the_mkdocs_nav():
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert "strict: true" in config and "docs_dir: docs" in config
    nav = set(re.findall(r"^\s*- (?:[^:\n]+: )?([\w./-]+\.md)\s*$", config, flags=re.M))
    assert nav == {p.name for p in (ROOT / "docs").glob("*.md")}


def stale_tables(docs: Path) -> list[str]:
    """The generated tables (reports/docs_tables.py) whose block in ``docs`` differs from the code's."""
    from prefixbench.reports.docs_tables import TABLES, replace_block

    stale = []
    for page, name, make in TABLES:
        text = (docs / page).read_text(encoding="utf-8")
        if replace_block(text, name, make()) != text:
            stale.append(f"{page}: the {name} table (run: python -m prefixbench.reports.docs_tables docs)")
    return stale


def test_the_format_and_provider_tables_are_the_codes():
    assert stale_tables(ROOT / "docs") == []


def test_the_strategies_page_counts_the_refused_requests():
    """docs/strategies.md said the simulated provider accepts every ``no-compaction`` prompt at
    32k; it refuses 38 of 61 on seed-coding, and the page's table (made from the runs) says so."""
    page = (ROOT / "docs" / "strategies.md").read_text(encoding="utf-8")
    table = page.split("<!-- strategies:begin -->")[1].split("<!-- strategies:end -->")[0]
    row = next(line for line in table.splitlines() if line.startswith("| `no-compaction`"))
    assert "38 of 61" in row and "accepts every one" not in page



def test_the_gemini_idle_rule_is_told_where_it_applies():
    """docs said a call after ten idle minutes reads nothing "on every Gemini model"; the audit
    applies ``unread_after_idle_ms`` on its chain model only (no request bodies in the log), so
    each page that tells the rule says so."""
    for page in ("audit.md", "formats.md", "providers.md"):
        text = " ".join(prose((ROOT / "docs" / page).read_text(encoding="utf-8")).split())
        told = text.split("10 minutes after its lane's previous one")[1:]
        assert told, page
        assert all("no request bodies" in part[:400] or "without request bodies" in part[:400] for part in told), page

def test_the_suite_time_is_one_figure_everywhere():
    """README said five minutes, getting-started and tests-and-benchmarks three: one measured figure."""
    sentences = {
        "README.md": "The second runs the test-suite (about {} on 2 cores)",
        "docs/getting-started.md": "The second command runs the test-suite, which takes about {} on 2 cores.",
        "docs/tests-and-benchmarks.md": "The default run takes about {} on 2 cores.",
        "docs/contributing.md": "# the suite: about {} on 2 cores",
    }
    for page, sentence in sentences.items():
        assert sentence.format("ten minutes") in (ROOT / page).read_text(encoding="utf-8"), page


def test_the_readme_replay_rows_are_the_replay_pages():
    """README's replay example showed request #21 as effort-changed; the tool (and docs/replay.md)
    says it is the first request after the compaction call."""
    def rows(page: str) -> dict[str, str]:
        text = (ROOT / page).read_text(encoding="utf-8")
        block = text.split("$ prefixbench replay legacy.jsonl\n", 1)[1].split("```", 1)[0]
        return {line.split()[0]: line for line in block.splitlines() if line[:3].strip().isdigit()}

    readme, replay = rows("README.md"), rows("docs/replay.md")
    assert readme["21"] == replay["21"] and "compaction: first request after the compaction call #20" in readme["21"]
    assert {k: readme[k] for k in replay if k in readme} == {k: replay[k] for k in readme if k in replay}


def test_every_format_has_its_section():
    from prefixbench.workloads.logs.formats import FORMATS

    headings = {line[3:].split(" (")[0] for line in (ROOT / "docs" / "formats.md").read_text().splitlines() if line.startswith("## ")}
    assert set(FORMATS) <= headings, sorted(set(FORMATS) - headings)


def test_the_audit_page_names_every_input_name_audit_accepts():
    # walk34: the page named the formats but two of their thirteen other names.
    from prefixbench.workloads.logs.formats import FORMATS

    page = (ROOT / "docs" / "audit.md").read_text(encoding="utf-8")
    names = {name for fmt in FORMATS.values() for name in (fmt.name, *fmt.aliases)}
    assert not {name for name in names if f"`{name}`" not in page and f"|{name}|" not in page and f"|{name}]" not in page}


def test_the_audit_synopsis_offers_every_format():
    # walk (round 39): the synopsis's --input list stopped at openhands-completions, without zed
    # and copilot-cli, which audit --help lists.
    import re

    from prefixbench.workloads.logs.formats import FORMATS

    page = (ROOT / "docs" / "audit.md").read_text(encoding="utf-8")
    listed = re.search(r"^prefixbench audit PATH\.\.\. \[--input ([a-z|-]+)\]", page, re.M)
    assert listed is not None
    assert listed.group(1).split("|") == ["auto", *FORMATS]


def test_audit_help_and_page_name_every_file_the_folder_walk_offers(capsys):
    # fixobs: the walk offered *.parquet (LangSmith's bulk export) but audit --help's PATH did not say so.
    from prefixbench.reports.cli import main
    from prefixbench.workloads.logs.formats import FORMATS

    suffixes = {suffix for fmt in FORMATS.values() for suffix in fmt.file_suffixes}
    with pytest.raises(SystemExit):
        main(["audit", "--help"])
    usage = " ".join(capsys.readouterr().out.split())
    page = (ROOT / "docs" / "audit.md").read_text(encoding="utf-8").split("## Input", 1)[1].split("\n## ", 1)[0]
    assert not {s for s in suffixes if f"*{s}" not in usage}
    assert not {s for s in suffixes if f"`*{s}`" not in page}


def test_a_format_added_to_the_table_makes_the_page_stale(monkeypatch, tmp_path):
    import msgspec

    from prefixbench.workloads.logs import formats

    for page in ("formats.md", "providers.md", "published.md", "strategies.md"):
        (tmp_path / page).write_text((ROOT / "docs" / page).read_text(encoding="utf-8"), encoding="utf-8")
    assert stale_tables(tmp_path) == []
    planted = msgspec.structs.replace(formats.FORMATS["codex"], name="planted", aliases=())
    monkeypatch.setitem(formats.FORMATS, "planted", planted)
    assert stale_tables(tmp_path) == ["formats.md: the formats table (run: python -m prefixbench.reports.docs_tables docs)"]


def test_the_replay_page_names_every_json_field(tmp_path, capsys):
    # newuser4: with --price, replay --format json printed six dollar fields the page never named.
    from prefixbench.reports.cli import main

    log = tmp_path / "t.jsonl"
    log.write_text('{"model": "m", "messages": [{"role": "user", "content": "hi"}]}\n')
    page = (ROOT / "docs" / "replay.md").read_text(encoding="utf-8")
    section = page.split("`--format json` prints a JSON array", 1)[1].split("\n\n", 1)[0]
    named = set(re.findall(r"\w+", " ".join(re.findall(r"`([^`]*)`", section))))
    import json

    for extra in ([], ["--price", "deepseek-v4-flash"]):
        assert main(["replay", str(log), "--format", "json", "--quiet", *extra]) == 0
        fields = set(json.loads(capsys.readouterr().out)[0])
        assert fields <= named, sorted(fields - named)


#: The pages for those who develop prefixbench from its checkout, where the source tree's paths are theirs.
DEVELOPER_PAGES = {"contributing.md"}


def test_user_pages_name_the_price_table_of_the_installed_package():
    """``simulator/data/prices.csv`` is a path of the source tree: an installed user cannot find
    it. The user pages say where the installed package holds it, as PRICE_TABLE_WHERE does."""
    from prefixbench.simulator.pricing import PRICE_TABLE_WHERE

    assert PRICE_TABLE_WHERE.startswith("prefixbench/simulator/data/prices.csv of the installed package")
    checkout = re.compile(r"(?<![\w/])simulator/data/prices\.csv")
    stale = [f"{page.name}:{n}" for page in PAGES if page.name not in DEVELOPER_PAGES
             for n, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1) if checkout.search(line)]
    assert stale == []


def test_the_readme_lists_each_command_as_its_help_says():
    # newuser (round 60): `prefixbench --help` worded the subcommands otherwise than README.md's
    # list (record: "run one workload and record every request ...", README: "write a kernel run ...").
    from prefixbench.reports.cli import build_parser

    parser = build_parser()
    subcommands = next(a for a in parser._actions if a.dest == "command")
    helps = {action.dest: action.help for action in subcommands._choices_actions}
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = text.split("## The commands\n", 1)[1].split("```\n", 2)[1]
    listed = [line.split(None, 2)[1:] for line in block.splitlines()]
    assert listed == [[name, help] for name, help in helps.items()]


def test_the_commands_table_is_the_help_order_with_no_stale_entry():
    # reports/cli.py's COMMANDS gives each subcommand's help line, in --help's order (README.md's
    # list is held to it above): a command registered out of its order, or an entry left for a
    # command no longer registered, makes the two disagree.
    from prefixbench.reports.cli import COMMANDS, build_parser

    parser = build_parser()
    subcommands = next(a for a in parser._actions if a.dest == "command")
    assert list(COMMANDS) == list(subcommands.choices)


def shown_blocks(command: str) -> list[tuple[str, str, list[str]]]:
    """Each ``$ prefixbench COMMAND ...`` line of README.md and docs/ with the lines shown after it."""
    found = []
    for page in PAGES:
        lines = page.read_text(encoding="utf-8").splitlines()
        for n, line in enumerate(lines):
            if line.startswith(f"$ prefixbench {command} "):
                after = []
                for shown in lines[n + 1:]:
                    if shown.startswith(("$ ", "```")):
                        break
                    after.append(shown)
                found.append((page.name, line[2:], after))
    return found


def test_every_record_example_runs_twice_as_written_and_shows_what_it_prints(tmp_path, monkeypatch, capsys):
    # newuser (round 60): the guide's `prefixbench record legacy.jsonl ...` failed when run a
    # second time (the log existed; only --force replaces it), and the blocks left out the
    # "wrote ..." line record prints. Its progress lines (`prefixbench: record 0/1 runs done, ...`,
    # once a run has taken CHECK_PROGRESS_SECONDS, which a loaded machine reaches) are left out of
    # the comparison: their count and times vary; the test makes them print to prove that.
    import shlex

    from prefixbench.reports import trace
    from prefixbench.reports.cli import main

    examples = shown_blocks("record")
    assert len(examples) >= 6
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(trace, "CHECK_PROGRESS_SECONDS", 0.01)
    printed: dict[str, list[str]] = {}
    for page, line, after in examples:
        argv = shlex.split(line.split("&&")[0])[1:]
        if line not in printed:
            for _ in range(2):
                assert main(argv) == 0, f"{page}: {line}: {capsys.readouterr().err}"
                printed[line] = [shown for shown in capsys.readouterr().err.splitlines()
                                 if not shown.startswith("prefixbench: record ")]
        assert after[:len(printed[line])] == printed[line], f"{page}: {line}"
        check = shlex.split(line.split("&&")[1])[1:]
        main(check)
        assert shown_as(after[len(printed[line]):], capsys.readouterr().out.splitlines()), f"{page}: {line}"


def shown_as(shown: list[str], printed: list[str]) -> bool:
    """Whether a page's ``shown`` lines are the ``printed`` ones, a line ending ``...`` standing for
    any line that starts with what comes before it, and a line ``...`` alone for any lines."""
    if not shown:
        return not printed
    head, rest = shown[0], shown[1:]
    if head == "...":
        return any(shown_as(rest, printed[n:]) for n in range(len(printed) + 1))
    if not printed:
        return False
    same = printed[0].startswith(head[:-3]) if head.endswith("...") else printed[0] == head
    return same and shown_as(rest, printed[1:])
