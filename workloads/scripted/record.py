"""Record a run's requests as a chat-completions log, the format ``check --trace`` and ``replay`` read.

Each request the provider received becomes one line, in send order, with ``purpose`` and the
durable ``rewrites`` the engine declared before it, so a recorded run is judged by
``check --trace`` as the run itself would be.
"""

from __future__ import annotations

import json
from pathlib import Path

import msgspec

from prefixbench.simulator.errors import UserError
from prefixbench.simulator.provider import Validator
from prefixbench.simulator.wire import Block, Request
from prefixbench.workloads.scripted.base import Run
from prefixbench.workloads.logs.chat_completions import request_body
from prefixbench.workloads.scripted.registry import execute, make_workload, profile_options, validator_for


class RequestLog(msgspec.Struct):
    """A validator that keeps every request the provider checks (in order), deferring to ``inner``."""

    inner: Validator | None = None
    requests: list[Request] = msgspec.field(default_factory=list)

    def check(self, request: Request) -> str | None:
        """Keep the request, then ask the inner validator."""
        self.requests.append(request)
        return None if self.inner is None else self.inner.check(request)

    def accepted(self, request: Request, reply_blocks: tuple[Block, ...]) -> None:
        """Tell the inner validator."""
        if self.inner is not None:
            self.inner.accepted(request, reply_blocks)


def record_run(
    workload_name: str, window: int, preset: str, engine: str | None = None, profile: str = "lenient",
    options: dict[str, object] | None = None,
) -> tuple[Run, list[Request]]:
    """Run one workload and return the run with every request it sent."""
    workload = make_workload(workload_name, window, **profile_options(workload_name, profile), **(options or {}))
    log = RequestLog(validator_for(workload, profile))
    run = execute(workload, preset, engine=engine, validator=log, profile=profile)
    return run, log.requests


def write_recorded(path: Path, run: Run, requests: list[Request]) -> int:
    """Write the log, one body per line; returns the number of lines (UserError if unwritable)."""
    lines = [
        json.dumps(request_body(request, observation.rewrites_since_previous), ensure_ascii=False, separators=(",", ":"))
        for request, observation in zip(requests, run.observations, strict=True)
    ]
    try:
        path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    except OSError as exc:
        raise UserError(f"{path}: cannot write ({exc.strerror})") from None
    return len(lines)
