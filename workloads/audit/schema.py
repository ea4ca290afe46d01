"""The audit record: what ``audit --format json`` writes (schema 6), what report.html draws and
what ``compare`` reads, declared once.

The object holds ``schema`` (:data:`SCHEMA_VERSION`) and one section a part of the audit, each a
list of records (``totals``: one record) whose fields, in order, are declared here: the JSON
writer (:func:`section_record`) writes exactly these, report.html reads them, and ``compare``
compares a lane's and the totals' figures under the threshold each declares (a cause's figures
are shown, never gated: a cause's share moves whenever another one does). ``notes`` (lines) ends
the object; ``--what-if`` adds ``what_if``, which compare does not read.
"""

from __future__ import annotations

from decimal import Decimal

from prefixbench.workloads.fields import Field

#: The audit JSON's ``schema``. 2: a dollar figure of a unit none of whose requests is priced is
#: null (1 wrote 0.0 there), as are a fix's and a loss class's unknown dollars, and a write count
#: no request gives (1 wrote 0). 3: the lost dollars of a unit none of whose requests reports its
#: cache use (and none is a request-body log's predicted one) are null (2 wrote 0.0 there), and a
#: unit counts those requests (``unseen_requests``: a unit with some sums the others' loss only).
#: 4: a compaction whose request reports no cache use is ``unknown`` (3 judged it ``warm``), its
#: ``lost_usd`` and ``warm_cost_usd`` null (3 wrote 0.0 and its cost there); a request's
#: ``lost_tokens`` is null where nothing tells its loss (``unseen_requests``: 3 wrote 0 there, as
#: its ``lost_usd`` was already null); a compaction's ``predicted`` says its ``cache_read`` is the
#: cache model's prediction (3 gave it as if reported), and one the log shows only by a prompt
#: that shrank is listed where the request reports no cache use (``unknown``).
#: 5: a miss two causes share (a compaction after an expired head) names its second cause and that
#: cause's part of its loss (``secondary_cause``, ``secondary_loss_class``, ``secondary_lost_tokens``,
#: ``secondary_lost_usd``), and the causes and the loss split count that part under the second
#: cause and its class (4 gave the leading cause the whole loss); a cause counts those misses
#: (``shared_requests``); each agreement record scores the server's reason against the audit's own
#: cause in ``verdict`` (``agrees``, ``names-more``, ``disagrees``, ``no-miss``, ``unscored``),
#: its ``agree`` is true for ``names-more`` too (4 left ``unavailable`` with a cause null), and the
#: calls a server labelled that did not miss are listed (``no-miss``; 4 left them out).
#: 6: a recommendation that, re-simulated, saves nothing on the log has ``rank`` null and comes
#: after the ranked ones (5 ranked every recommendation, those too); the loss split's classes are
#: each the exact sum of their requests' dollars (5 rounded them to the cent, adjusted to add up).
#: A field added beside the others, which changes no figure an earlier schema wrote (a request's
#: ``path``, a request's and a model's ``service``), keeps the number.
SCHEMA_VERSION = 6
#: The schemas ``compare`` reads (a reader refuses another): 1 is an audit.json saved before 2,
#: whose 0.0 dollars of a unit none of whose requests is priced are read as unknown; 1 and 2,
#: saved before 3, whose 0.0 lost dollars of a lane (or the totals) with no reported cache read
#: and no lost tokens are read as not reported. 4 changes the requests' rows and the
#: compactions only: compare reads neither. 5 moves a shared miss's second part between the
#: causes it compares, and adds their ``shared_requests`` (an older file has none: 0). 6 changes
#: the recommendations' ranks and the loss split's precision only: compare reads neither.
READ_SCHEMAS = (1, 2, 3, 4, 5, 6)
#: What a reported count's null says (no request of the unit reports it: ``compare`` shows this,
#: never a 0; a write count where no request's usage gives one, an OpenAI-shaped usage's).
NOT_REPORTED = "not reported"


def _figure(name: str, type_: str = "int", **kwargs: object) -> Field:
    return Field(name, type_, "figure", **kwargs)  # type: ignore[arg-type]


