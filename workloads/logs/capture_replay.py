"""Replay a captured Anthropic session through the ``anthropic`` cache model, side by side with
what the provider reported: cache read, cache write and uncached input per request.

The capture's acceptance figures are computed here too (:func:`capture_summary`): the share of
main-agent requests after the first whose predicted cache read is within 3% of the reported
one, the compaction requests and the first main request after each, and the side calls.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import msgspec
from msgspec.structs import replace
from prefixbench.simulator.anthropic import (
    DEFAULT_CHARS_PER_TOKEN,
    AnthropicCache,
    prompt_chars,
)
from prefixbench.simulator.provider import SimulatedProvider
from prefixbench.simulator.render import render_request
from prefixbench.simulator.wire import Request
from prefixbench.workloads.logs.anthropic_capture import CallKind, Capture, read_capture
from prefixbench.workloads.logs.billing_header import without_cch
from prefixbench.workloads.logs.bodydiff import body_diff

#: Acceptance tolerances (tests/realdata/test_claude_trace.py checks them on the real capture).
MAIN_READ_TOLERANCE = 0.03
MAIN_READ_SHARE = 0.90
COMPACTION_TOLERANCE = 0.05
#: Calls below this reported prompt size are left out of the calibration: their fixed framing
#: (a few tokens the rendering cannot see) would dominate the ratio.
CALIBRATION_MIN_TOKENS = 1024


class CaptureRow(msgspec.Struct, frozen=True):
    """One captured request: the model's prediction beside the provider's report."""

    index: int
    line: int
    model: str
    kind: CallKind
    tick: int
    predicted_cache_read: int
    reported_cache_read: int
    predicted_cache_write: int
    reported_cache_write: int
    #: Input after the last breakpoint, the API's ``input_tokens``.
    predicted_uncached: int
    reported_uncached: int
    #: The 1 h part of the predicted write.
    predicted_cache_write_1h: int = 0
    #: Where the byte-exact reference saw the first new byte (``tools @ byte 0``...), or, when the
    #: body differs from the previous call of its kind, the audit's cause label and excerpt.
    divergence: str | None = None


def relative_error(predicted: int, reported: int) -> float | None:
    """``(predicted - reported) / reported``; 0 when both are 0, None when only reported is 0."""
    if reported == 0:
        return 0.0 if predicted == 0 else None
    return (predicted - reported) / reported


def within(predicted: int, reported: int, tolerance: float) -> bool:
    """Whether a prediction is within ``tolerance`` (relative) of the report; exact when it is 0."""
    return abs(predicted - reported) <= tolerance * reported


def calibrate_chars_per_token(capture: Capture) -> float:
    """The chars-per-token ratio that best predicts the reported prompt totals of a capture.

    Over the calls of at least ``CALIBRATION_MIN_TOKENS`` reported tokens, with ``x_i`` the
    rendered code points per reported token of call ``i``, a ratio ``r`` predicts each total
    with relative error ``x_i / r - 1``; the worst of them is smallest at the midpoint
    ``r = (min x + max x) / 2``. Minimax rather than least squares because what matters is that
    every prediction stays inside a tolerance band.
    """
    ratios = [
        prompt_chars(render_request(call.request)) / call.usage.prompt_tokens
        for call in capture.calls
        if call.usage.prompt_tokens >= CALIBRATION_MIN_TOKENS
    ]
    if not ratios:
        raise ValueError(f"{capture.path}: no call of at least {CALIBRATION_MIN_TOKENS} tokens to calibrate on")
    return (min(ratios) + max(ratios)) / 2


def replay_capture(path: str | Path, *, chars_per_token: float | None = None, torn: list[int] | None = None) -> list[CaptureRow]:
    """Replay a claude-trace capture through ``AnthropicCache``; one row per call, in file order.

    Calls are sent in order of their request time (ties in file order), each entry usable from
    its response time, so parallel calls behave as they did.

    Raises:
        UserError: for an unreadable or malformed capture (``FILE:LINE: what``).
    """
    return replay_calls(read_capture(path, torn), chars_per_token=chars_per_token)


def replay_calls(capture: Capture, *, chars_per_token: float | None = None, billing_header: str = "ignored") -> list[CaptureRow]:
    """Replay an already parsed capture (see :func:`replay_capture`). ``billing_header``:
    ``ignored`` (Anthropic's default, :mod:`~prefixbench.workloads.logs.billing_header`) replays
    each body with the ``cch`` of Claude Code's billing header block zeroed; ``keyed`` as sent."""
    # A captured request without cache_control was not cached by the API: no implicit marker.
    ratio = chars_per_token if chars_per_token is not None else DEFAULT_CHARS_PER_TOKEN
    cache = AnthropicCache(chars_per_token=ratio, auto_when_unmarked=None)
    provider = SimulatedProvider(cache=cache)
    rows: list[CaptureRow] = []
    previous: dict[str, Request] = {}
    for call in sorted(capture.calls, key=lambda call: (call.tick, call.index)):
        if billing_header == "ignored":
            call = replace(call, request=without_cch(call.request))
        seen = provider.send(call.request, call.tick, ready_tick=call.ready_tick)
        divergence = None if seen.divergence is None else seen.divergence.describe()
        before = previous.get(call.kind if call.kind != "compaction" else "main")
        if divergence is not None and before is not None:
            diff = body_diff(before, call.request)
            if diff is not None:
                divergence = f"{diff.cause}: {diff.detail}"
        previous[call.kind] = call.request
        rows.append(
            CaptureRow(
                index=call.index,
                line=call.line,
                model=call.request.envelope.model,
                kind=call.kind,
                tick=call.tick,
                predicted_cache_read=seen.cached_tokens,
                reported_cache_read=call.usage.cache_read,
                predicted_cache_write=seen.written_tokens,
                reported_cache_write=call.usage.cache_write,
                predicted_uncached=seen.prompt_tokens - seen.cached_tokens - seen.written_tokens,
                reported_uncached=call.usage.uncached,
                predicted_cache_write_1h=seen.written_long_tokens,
                divergence=divergence,
            )
        )
    return sorted(rows, key=lambda row: row.index)


class CompactionCheck(msgspec.Struct, frozen=True):
    """A compaction request, or the first main request after one, against the 5% tolerance."""

    index: int
    role: str  # "compaction" or "first after"
    read_error: float | None
    write_error: float | None
    read_ok: bool
    write_ok: bool


class CaptureSummary(msgspec.Struct, frozen=True):
    """The acceptance figures of a capture replay."""

    num_main_after_first: int
    num_main_read_within: int
    compaction_checks: tuple[CompactionCheck, ...]
    num_side: int
    num_side_predicted_uncached: int
    num_side_reported_uncached: int

    @property
    def main_read_share(self) -> float:
        """Share of main requests after the first with cache read within 3% (1.0 when none)."""
        return self.num_main_read_within / self.num_main_after_first if self.num_main_after_first else 1.0


def capture_summary(rows: Sequence[CaptureRow]) -> CaptureSummary:
    """Acceptance figures: main reads within 3%, compaction and first-after within 5%, side calls."""
    by_time = sorted(rows, key=lambda row: (row.tick, row.index))
    main = [row for row in by_time if row.kind == "main"]
    after_first = main[1:]
    checks: list[CompactionCheck] = []
    for row in by_time:
        if row.kind != "compaction":
            continue
        checks.append(_check(row, "compaction"))
        following = next((later for later in main if (later.tick, later.index) > (row.tick, row.index)), None)
        if following is not None:
            checks.append(_check(following, "first after"))
    side = [row for row in rows if row.kind == "side"]
    return CaptureSummary(
        num_main_after_first=len(after_first),
        num_main_read_within=sum(
            within(row.predicted_cache_read, row.reported_cache_read, MAIN_READ_TOLERANCE) for row in after_first
        ),
        compaction_checks=tuple(checks),
        num_side=len(side),
        num_side_predicted_uncached=sum(row.predicted_cache_read == row.predicted_cache_write == 0 for row in side),
        num_side_reported_uncached=sum(row.reported_cache_read == row.reported_cache_write == 0 for row in side),
    )


def _check(row: CaptureRow, role: str) -> CompactionCheck:
    return CompactionCheck(
        row.index,
        role,
        relative_error(row.predicted_cache_read, row.reported_cache_read),
        relative_error(row.predicted_cache_write, row.reported_cache_write),
        within(row.predicted_cache_read, row.reported_cache_read, COMPACTION_TOLERANCE),
        within(row.predicted_cache_write, row.reported_cache_write, COMPACTION_TOLERANCE),
    )
