"""Fuzz the log records of an OpenTelemetry file (workloads/logs/formats/otel.py): the JavaScript
SDK's serialized records (GitHub Copilot Chat's file exporter) and OTLP's ``resourceLogs``, with
any time, span context, event name, usage and resource (its service.name), between metrics and empty objects, either read (each
inference event with usage one call, no other record one) or are refused in one line naming the
file; never another exception."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz.harness import fuzz_settings, loaded_or_refused

INFERENCE = "gen_ai.client.inference.operation.details"
COUNTS = st.one_of(st.integers(0, 10**7), st.integers(-2, -1), st.none(), st.sampled_from(["12", "x", ""]), st.booleans(), st.floats(0, 5))
EVENTS = st.one_of(st.sampled_from([INFERENCE, "copilot_chat.agent.turn", ""]), st.none(), st.integers())
TIMES = st.one_of(st.tuples(st.integers(-1, 2 * 10**9), st.integers(-1, 10**9)).map(list), st.none(), st.just([0, 0]), st.text(max_size=3),
                  st.lists(st.integers(0, 10), max_size=3))
ATTRIBUTES = st.fixed_dictionaries(
    {}, optional={"event.name": EVENTS, "gen_ai.usage.input_tokens": COUNTS, "gen_ai.usage.output_tokens": COUNTS,
                  "gen_ai.usage.cache_read.input_tokens": COUNTS, "gen_ai.usage.cache_write.input_tokens": COUNTS, "gen_ai.response.model": st.sampled_from(["claude-opus-4-6", "gpt-4o-mini", ""])},
)
SDK_RECORD = st.fixed_dictionaries(
    {"hrTime": TIMES, "attributes": ATTRIBUTES, "instrumentationScope": st.just({"name": "copilot-chat"})},
    optional={"spanContext": st.one_of(st.fixed_dictionaries({"traceId": st.text(max_size=4)}), st.none(), st.integers()),
              "resource": st.one_of(st.just({"_rawAttributes": [["session.id", "w"]]}), st.just({"_rawAttributes": [1, ["session.id"]]}), st.none(),
                                    st.just({"_rawAttributes": [["service.name", "a"], ["service.name"]]}), st.just({"_rawAttributes": [["service.name", 3]]}))},
)
OTLP_RECORD = st.fixed_dictionaries(
    {"attributes": ATTRIBUTES.map(lambda a: [{"key": k, "value": {"intValue": str(v)} if isinstance(v, int) else {"stringValue": v}} for k, v in a.items()])},
    optional={"timeUnixNano": st.one_of(st.integers(-1, 2 * 10**18).map(str), st.none(), st.text(max_size=3)), "traceId": st.text(max_size=4),
              "eventName": EVENTS},
)
#: A resource naming its service (who emitted the records: a missing write attribute is 0 where
#: another record of that service names one), or naming it oddly, or not at all.
SERVICE = st.one_of(st.none(), st.just({}), st.sampled_from(["a", "b", ""]).map(lambda n: {"attributes": [{"key": "service.name", "value": {"stringValue": n}}]}),
                    st.just({"attributes": [{"key": "service.name", "value": {"intValue": "4"}}]}), st.just({"attributes": {"service.name": ["x"]}}))
LINES = st.lists(st.one_of(SDK_RECORD, st.just({}), st.just({"resource": {}, "scopeMetrics": []}),
                           st.tuples(st.lists(OTLP_RECORD, max_size=3), SERVICE).map(
                               lambda p: {"resourceLogs": [{"resource": p[1], "scopeLogs": [{"logRecords": p[0]}]}]})),
                 min_size=1, max_size=5)


def test_any_log_records_read_as_calls_or_are_refused_in_one_line(importer_examples):
    @fuzz_settings(importer_examples)
    @given(lines=LINES)
    def case(lines) -> None:
        requests = loaded_or_refused(lines, "otel.jsonl")
        if requests is None:
            return
        records = [line for line in lines if "hrTime" in line]
        records += [log for line in lines for block in line.get("resourceLogs", []) for scope in block["scopeLogs"] for log in scope["logRecords"]]
        assert 0 < len(requests) <= len(records)
        assert [r.seq for r in requests] == list(range(len(requests)))
        assert all(r.source_format == "otel" and r.usage is not None for r in requests)
        # Writes unknown only where none was reported: such a call holds no write.
        assert all(r.usage.cache_write == 0 for r in requests if not r.usage.writes_reported)

    case()