#: One request (also the columns of audit.csv).
REQUEST_FIELDS: tuple[Field, ...] = (
    Field("file", "str", "key"),
    Field("lane", "str", "key"),
    Field("lane_kind", "str"),
    Field("index", "int"),
    Field("line", "int"),
    Field("timestamp", "str?"),
    Field("provider", "str"),
    Field("model", "str"),
    Field("reported_cache_read", "int?"),
    Field("reported_cache_write", "int?"),
    Field("reported_cache_write_1h", "int?"),
    Field("reported_uncached", "int?"),
    Field("reported_output", "int?"),
    Field("predicted_cache_read", "int"),
    Field("predicted_cache_write", "int"),
    Field("predicted_uncached", "int"),
    Field("expected_cache_read", "int"),
    Field("lost_tokens", "int?"),
    Field("cause", "str?"),
    Field("evidence", "str?"),
    Field("detail", "str"),
    Field("cost_usd", "usd?"),
    Field("lost_usd", "usd?"),
    Field("predicted_by", "str"),
    Field("identity", "str"),
    Field("gap_ms", "int?"),
    Field("inferred_cause", "str?"),
    Field("server_reason", "str?"),
    Field("loss_class", "str?"),
    Field("location", "str"),
    Field("path", "str"),
    Field("secondary_cause", "str?"),
    Field("secondary_loss_class", "str?"),
    Field("secondary_lost_tokens", "int?"),
    Field("secondary_lost_usd", "usd?"),
    # The service of the maker's models it went to where the log names one (Azure OpenAI, with
    # the deployment the URL names; Vertex AI...), else null.
    Field("service", "str?"),
)

#: One lane of one file: what was reported beside what the cache model predicted.
LANE_FIELDS: tuple[Field, ...] = (
    Field("file", "str", "key"),
    Field("lane", "str", "key"),
    Field("kind", "str"),
    Field("model", "str"),
    _figure("requests"),
    _figure("reported_cache_read", "int?", null=NOT_REPORTED),
    _figure("reported_cache_write", "int?", gate="written", null=NOT_REPORTED),
    _figure("reported_uncached", "int?", gate="uncached", null=NOT_REPORTED),
    _figure("reported_output", "int?", null=NOT_REPORTED),
    _figure("predicted_cache_read"),
    _figure("predicted_cache_write"),
    _figure("predicted_uncached"),
    _figure("read_within_3pct", attr="read_within"),
    _figure("hit_ratio", "ratio", gate="hit", worse="drop"),
    _figure("lost_tokens", "int?"),
    _figure("cost_usd", "usd?", gate="usd"),
    _figure("lost_usd", "usd?", gate="usd", null=NOT_REPORTED),
    _figure("head_tokens", "int?"),
    # Requests in none of its dollars, as the totals count them (shown by compare, never gated).
    _figure("unpriced_requests"),
    _figure("unpriced_no_usage"),
    _figure("ranged_requests"),
    # Requests whose loss nothing tells (no cache use reported, no prediction from a logged body):
    # all of them, and ``lost_usd`` is null (not reported); some, and it sums the others only.
    _figure("unseen_requests"),
    # Of the unpriced requests with usage, those an engine of the user's served (no vendor bills them).
    _figure("self_hosted_requests"),
)

#: One cause of misses: shown by compare, never gated (``unpriced_requests``: its misses that
#: lost tokens no dollar figure holds; ``shared_requests``: the misses another cause leads whose
#: loss it shares, not in ``requests``, their part in its tokens and dollars).
CAUSE_FIELDS: tuple[Field, ...] = (
    Field("cause", "str", "key"),
    _figure("requests"),
    _figure("lost_tokens"),
    _figure("lost_usd", "usd?"),
    _figure("unpriced_requests"),
    _figure("shared_requests"),
)

