"""Inspect AI evaluation logs (workloads/logs/formats/inspect_ai.py): ``.eval`` zips (deflated or
zstd-compressed members) and ``.json`` logs, detected from content; each model event with usage
a call, its ``input_tokens`` read per adapter and inspect_ai release; local-cache answers,
failed calls and samples without events counted apart; the totals checked field by field."""

from __future__ import annotations

import json
import re
import tracemalloc
import zipfile
from pathlib import Path

import pytest
import zstandard
from prefixbench.reports.cli import run
from prefixbench.simulator.errors import UserError
from prefixbench.simulator.usage import PROMPT_EXCLUSIVE, Usage
from prefixbench.workloads.logs.formats import FORMATS, detect_format, import_file
from prefixbench.workloads.logs.formats.base import ImportContext
from prefixbench.workloads.audit.core import run_audit
from prefixbench.workloads.logs.formats import inspect_ai
from prefixbench.workloads.logs.formats.inspect_ai import is_eval_log

FORMAT = FORMATS["inspect-ai"]


def usage(inp: int, out: int, read: int | None = None, write: int | None = None) -> dict:
    found = {"input_tokens": inp, "output_tokens": out, "total_tokens": inp + out + (read or 0) + (write or 0)}
    if read is not None:
        found["input_tokens_cache_read"] = read
    if write is not None:
        found["input_tokens_cache_write"] = write
    return found


def event(model: str, used: dict | None, second: int, **more: object) -> dict:
    return {"event": "model", "model": model, "timestamp": f"2026-03-01T10:00:{second:02d}+00:00",
            "input": [{"role": "system", "content": "sys"}, {"role": "user", "content": "q"}], "tools": [], "config": {},
            "output": {"choices": [], **({"usage": used} if used is not None else {})}, **more}


def sample(sid: int, events: list[dict] | None, epoch: int = 1) -> dict:
    found: dict = {"id": sid, "epoch": epoch, "input": "q", "target": "", "model_usage": {}}
    if events is not None:
        found["events"] = events
    for e in events or ():
        if e.get("event") == "model" and e.get("cache") != "read" and "usage" in e["output"]:
            into = found["model_usage"].setdefault(e["model"], dict.fromkeys(("input_tokens", "output_tokens"), 0))
            for key, value in e["output"]["usage"].items():
                if key != "total_tokens":
                    into[key] = into.get(key, 0) + value
    return found


def log(release: str | None, samples: list[dict] | None, model: str = "openai/gpt-4o") -> dict:
    spec: dict = {"task": "t", "model": model, "created": "2026-03-01T10:00:00+00:00"}
    if release is not None:
        spec["packages"] = {"inspect_ai": release}
    found: dict = {"version": 2, "status": "success", "eval": spec, "plan": {}, "stats": {"model_usage": {}}}
    if samples is not None:
        found["samples"] = samples
    return found


def eval_zip(path: Path, value: dict, *, zstd: bool = False, header: bool = True, frame: int = 64, pad: int = 0) -> Path:
    """``value`` written as Inspect writes an ``.eval``: its header (or, for a run still going,
    ``_journal/start.json``) and a member per sample; ``zstd``: every member zstd-compressed in
    frames of ``frame`` bytes (zip method 93), as later releases write them; ``pad``: spaces
    after each sample's JSON (a zip bomb)."""
    members = {}
    head = {k: v for k, v in value.items() if k != "samples"}
    members["header.json" if header else "_journal/start.json"] = head
    for s in value.get("samples", []):
        members[f"samples/{s['id']}_epoch_{s['epoch']}.json"] = s
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED if zstd else zipfile.ZIP_DEFLATED) as zf:
        for name, member in members.items():
            data = json.dumps(member).encode() + (b" " * pad if name.startswith("samples/") else b"")
            if zstd:  # several frames, as Inspect's capped frames make them
                data = b"".join(zstandard.ZstdCompressor().compress(data[i:i + frame]) for i in range(0, len(data), frame))
            zf.writestr(name, data)
    if zstd:  # mark each member's method as zstd (93) in its local header and the directory
        raw = bytearray(path.read_bytes())
        for magic, at in ((b"PK\x03\x04", 8), (b"PK\x01\x02", 10)):
            start = 0
            while (found := raw.find(magic, start)) >= 0:
                raw[found + at:found + at + 2] = (93).to_bytes(2, "little")
                start = found + 4
        path.write_bytes(bytes(raw))
    return path


