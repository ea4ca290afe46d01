"""check.json of ``check --trace``: each result put its profile in "preset" and had no "profile"
key, unlike a user engine's results; it has "profile" now, "preset" kept for older readers."""

from __future__ import annotations

import json

from prefixbench.reports.entry import main


def test_a_trace_result_names_its_profile(tmp_path, capsys) -> None:
    log = tmp_path / "log.jsonl"
    user = {"role": "user", "content": "fix the bug"}
    log.write_text("".join(json.dumps({"model": "deepseek-v4-flash", "messages": m}) + "\n"
                           for m in ([user], [user, {"role": "assistant", "content": "ok"}, user])))
    out = tmp_path / "out"
    main(["check", "--trace", str(log), "--profile", "lenient,deepseek-official", "--out", str(out), "--quiet"])
    capsys.readouterr()
    data = json.loads((out / "check.json").read_text())
    assert data["preset"] is None and data["results"]
    assert all(r["profile"] == r["preset"] for r in data["results"])
    assert {r["profile"] for r in data["results"]} == {"lenient", "deepseek-official"}