#: The whole audit (``input`` is the uncached input; a count null where no request reports it,
#: ``lost_usd`` null where no request is priced or none reports its cache use, as a group's).
TOTALS_FIELDS: tuple[Field, ...] = (
    _figure("requests"),
    _figure("input", "int?", gate="uncached", null=NOT_REPORTED),
    _figure("output", "int?", null=NOT_REPORTED),
    _figure("cache_read", "int?", null=NOT_REPORTED),
    _figure("cache_write", "int?", gate="written", null=NOT_REPORTED),
    _figure("cache_write_1h", "int?", gate="written", null=NOT_REPORTED),
    _figure("cost_usd", "usd?", gate="usd"),
    _figure("lost_usd", "usd?", gate="usd", null=NOT_REPORTED),
    _figure("hit_ratio", "ratio", gate="hit", worse="drop"),
    _figure("cache_create_usd", "usd?"),
    _figure("storage_usd", "usd?"),
    _figure("unpriced_requests"),
    # Of those, the requests with no usage to price (the rest: a model with no price, or a log
    # that sums cache reads and writes: ranged_requests).
    _figure("unpriced_no_usage"),
    # Of those, the requests whose log sums their cache reads and writes: priced as a range only.
    _figure("ranged_requests"),
    _figure("ranged_low_usd", "usd"),
    _figure("ranged_high_usd", "usd"),
    # Requests whose loss nothing tells (no cache use reported, no prediction from a logged body):
    # all of them, and ``lost_usd`` is null (not reported); some, and it sums the others only.
    _figure("unseen_requests"),
    # The prompt and output tokens the files' own lengths give where no request reports usage (a
    # block-hash trace's in and out: the headline's "prompts N tokens and output M"), summed where
    # every file gives them; null otherwise.
    _figure("logged_prompt_tokens", "int?"),
    _figure("logged_output_tokens", "int?"),
)

#: One model: tokens and dollars (``priced``: whether the price table has a row for it; its
#: requests in no dollar figure counted as the totals count them).
MODEL_FIELDS: tuple[Field, ...] = (
    Field("provider", "str", "key"),
    Field("model", "str", "key"),
    Field("requests", "int"),
    Field("input", "int?"),
    Field("output", "int?"),
    Field("cache_read", "int?"),
    Field("cache_write", "int?"),
    Field("cost_usd", "usd?"),
    Field("lost_usd", "usd?"),
    Field("priced", "bool"),
    Field("unpriced_requests", "int"),
    Field("unpriced_no_usage", "int"),
    Field("ranged_requests", "int"),
    Field("unseen_requests", "int"),
    # Of the unpriced requests with usage, those an engine of the user's served (no vendor bills them).
    Field("self_hosted_requests", "int"),
    # The service of the maker's models its requests went to (null: none names one); where not
    # all went to the one service, each with its count: ``Azure OpenAI deployment 'a', 2 req; ...``.
    Field("service", "str?"),
)

#: One log file: its format and how well the model predicted its reads.
FILE_FIELDS: tuple[Field, ...] = (
    Field("file", "str", "key"),
    Field("format", "str"),
    Field("requests", "int"),
    Field("read_within_3pct", "int", attr="read_within"),
    Field("mean_abs_read_error", "ratio?"),
    Field("skipped", "int"),
    Field("cost_usd", "usd?"),
    Field("lost_usd", "usd?"),
    Field("unpriced_requests", "int"),
    Field("unpriced_no_usage", "int"),
    Field("ranged_requests", "int"),
    Field("unseen_requests", "int"),
    # Of the unpriced requests with usage, those an engine of the user's served (no vendor bills them).
    Field("self_hosted_requests", "int"),
    # The file's own prompt and output lengths summed, where it gives them for every request and
    # reports no usage (a block-hash trace's in and out); null otherwise.
    Field("logged_prompt_tokens", "int?"),
    Field("logged_output_tokens", "int?"),
    Field("notes", "texts"),
)

#: The server's miss reasons against the audit's causes (``audit_cause`` ``no miss`` where it finds
#: none): ``verdict`` one of causes.VERDICTS, ``agree`` true where the two are consistent (the same
#: cause, or the audit names more), false where they disagree, null where nothing is scored.
AGREEMENT_FIELDS: tuple[Field, ...] = (
    Field("server_reason", "str", "key"),
    Field("audit_cause", "str", "key"),
    Field("requests", "int"),
    Field("agree", "bool?"),
    Field("verdict", "str"),
)

