"""Every cut of a JSON document that zero bytes end: refused for being cut, at the byte.

The machine stopped while the agent wrote its session (a Gemini CLI session, an ``opencode
export``, a mini-swe-agent trajectory, a Cline task's files): the file holds the document up to
some byte, then zero bytes to its end. Wherever that byte falls (inside a word, a number, a
``\\u`` escape, a string, between values), the reader says the document is cut short there,
never that it is malformed JSON. Each fixture is cut at every byte, pretty-printed as committed
and written on one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prefixbench.simulator.errors import UserError
from prefixbench.workloads.logs.records import iter_records

FIXTURES = Path(__file__).resolve().parents[1] / "unit" / "logs" / "fixtures"
DOCUMENTS = ["gemini-cli.json", "opencode.json", "swe-agent.json", "cline/anthropic-modelinfo/ui_messages.json",
             "cline/anthropic-modelinfo/api_conversation_history.json", "cline/passthrough-handlers/ui_messages.json"]


def _refusal(path: Path) -> str:
    try:
        for _ in iter_records(path, torn=[]):
            pass
    except UserError as exc:
        return str(exc)
    return "read"


@pytest.mark.parametrize("one_line", [False, True], ids=["pretty", "one-line"])
@pytest.mark.parametrize("name", DOCUMENTS)
def test_a_document_cut_at_any_byte_before_zeros_is_refused_as_cut_there(tmp_path, name, one_line):
    data = (FIXTURES / name).read_bytes()
    if one_line:
        data = json.dumps(json.loads(data)).encode()
    body = data.rstrip()
    path = tmp_path / Path(name).name
    wrong = []
    for cut in range(1, len(body)):
        path.write_bytes(body[:cut] + b"\0" * 100)
        said = _refusal(path)
        line = body[:cut].count(b"\n") + 1
        if not said.startswith(f"{path}:{line}: ") or f" is cut short at byte {cut}, where zero bytes" not in said:
            wrong.append((cut, body[max(0, cut - 12):cut], said[len(str(path)):]))
    assert not wrong, f"{len(wrong)} cuts of {len(body)} misreported, e.g. {wrong[:3]}"
