"""Text and JSON for ``prefixbench replay``: what each replayed request cost."""

from __future__ import annotations

import json

from prefixbench.reports.textable import text_lines, visible
from prefixbench.simulator.observe import Observation
from prefixbench.simulator.pricing import PriceRow, cost_of, format_usd, usd_sum


Label = tuple[str, str] | None


def _label(labels: list[Label] | None, index: int) -> Label:
    return labels[index] if labels is not None and index < len(labels) else None


def replay_records(
    observations: list[Observation], price: PriceRow | None = None, labels: list[Label] | None = None
) -> list[dict[str, object]]:
    """One JSON-ready object per request (with dollars split by part when ``price`` is given).

    ``labels`` (from :func:`prefixbench.workloads.logs.replay.divergence_labels`) add the audit's
    ``cause`` and ``detail`` to each divergence.
    """
    records = [
        {
            "index": o.index,
            "purpose": o.purpose,
            "model": o.envelope.model,
            "status": o.status,
            "error": o.error,
            "prompt_tokens": o.prompt_tokens,
            # A refused request never reached the cache: neither cached nor uncached.
            "cached_tokens": None if o.is_rejected else o.cached_tokens,
            "uncached_tokens": None if o.is_rejected else o.uncached_tokens,
            "extends_previous": o.extends_previous_conversation,
            "divergence": None
            if o.divergence is None
            else {
                "section": o.divergence.section,
                "message": o.divergence.message_idx,
                "block": o.divergence.block_idx,
                "byte": o.divergence.byte_offset,
                "cause": (_label(labels, n) or (None, None))[0],
                "detail": (_label(labels, n) or (None, None))[1],
            },
        }
        for n, o in enumerate(observations)
    ]
    if price is not None:
        for record, o in zip(records, observations):
            cost = cost_of(o, price)
            record.update(
                {
                    "uncached_input_usd": float(cost.uncached_input),
                    "cache_read_usd": float(cost.cache_read),
                    "cache_write_usd": float(cost.cache_write),
                    "output_usd": float(cost.output),
                    "storage_usd": float(cost.storage),
                    "total_usd": float(cost.total),
                }
            )
    return records


def replay_json(observations: list[Observation], price: PriceRow | None = None, labels: list[Label] | None = None) -> str:
    """``--format json``."""
    return json.dumps(replay_records(observations, price, labels), indent=2)


def _where(o: Observation, label: Label) -> str:
    if o.is_rejected:
        return f"rejected (HTTP {o.status}): {o.error}"
    if o.divergence is None:
        return "-"
    if label is None:
        return o.divergence.describe()
    return f"{label[0]}: {label[1]}"


def replay_table(
    observations: list[Observation], price: PriceRow | None = None, labels: list[Label] | None = None, profile: str = "lenient"
) -> str:
    """Aligned text: one line per request plus a total (and dollars when ``price`` is given).

    A request the ``profile`` refused reads ``400`` for its hit, ``-`` for cached and uncached,
    and its reason where the divergence goes; the total is over the accepted requests, and a
    line under the table says how many ``profile`` refused (under a strict profile, none too)."""
    header = ["#", "purpose", "prompt", "cached", "uncached", "hit", "extends", "first divergence"]
    if price is not None:
        header.insert(6, "cost")
    rows = [
        [
            str(o.index),
            o.purpose,
            f"{o.prompt_tokens:,}",
            "-" if o.is_rejected else f"{o.cached_tokens:,}",
            "-" if o.is_rejected else f"{o.uncached_tokens:,}",
            str(o.status) if o.is_rejected else f"{o.hit_ratio * 100:.1f}%",
            "yes" if o.extends_previous_conversation else "no",
            _where(o, _label(labels, n)),
        ]
        for n, o in enumerate(observations)
    ]
    accepted = [o for o in observations if not o.is_rejected]
    refused = len(observations) - len(accepted)
    prompt = sum(o.prompt_tokens for o in accepted)
    cached = sum(o.cached_tokens for o in accepted)
    label = "all" if not refused else "accepted"
    rows.append([label, "", f"{prompt:,}", f"{cached:,}", f"{prompt - cached:,}", f"{(cached / prompt if prompt else 1) * 100:.1f}%", "", ""])
    right = {0, 2, 3, 4, 5}
    if price is not None:
        costs = [cost_of(o, price).total for o in observations]  # (a refused request is not billed)
        for row, o, cost in zip(rows, [*observations, None], [*costs, usd_sum(costs)]):
            row.insert(6, "-" if o is not None and o.is_rejected else format_usd(cost))
        right.add(6)
    lines = list(text_lines(header, rows[:-1], right, footer=rows[-1:]))  # the total under a second ruler
    if refused:
        first = next(o for o in observations if o.is_rejected)
        lines.append(visible(f"{profile} rejected {refused:,} of {len(observations):,} requests (HTTP 400): they never reached "
                             f"the cache and are in no total; the first, #{first.index}: {first.error}"))
    elif profile != "lenient":
        lines.append(f"{profile} accepted every request ({len(observations):,})")
    return "\n".join(lines)