#: The lost dollars in three classes, each the exact sum of its requests' (they add up to
#: ``lost_usd``, as summing the requests by ``loss_class`` does): one record.
LOSS_SPLIT_FIELDS: tuple[Field, ...] = (
    Field("lost_usd", "usd?"),
    Field("recoverable_usd", "usd?"),
    Field("unavoidable_usd", "usd?"),
    Field("unknown_usd", "usd?"),
    Field("recoverable_requests", "int"),
    Field("unavoidable_requests", "int"),
    Field("unknown_requests", "int"),
    # Of those, the requests that lost tokens no dollar figure holds (no price, a range only).
    Field("recoverable_unpriced", "int"),
    Field("unavoidable_unpriced", "int"),
    Field("unknown_unpriced", "int"),
    # The misses another class leads whose loss each class shares: not in its requests.
    Field("recoverable_shared", "int"),
    Field("unavoidable_shared", "int"),
    Field("unknown_shared", "int"),
)

#: What to change, best first: one re-simulated fix each (``saved_usd`` null: the log cannot
#: re-simulate it, and ``detail`` says how to record one that can); ``rank`` null: the fix saves
#: nothing on the log, listed after the ranked ones, not ranked (``detail`` says why).
RECOMMENDATION_FIELDS: tuple[Field, ...] = (
    Field("rank", "int?"),
    Field("fix", "str", "key"),
    Field("pattern", "str"),
    Field("causes", "texts"),
    Field("requests", "int"),
    Field("lanes", "int"),
    Field("sessions", "int"),
    Field("agent", "str"),
    Field("change", "str"),
    Field("setting", "str?"),
    Field("source", "str?"),
    Field("saved_usd", "usd?"),
    Field("lost_usd", "usd?"),
    Field("assumption", "str"),
    Field("detail", "str"),
    Field("unpriced_requests", "int"),
    Field("inferred", "bool"),
)

#: One compaction the log shows, judged warm, cold or unknown (its cache use not reported;
#: ``kind``: call, after or shrink; ``warm_cost_usd``: what it would have cost had it read what
#: was cached before it).
COMPACTION_FIELDS: tuple[Field, ...] = (
    Field("file", "str", "key"),
    Field("lane", "str", "key"),
    Field("line", "int", "key"),
    Field("kind", "str"),
    Field("verdict", "str"),
    Field("cache_read", "int?"),
    Field("expected_cache_read", "int?"),
    Field("prompt", "int?"),
    Field("cost_usd", "usd?"),
    Field("lost_usd", "usd?"),
    Field("warm_cost_usd", "usd?"),
    Field("cause", "str?"),
    Field("detail", "str"),
    # Its cache_read is the cache model's prediction (a request-body log with no usage), not reported.
    Field("predicted", "bool"),
)

#: One session (a log file) or one UTC day of requests, summed (``key``: the file, or the day
#: as ``YYYY-MM-DD``; ``first`` / ``last``: the earliest and latest request times; its requests
#: in no dollar figure counted as the totals count them).
#: A session's record only, and only where true: its key, its main transcript, is not among the
#: files read (only transcripts naming it as their session's are: a Claude Code session's
#: subagents' without its ``<session>.jsonl``). Absent elsewhere, so a session read whole is
#: written as before (added beside the others, schema 6 kept).
MAIN_ABSENT_FIELD = "main_transcript_absent"
#: A file's record only, and only where it is part of another file's session (``AuditResult.session_of``,
#: ``FileSummary.session``: a Claude Code subagent's or compaction agent's transcript): that session's
#: key, its main transcript, so report.html counts sessions as the terminal does. Absent on a file
#: that is a session of its own, so such a file is written as before (added, schema 6 kept).
FILE_SESSION_FIELD = "session"
ROLLUP_FIELDS: tuple[Field, ...] = (
    Field("key", "str", "key"),
    Field("first", "str?"),
    Field("last", "str?"),
    Field("requests", "int"),
    Field("lanes", "int"),
    Field("misses", "int?"),
    Field("input", "int?"),
    Field("cache_read", "int?"),
    Field("cache_write", "int?"),
    Field("hit_ratio", "ratio"),
    Field("cost_usd", "usd?"),
    Field("lost_usd", "usd?"),
    Field("lost_tokens", "int?"),
    Field("top_cause", "str?"),
    Field("rewrite_factor", "ratio?"),
    Field("unpriced_requests", "int"),
    Field("unpriced_no_usage", "int"),
    Field("ranged_requests", "int"),
    Field("unseen_requests", "int"),
    # Of the unpriced requests with usage, those an engine of the user's served (no vendor bills them).
    Field("self_hosted_requests", "int"),
)

