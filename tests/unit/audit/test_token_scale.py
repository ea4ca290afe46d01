"""Replayed bodies counted as the provider counted them (workloads/audit/core.py, TokenScale).

The byte-level models count their own tokens (a few bytes each); a provider's tokenizer counts
the same prompt otherwise (on a real grok run, 0.68-1.65 of grok's count segment by segment). A
replayed body's read, write and rest keep their places in the prompt and are counted in the
provider's tokens, learnt from each call's reported prompt and the lane's previous one.
"""

from __future__ import annotations

from pathlib import Path

from prefixbench.workloads.audit.core import TokenScale, run_audit
from tests.unit.audit.fixtures import write_jsonl
from tests.unit.audit.test_provider_usage import _call, _chat


def test_a_lane_start_is_counted_at_its_own_density() -> None:
    scale = TokenScale.learn(None, 2_000, 1_500, 0)
    assert (scale.tokens(0), scale.tokens(1_000), scale.tokens(2_000)) == (0, 750, 1_500)


def test_a_call_extending_the_previous_one_counts_that_prompt_as_it_was_reported() -> None:
    # The previous prompt: 2,000 model tokens, 1,500 reported; this one 2,600 and 2,100 (its new
    # 600 model tokens are 600 of the provider's: tool output counts denser).
    scale = TokenScale.learn((2_000, 1_500), 2_600, 2_100, 1_995)
    assert scale.tokens(2_000) == 1_500  # the previous prompt's end is where it was reported
    assert scale.tokens(1_995) == 1_496  # 1,995 x 1,500 / 2,000
    assert scale.tokens(2_300) == 1_800 and scale.tokens(2_600) == 2_100


def test_a_call_that_does_not_extend_the_previous_one_gets_its_own_density() -> None:
    # A compaction: it read 1,000 of the previous 2,000 model tokens, so the previous prompt's
    # end says nothing of this one.
    scale = TokenScale.learn((2_000, 1_500), 2_600, 1_300, 1_000)
    assert (scale.at, scale.tokens(1_000)) == (0, 500)


def test_a_grok_capture_is_predicted_in_groks_tokens(tmp_path: Path) -> None:
    # Grok counted the first prompt as 1,000 tokens and read 995 of it in the next call (all but
    # the template's closing tokens). The replayed bodies are longer in the model's own count
    # (1,220 and 1,235): uncounted, the read came out 1,219, 23% above the report.
    url = "https://api.x.ai/v1/chat/completions"
    calls = [_call(0, url, "grok-code-fast-1", _chat(1_000, 0, 20)), _call(1, url, "grok-code-fast-1", _chat(1_010, 995, 20))]
    rows = run_audit([write_jsonl(tmp_path / "grok.jsonl", calls)]).rows
    assert [row.predicted_by for row in rows] == ["body", "body"]
    assert [row.predicted_cache_read for row in rows] == [0, 999]
    assert rows[1].read_within and rows[1].predicted_uncached == 11