MIXED = log("0.3.150", [
    sample(1, [
        event("anthropic/claude-sonnet-4-5", usage(10, 100, read=0, write=5000), 1),
        {"event": "tool", "timestamp": "2026-03-01T10:00:02+00:00",
         "events": [event("anthropic/claude-sonnet-4-5", usage(20, 50, read=5000, write=300), 3, uuid="nested")]},
        event("anthropic/claude-sonnet-4-5", usage(20, 50, read=5000, write=300), 4, uuid="nested"),  # the same event again
        event("openai/gpt-4o", usage(3000, 40, read=2048), 5),
        event("anthropic/claude-sonnet-4-5", usage(1, 1), 6, cache="read"),
        event("anthropic/claude-sonnet-4-5", None, 7, error="overloaded"),
    ]),
    sample(2, None),
])


def test_a_json_log_reads_each_model_event_as_a_call_and_sums_field_by_field(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    path.write_text(json.dumps(MIXED))
    assert detect_format(path) is FORMAT
    requests, summary = import_file(path, FORMAT, ImportContext())
    # Anthropic additive; OpenAI before 0.3.184: input_tokens includes the read (3000 - 2048).
    assert [r.usage for r in requests] == [
        Usage(cache_write_5m=5000, uncached=10, output=100),
        Usage(cache_read=5000, cache_write_5m=300, uncached=20, output=50),
        Usage(cache_read=2048, uncached=952, output=40),
    ]
    assert [(r.provider, r.model, r.lane, r.path) for r in requests] == [
        ("anthropic", "claude-sonnet-4-5", "1_epoch_1", "samples[0].events[0]"),
        ("anthropic", "claude-sonnet-4-5", "1_epoch_1", "samples[0].events[1].events[0]"),
        ("openai", "gpt-4o", "1_epoch_1", "samples[0].events[3]"),
    ]
    # A call extends the previous call of its model in the sample.
    assert requests[1].prefix.parent == requests[0].prefix.node and requests[2].prefix.parent is None
    assert sum(r.usage.prompt for r in requests) == (10 + 5000) + (20 + 5000 + 300) + 3000
    assert sum(r.usage.cache_read for r in requests) == 7048
    assert sum(r.usage.cache_write for r in requests) == 5300
    assert sum(r.usage.output for r in requests) == 190
    skipped = [why for _, why in summary.skipped]
    assert any("local cache (cache: read): no provider call" in why for why in skipped)
    assert any("model call without usage (error: overloaded)" in why for why in skipped)
    assert any("sample 2 epoch 1: no events" in why for why in skipped)
    assert ("counted against the samples' own model_usage: input_tokens 3,030, input_tokens_cache_read 7,048, "
            "input_tokens_cache_write 5,300, output_tokens 190") in summary.notes


@pytest.mark.parametrize(("release", "model", "expected"), [
    # OpenAI-shaped adapters: the cached part inside input_tokens before 0.3.184, outside from it.
    ("0.3.183", "openai/gpt-4o", Usage(cache_read=1024, uncached=976, output=5)),
    ("0.3.184.dev3+gabc", "openai/gpt-4o", Usage(cache_read=1024, uncached=976, output=5)),  # a build before the release
    ("0.3.184", "openai/gpt-4o", Usage(cache_read=1024, uncached=2000, output=5)),
    ("0.3.200", "grok/grok-4", Usage(cache_read=1024, uncached=2000, output=5)),
    # Google's from 0.3.208.
    ("0.3.200", "google/gemini-2.5-pro", Usage(cache_read=1024, uncached=976, output=5)),
    ("0.3.208", "google/gemini-2.5-pro", Usage(cache_read=1024, uncached=2000, output=5)),
    # Anthropic's in every release.
    ("0.3.40", "anthropic/claude-3-5-sonnet-latest", Usage(cache_read=1024, uncached=2000, output=5)),
    # No release logged: the newest reading.
    (None, "openai/gpt-4o", Usage(cache_read=1024, uncached=2000, output=5)),
])
def test_input_tokens_are_read_per_adapter_and_release(tmp_path: Path, release: str | None, model: str, expected: Usage) -> None:
    path = tmp_path / "run.json"
    path.write_text(json.dumps(log(release, [sample(1, [event(model, usage(2000, 5, read=1024), 1)])], model)))
    requests, _ = import_file(path, FORMAT, ImportContext())
    assert [r.usage for r in requests] == [expected]


def test_a_read_above_input_tokens_in_an_earlier_release_is_read_as_excluding_it(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    path.write_text(json.dumps(log("0.3.184.dev3+gabc", [sample(1, [event("openai/gpt-4o", usage(500, 5, read=1024), 1)])])))
    requests, summary = import_file(path, FORMAT, ImportContext())
    assert requests[0].usage == Usage(cache_read=1024, uncached=500, output=5, prompt_count=PROMPT_EXCLUSIVE)
    assert any("whose read exceeds it" in note for note in summary.notes)


def test_a_usage_without_cache_fields_is_cache_not_reported_and_a_gateway_is_unknown(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    path.write_text(json.dumps(log("0.3.60", [sample(1, [event("openai/gpt-4o-mini", usage(287, 20), 1),
                                                          event("openrouter/anthropic/claude-3.5-sonnet", usage(90, 2), 2)])])))
    requests, summary = import_file(path, FORMAT, ImportContext())
    assert [r.usage for r in requests] == [Usage(uncached=287, output=20, cache_reported=False),
                                           Usage(uncached=90, output=2, cache_reported=False)]
    assert [(r.provider, r.model) for r in requests] == [("openai", "gpt-4o-mini"), ("unknown", "openrouter/anthropic/claude-3.5-sonnet")]
    assert any("openrouter 1" in note for note in summary.notes)


@pytest.mark.parametrize(("model", "release", "reported"), [
    ("anthropic/claude-3-5-sonnet-latest", "0.3.100", False), ("anthropic/claude-sonnet-4-5", "0.3.190", True),
    ("google/gemini-2.5-pro", "0.3.190", False), ("google/gemini-2.5-pro", "0.3.210", True),
    ("openai/gpt-4o-mini", "0.3.183", False), ("openai/gpt-4o-mini", "0.3.184", True),
])
def test_a_missing_cache_count_is_a_zero_only_from_the_adapters_release(tmp_path: Path, model: str, release: str,
                                                                         reported: bool) -> None:
    """docs/formats.md: a usage without either cache field is "cache not reported", a 0 only from
    0.3.184 (Google's and Vertex's adapter: 0.3.208). An Anthropic call of 0.3.100 was read as
    reading and writing 0, in every release."""
    path = tmp_path / "run.json"
    path.write_text(json.dumps(log(release, [sample(1, [event(model, usage(5000, 20), 1)])])))
    requests, _ = import_file(path, FORMAT, ImportContext())
    assert [r.usage.cache_reported for r in requests] == [reported]
    assert requests[0].usage.prompt == 5000


@pytest.mark.parametrize("zstd", [False, True])
def test_an_eval_zip_reads_as_its_json_log(tmp_path: Path, zstd: bool) -> None:
    path = eval_zip(tmp_path / "run.eval", MIXED, zstd=zstd)
    assert is_eval_log(path) and detect_format(path) is FORMAT
    requests, summary = import_file(path, FORMAT, ImportContext())
    as_json = tmp_path / "run.json"
    as_json.write_text(json.dumps(MIXED))
    json_requests, _ = import_file(as_json, FORMAT, ImportContext())
    assert [r.usage for r in requests] == [r.usage for r in json_requests]
    assert [r.path for r in requests] == ["samples/1_epoch_1.json:events[0]", "samples/1_epoch_1.json:events[1].events[0]",
                                          "samples/1_epoch_1.json:events[3]"]
    assert summary.requests == 3


def test_a_run_still_going_reads_from_its_journal(tmp_path: Path) -> None:
    path = eval_zip(tmp_path / "run.eval", MIXED, header=False)
    requests, summary = import_file(path, FORMAT, ImportContext())
    assert len(requests) == 3 and any("_journal/start.json" in note for note in summary.notes)


def test_a_zip_of_something_else_is_no_inspect_log(tmp_path: Path) -> None:
    path = tmp_path / "other.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("readme.txt", "hi")
    assert not is_eval_log(path)
    broken = tmp_path / "cut.eval"
    broken.write_bytes(b"PK\x03\x04" + b"\x00" * 40)
    with pytest.raises(UserError, match=r"cut\.eval: an Inspect \.eval log that is not a readable zip"):
        detect_format(broken)


def test_logs_without_per_call_usage_are_refused_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    no_events = tmp_path / "v1.json"
    no_events.write_text(json.dumps({**log("0.3.10", [sample(1, None), sample(2, None)]), "version": 1}))
    no_samples = tmp_path / "header-only.json"
    no_samples.write_text(json.dumps(log("0.3.150", None)))
    assert run(["audit", str(no_events)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (f"prefixbench: error: {no_events}: an Inspect log (version 1) whose 2 sample(s) hold no events: "
                   "only each sample's model_usage totals, no call's usage to audit")
    assert run(["audit", str(no_samples)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "an Inspect log with no sample" in err


def test_a_folder_of_eval_and_json_logs_is_audited(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "logs"
    folder.mkdir()
    eval_zip(folder / "a.eval", MIXED, zstd=True)
    (folder / "b.json").write_text(json.dumps(log("0.3.190", [sample(1, [event("openai/gpt-5", usage(100, 5, read=2048), 1)])])))
    assert run(["audit", str(folder), "--format", "json", "--quiet"]) == 0
    audit = json.loads(capsys.readouterr().out)
    assert audit["totals"]["requests"] == 4


def test_a_call_keeps_the_messages_it_adds_to_its_models_previous_call(tmp_path: Path) -> None:
    """Where the audit locates a break: the input messages past those the model's previous call
    in the sample sent (system messages aside), the whole input at a lane start."""
    first = event("anthropic/claude-sonnet-4-5", usage(10, 5, read=0, write=2000), 1)
    second = event("anthropic/claude-sonnet-4-5", usage(10, 5, read=2000, write=50), 2)
    second["input"] = [*first["input"], {"role": "assistant", "content": "running ls"},
                       {"role": "tool", "content": [{"type": "text", "text": "a.py b.py"}]}]
    path = tmp_path / "run.json"
    path.write_text(json.dumps(log("0.3.150", [sample(1, [first, second])])))
    requests, _ = import_file(path, FORMAT, ImportContext())
    assert [[(m.role, m.excerpt) for m in r.messages] for r in requests] == [
        [("user", "q")], [("assistant", "running ls"), ("tool", "a.py b.py")]]
    assert [r.prefix.new_blocks for r in requests] == [1, 2]


def test_the_note_names_where_inspects_own_totals_differ(tmp_path: Path) -> None:
    value = log("0.3.150", [sample(1, [event("anthropic/claude-sonnet-4-5", usage(10, 5, read=100, write=0), 1)])])
    value["samples"][0]["model_usage"]["anthropic/claude-sonnet-4-5"]["output_tokens"] = 7
    path = tmp_path / "run.json"
    path.write_text(json.dumps(value))
    _, summary = import_file(path, FORMAT, ImportContext())
    assert ("counted against the samples' own model_usage: input_tokens 10, input_tokens_cache_read 100, "
            "input_tokens_cache_write 0, output_tokens 5 (Inspect's 7)") in summary.notes


def condensed(value: dict) -> dict:
    """``value`` written as inspect_ai 0.3.195 on writes a sample (``event/_pool.py``): each
    distinct message once in ``events_data.messages``, a model event's ``input`` ``[]`` beside
    ``input_refs``, ranges ``[start, end)`` of that list."""
    value = json.loads(json.dumps(value))
    for s in value["samples"]:
        pool: list = []
        at: dict[str, int] = {}
        for e in s["events"]:
            if e.get("event") != "model" or not e.get("input"):
                continue
            refs: list[list[int]] = []
            for message in e["input"]:
                key = json.dumps(message, sort_keys=True)
                if key not in at:
                    at[key] = len(pool)
                    pool.append(message)
                if refs and refs[-1][1] == at[key]:
                    refs[-1][1] += 1
                else:
                    refs.append([at[key], at[key] + 1])
            e["input"], e["input_refs"] = [], refs
        s["events_data"] = {"messages": pool, "calls": []}
    return value


def _system_changed_log() -> dict:
    """Three Claude calls of one sample; the third's system prompt changed (its miss is
    system-changed where the reader sees the input)."""
    def call(second: int, system: str, turns: int, used: dict) -> dict:
        found = event("anthropic/claude-sonnet-4-5", used, second)
        found["input"] = [{"role": "system", "content": system}, {"role": "user", "content": "fix the test"}]
        for n in range(turns):
            found["input"] += [{"role": "assistant", "content": f"step {n}"}, {"role": "user", "content": f"result {n}"}]
        return found

    return log("0.3.200", [sample(1, [
        call(1, "You are an engineer.", 0, usage(5, 50, read=0, write=9000)),
        call(3, "You are an engineer.", 1, usage(5, 50, read=9000, write=200)),
        call(5, "You are a DIFFERENT engineer.", 2, usage(5, 50, read=0, write=9400)),
    ])], model="anthropic/claude-sonnet-4-5")


def test_a_condensed_sample_reads_as_the_same_log_written_whole(tmp_path: Path) -> None:
    """Main ignored ``events_data``: a condensed log's events showed no message, so no call's
    added messages and no system prompt, and its changed system prompt was an unexplained miss."""
    whole, pooled = tmp_path / "whole.json", tmp_path / "condensed.json"
    whole.write_text(json.dumps(_system_changed_log()))
    pooled.write_text(json.dumps(condensed(_system_changed_log())))
    assert json.loads(pooled.read_text())["samples"][0]["events"][2]["input"] == []
    one, _ = import_file(whole, FORMAT, ImportContext())
    other, summary = import_file(pooled, FORMAT, ImportContext())
    assert [(r.usage, r.messages, r.prefix.head, r.prefix.new_blocks) for r in other] == [
        (r.usage, r.messages, r.prefix.head, r.prefix.new_blocks) for r in one]
    assert [len(r.messages) for r in other] == [1, 2, 2] and other[1].prefix.head != other[2].prefix.head
    assert any(note.startswith("3 model event(s) of condensed samples (inspect_ai 0.3.195 on)") for note in summary.notes)
    causes = [[(r.cause, r.lost_tokens) for r in run_audit([path]).rows] for path in (whole, pooled)]
    assert causes[0] == causes[1] and ("system-changed", 9200) in causes[1]
    eval_log = eval_zip(tmp_path / "condensed.eval", condensed(_system_changed_log()), zstd=True)
    assert [r.prefix.head for r in import_file(eval_log, FORMAT, ImportContext())[0]] == [r.prefix.head for r in one]


@pytest.mark.parametrize(("refs", "said"), [
    ([[0, 99]], r"input_refs holds \[0, 99\], not a \[start, end\) range of the sample's 2 events_data.messages"),
    ("0-2", "input_refs is not a list"),
    (None, "input_refs, but the sample has no events_data.messages"),
])
def test_bad_input_refs_are_refused_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], refs: object, said: str) -> None:
    value = condensed(log("0.3.200", [sample(1, [event("openai/gpt-5", usage(100, 5, read=0), 1)])]))
    if refs is None:
        del value["samples"][0]["events_data"]
    else:
        value["samples"][0]["events"][0]["input_refs"] = refs
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(value))
    assert run(["audit", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and re.search(rf"bad\.json:1: samples\[0\]\.events\[0\]: {said}", err), err


@pytest.mark.parametrize("zstd", [False, True])
def test_a_zip_bomb_member_is_refused_before_it_is_held(tmp_path: Path, zstd: bool) -> None:
    """A member that inflates past 16 MiB at more than 400 times its compressed size is refused
    as it is read: main read a member up to 1 GiB whole (a 4.4 MB .eval took 2 GB)."""
    path = eval_zip(tmp_path / "bomb.eval", log("0.3.200", [sample(1, [event("openai/gpt-5", usage(100, 5, read=0), 1)])]),
                    zstd=zstd, frame=1 << 30, pad=40 << 20)
    assert path.stat().st_size < 200_000
    tracemalloc.start()
    try:
        with pytest.raises(UserError, match=r"bomb\.eval: samples/1_epoch_1\.json: inflates more than 400 times its [\d,]+ "
                                             r"compressed bytes \(past [\d,]+ bytes read\): a zip bomb"):
            import_file(path, FORMAT, ImportContext())
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 24 << 20, peak


def test_a_member_the_zip_says_is_too_large_is_not_decompressed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(inspect_ai, "MAX_MEMBER_BYTES", 1 << 20)
    path = eval_zip(tmp_path / "big.eval", MIXED, pad=2 << 20)
    with pytest.raises(UserError, match=r"samples/1_epoch_1\.json: larger than 1,048,576 bytes decompressed \(the zip says"):
        import_file(path, FORMAT, ImportContext())


@pytest.mark.parametrize(("model", "provider", "priced", "service"), [
    ("anthropic/claude-sonnet-4-5", "anthropic", "claude-sonnet-4-5", ""),
    ("anthropic/bedrock/us.anthropic.claude-sonnet-4-20250514-v1:0", "bedrock", "us.anthropic.claude-sonnet-4-20250514-v1:0", ""),
    ("anthropic/vertex/claude-sonnet-4@20250514", "anthropic", "claude-sonnet-4@20250514", "Vertex AI"),
    ("anthropic/azure/claude-sonnet-4-5", "anthropic", "claude-sonnet-4-5", "Microsoft Foundry"),
    ("openai/azure/gpt-4o", "openai", "gpt-4o", "Azure OpenAI"),
    ("openai/gpt-4o", "openai", "gpt-4o", ""),
])
def test_the_service_an_adapter_sends_to_decides_the_provider_and_is_named(
        tmp_path: Path, model: str, provider: str, priced: str, service: str) -> None:
    """Inspect's Anthropic adapter sends ``anthropic/bedrock|vertex|azure/...`` to Bedrock, Vertex AI
    and Microsoft Foundry with Anthropic's usage (additive in every release): main read them as
    Anthropic's own API, the service part left in the model."""
    path = tmp_path / "run.json"
    path.write_text(json.dumps(log("0.3.150", [sample(1, [event(model, usage(2000, 5, read=1024, write=0), 1)])], model)))
    requests, _ = import_file(path, FORMAT, ImportContext())
    additive = Usage(cache_read=1024, uncached=2000, output=5)
    subset = Usage(cache_read=1024, uncached=976, output=5)  # OpenAI's before 0.3.184
    assert [(r.provider, r.model, r.service, r.usage) for r in requests] == [
        (provider, priced, service, subset if provider == "openai" else additive)]


def test_a_zip_named_inspect_without_its_members_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "other.eval"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("a.txt", "hello")
    assert run(["audit", "--input", "inspect-ai", str(path)]) == 2
    assert capsys.readouterr().err.strip() == (f"prefixbench: error: {path}: a zip without header.json or _journal/start.json: "
                                               "not an Inspect .eval log")


def test_a_model_that_is_not_a_string_is_refused_as_such(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    value = log("0.3.150", [sample(1, [event("anthropic/claude-sonnet-4-5", usage(10, 5, read=0, write=0), 1)])])
    value["samples"][0]["events"][0]["model"] = ["a"]
    path = tmp_path / "run.json"
    path.write_text(json.dumps(value))
    assert run(["audit", str(path)]) == 2
    assert capsys.readouterr().err.strip() == f"prefixbench: error: {path}:1: samples[0].events[0]: model is not a string (list)"


def test_the_additive_note_says_which_adapter_from_which_release(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    path.write_text(json.dumps(log("0.3.210", [sample(1, [event("google/gemini-2.5-pro", usage(10, 5, read=0), 1)])])))
    _, summary = import_file(path, FORMAT, ImportContext())
    assert ("1 call(s) read with input_tokens excluding the cache read and write (Inspect's Anthropic adapter writes it so in "
            "every release, its OpenAI-shaped, Grok and Bedrock adapters from inspect_ai 0.3.184, its Google adapter from 0.3.208; "
            "adapters that write no cache count are read apart)") in summary.notes


def test_another_tools_version_eval_samples_json_is_not_taken_for_inspect(tmp_path: Path) -> None:
    other = {"version": 1, "eval": {"task": "t", "model": "m"}, "samples": [{"id": 1, "input": "q", "output": "a"}]}
    assert FORMAT.detect(other) is None
    assert FORMAT.detect({**other, "eval": {"task": "t", "model": "m", "created": "2025-01-01T00:00:00"}}) is not None
    assert FORMAT.detect({**other, "version": "1", "eval": {"task": "t", "model": "m", "created": "x"}}) is None
    assert FORMAT.detect(MIXED) is not None


def test_the_formats_table_says_the_usage_per_adapter_and_release() -> None:
    """The formats table said "as the serving provider reports it" for inspect-ai, whose reader
    decides per adapter and release (Anthropic additive always; OpenAI-shaped, Grok and Bedrock
    from 0.3.184; Google from 0.3.208; a missing cache count is 0 only from then). Its row now
    says so, from the release constants the reader uses."""
    from prefixbench.reports.docs_tables import formats_table

    (row,) = [line for line in formats_table().splitlines() if line.startswith("| `inspect-ai` |")]
    assert "as the serving provider reports it" not in row
    assert "per adapter and release: Anthropic additive; OpenAI-shaped, Grok and Bedrock additive from inspect_ai 0.3.184" in row
    assert "Google from 0.3.208 (subset before)" in row
    assert "a missing cache count is 0 only from 0.3.184 (Google from 0.3.208) on adapters that count the cache" in row
    assert "local cache answers skipped" in row
    # The words follow the reader's own table of adapters.
    adapters = inspect_ai.ADAPTERS
    assert adapters["anthropic"].additive_from is None
    assert {adapters[a].additive_from for a in ("openai", "grok", "bedrock")} == {inspect_ai.ADDITIVE_FROM} == {(0, 3, 184)}
    assert adapters["google"].additive_from == adapters["vertex"].additive_from == inspect_ai.GOOGLE_ADDITIVE_FROM == (0, 3, 208)


def _run(run_id: str, samples: list[dict]) -> dict:
    value = log("0.3.150", samples)
    value["eval"].update(run_id=run_id, task_id="task-1")
    return value


def test_a_run_kept_as_eval_and_as_json_is_counted_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``inspect log convert`` leaves a run's .eval and .json side by side (their bytes differ):
    its samples are counted once, from the file read first, and the other file says so."""
    run_value = _run("RUN1", [sample(1, [event("openai/gpt-4o", usage(3000, 40, read=2048), 1)]),
                              sample(2, [event("openai/gpt-4o", usage(2500, 30, read=0), 2)])])
    folder = tmp_path / "logs"
    folder.mkdir()
    eval_zip(folder / "run.eval", run_value)
    (folder / "run.json").write_text(json.dumps(run_value))
    alone = run_audit([folder / "run.eval"])
    for jobs in ("1", "2"):
        assert run(["audit", str(folder), "--format", "json", "--quiet", "--jobs", jobs]) == 0
        audit = json.loads(capsys.readouterr().out)
        assert audit["totals"]["requests"] == alone.totals.requests == 2
        files = {Path(f["file"]).name: f for f in audit["files"]}
        assert files["run.eval"]["requests"] == 2 and files["run.json"]["requests"] == 0
        said = [n for n in files["run.json"]["notes"] if n.startswith("the same run")]
        assert said == [f"the same run as {folder / 'run.eval'} (run id RUN1): 2 sample(s) left out here, counted once, "
                        "from that file (`inspect log convert` leaves a run's log in both formats, .eval and .json)"]
        # The file's own count says its samples, not 0: "0 sample(s) ... 2 sample(s) left out here" read as a contradiction.
        head = next(n for n in files["run.json"]["notes"] if n.startswith("an Inspect log"))
        assert f": 2 sample(s), 0 counted here (2 the same run as {folder / 'run.eval'}), each epoch a lane; 0 call(s) read" in head
        head = next(n for n in files["run.eval"]["notes"] if n.startswith("an Inspect log"))
        assert ": 2 sample(s), each epoch a lane; 2 call(s) read" in head
    # Another run of the same task (its own run id), or the same sample run again (its own uuid): counted.
    other = _run("RUN2", run_value["samples"])
    (folder / "run.json").write_text(json.dumps(other))
    assert run_audit([folder]).totals.requests == 4
    with_uuid = _run("RUN1", [{**s, "uuid": f"u{s['id']}"} for s in run_value["samples"]])
    again = _run("RUN1", [{**s, "uuid": f"v{s['id']}"} for s in run_value["samples"]])
    (folder / "run.json").write_text(json.dumps(again))
    eval_zip(folder / "run.eval", with_uuid)
    assert run_audit([folder]).totals.requests == 4
    (folder / "run.json").write_text(json.dumps(with_uuid))
    assert run_audit([folder]).totals.requests == 2


def test_a_run_told_by_its_uuids_alone_names_no_run_id(tmp_path: Path) -> None:
    # review62c: two copies of a log whose samples have a uuid and whose eval names no run id
    # said "the same run as ... (run id None)".
    value = log("0.3.150", [{**sample(1, [event("openai/gpt-4o", usage(3000, 40, read=2048), 1)]), "uuid": "u1"}])
    value["eval"].pop("run_id", None)
    folder = tmp_path / "logs"
    folder.mkdir()
    (folder / "a.json").write_text(json.dumps(value))
    (folder / "b.json").write_text(json.dumps(value, indent=1))  # (bytes that differ: not one file twice)
    result = run_audit([folder])
    said = [n for f in result.files for n in f.notes if n.startswith("the same run")]
    assert result.totals.requests == 1 and len(said) == 1
    assert "None" not in said[0] and "(the same sample uuids)" in said[0]