#: One explicit cache the logs created (Gemini ``cachedContents``), priced: its tokens once at the
#: input price (``create_usd``) and its storage for ``kept_hours`` (null: the log does not show
#: how long it was kept, or the model has no storage price); ``reads``: the requests that read it.
EXPLICIT_CACHE_FIELDS: tuple[Field, ...] = (
    Field("file", "str", "key"),
    Field("line", "int", "key"),
    Field("name", "str"),
    Field("provider", "str"),
    Field("model", "str"),
    Field("tokens", "int"),
    Field("created", "str?"),
    Field("kept_hours", "ratio?"),
    Field("ended_by", "str"),
    Field("reads", "int"),
    Field("read_tokens", "int"),
    Field("create_usd", "usd?"),
    Field("storage_usd", "usd?"),
)

#: What report.html's embedded data adds as ``requests_shown`` when it holds only the worst
#: requests (an audit past the page's cap): how many it holds, of how many, and the files beside
#: the page that hold every one. Never in ``--format json``.
REQUESTS_SHOWN_FIELDS: tuple[Field, ...] = (
    Field("shown", "int"),
    Field("total", "int"),
    Field("every_request_in", "texts"),
)

#: The sections of the object after ``schema``, in order, with their fields.
SECTIONS: dict[str, tuple[Field, ...]] = {
    "loss_split": LOSS_SPLIT_FIELDS,
    "recommendations": RECOMMENDATION_FIELDS,
    "requests": REQUEST_FIELDS,
    "lanes": LANE_FIELDS,
    "causes": CAUSE_FIELDS,
    "totals": TOTALS_FIELDS,
    "models": MODEL_FIELDS,
    "files": FILE_FIELDS,
    "agreement": AGREEMENT_FIELDS,
    "compactions": COMPACTION_FIELDS,
    "sessions": ROLLUP_FIELDS,
    "days": ROLLUP_FIELDS,
    "explicit_caches": EXPLICIT_CACHE_FIELDS,
}
#: The sections ``compare`` reads, and the unit each record of one is.
COMPARED_SECTIONS = {"lanes": "lane", "totals": "totals", "causes": "cause"}
#: The fields of each unit compare makes of an audit.
UNIT_FIELDS: dict[str, tuple[Field, ...]] = {unit: SECTIONS[section] for section, unit in COMPARED_SECTIONS.items()}


def json_value(field: Field, value: object) -> object:
    """A field's value as the JSON writes it: dollars as floats, ratios rounded to 6 places,
    lists of lines as lists."""
    if value is None:
        return None
    match field.type:
        case "usd" | "usd?":
            assert isinstance(value, Decimal | float | int)
            return float(value)
        case "ratio" | "ratio?":
            assert isinstance(value, float | int)
            return round(value, 6)
        case "texts":
            assert isinstance(value, tuple | list)
            return list(value)
        case _:
            return value


def section_record(fields: tuple[Field, ...], obj: object) -> dict[str, object]:
    """One record of a section: every declared field of ``obj``, in order (as :func:`json_value`
    writes each; a field whose value is written as it is costs no call, since a section is
    written once a request)."""
    plan = _PLANS.get(id(fields))
    if plan is None or plan[0] is not fields:
        plan = _PLANS[id(fields)] = (fields, [(f.name, f.source, f if f.type in _CONVERTED else None) for f in fields])
    record: dict[str, object] = {}
    for name, source, converted in plan[1]:
        value = getattr(obj, source)
        record[name] = value if converted is None or value is None else json_value(converted, value)
    return record


#: The field types :func:`json_value` converts (every other is written as it is).
CONVERTED_TYPES = _CONVERTED = frozenset({"usd", "usd?", "ratio", "ratio?", "texts"})
#: Per tuple of fields (by identity, the tuple kept beside its plan): each field's name, the
#: attribute it is read from, and the field when its value is converted.
_PLANS: dict[int, tuple[tuple[Field, ...], list[tuple[str, str, Field | None]]]] = {}
