"""Inspect AI's evaluation logs (UKGovernmentBEIS/inspect_ai): an ``.eval`` file (a zip) or a
``.json`` log (one object).

Both hold the same :class:`EvalLog` (``src/inspect_ai/log/_log.py``): ``{version, status, eval
{task, model, packages {inspect_ai}, ...}, plan, results, stats {model_usage}, samples [...]}``.
An ``.eval`` zip (``log/_recorders/eval.py``) keeps it in members: ``header.json`` (the log
without its samples; absent from a run still going, whose ``_journal/start.json`` holds the
eval), ``samples/<id>_epoch_<n>.json`` (one :class:`EvalSample` each), ``summaries.json``,
``_journal/summaries/<n>.json`` and ``reductions.json`` (not read). Members are deflated, or
zstd-compressed (method 93, multi-frame) by later releases; both are read.

A sample's ``events`` (``transcript.events``, with ``content`` beside them, in the logs of
inspect_ai 0.3.25 to 0.3.42, August to October 2024) hold one ``ModelEvent`` per model call (``event/_model.py``): ``{event: "model", model,
input, tools, config, output {usage}, cache, timestamp, completed, working_start, working_time,
call, uuid}``. Each such event with a usage is a call, in the order the sample lists them; an
event whose ``cache`` is ``"read"`` was answered from Inspect's own local cache (no provider
call: skipped, said so), and an event without usage (the call failed) is skipped too. Events
nested in another event's ``events`` (the tool and subtask events of early logs) are read in
place; an event whose ``uuid`` was already read is not read again.

From inspect_ai 0.3.195 (#3374, March 2026, ``log/_condense.py``, ``event/_pool.py``) a sample
is written condensed: each message is kept once, in the sample's ``events_data.messages``, and
a model event's ``input`` is ``[]`` beside ``input_refs``, ranges ``[start, end)`` of that list
in order; the input is rebuilt from them (a range outside the list is refused in one line).
The ``call.request`` messages are pooled the same way (``events_data.calls``, ``call.call_refs``),
but the provider's wire request is not read, so neither is that pool.

A member is decoded whole: one that decompresses past 256 MiB, or past 16 MiB at more than 400
times its compressed size (a zip bomb; Inspect's JSON deflates 5 to 20 times), is refused in one
line as soon as it is, before more of it is held.

The usage is Inspect's :class:`ModelUsage` (``model/_model_output.py``): ``input_tokens``,
``output_tokens``, ``input_tokens_cache_read``, ``input_tokens_cache_write``,
``reasoning_tokens``. What ``input_tokens`` holds depends on the adapter and the release that
wrote the log (``eval.packages.inspect_ai``):

* Anthropic (``anthropic/...``): Anthropic's own ``input_tokens``, without the read and written
  parts, in every release (additive).
* OpenAI and the OpenAI-shaped adapters (``openai/``, ``openai-api/``, ``openrouter/``,
  ``together/``, ``vllm/``, ``ollama/``...), Grok, Bedrock and any adapter not modelled
  (:data:`OTHER`): before 0.3.184 the wire's prompt count, the
  cached part inside (subset); from 0.3.184 (inspect_ai #3341, February 2026, "input tokens now
  excludes cached tokens") the count without it (additive).
* Google (``google/``, ``vertex/``): the prompt count with the cached part inside before 0.3.208,
  without it from 0.3.208 (commit 5120cd87e, April 2026).

A development build of the release that changed a reading (``0.3.184.dev5+g...``) is read the
earlier way; a call whose read exceeds its ``input_tokens`` can only be the later one, and is
read so (marked, as any OpenAI-shaped record read with its count excluding the cached part).
A log naming no release is read the newest way. Adapters that report no cache count (Mistral,
Bedrock, Azure AI, early OpenAI releases) leave the two cache fields out: such a call's cache is
not reported. The exception is a release from 0.3.184 on of an adapter that counts reads
(OpenAI's Responses adapter leaves a count of zero out): there a missing count is a zero.

Who served a call is the adapter named before the model's first ``/``: ``anthropic``, ``openai``,
``google`` and ``vertex`` (Gemini), ``grok`` (xAI), ``bedrock``; any other (a gateway or a host
of open models: OpenRouter, Together, vLLM, Ollama...) is counted under provider ``unknown`` with
its full name, unpriced; an adapter that runs the model on an engine of the user's (``ollama``,
``vllm``, ``hf``...: :data:`~prefixbench.simulator.providers.vllm.INSPECT_ENGINES`) is kept as
the call's ``upstream``, so the audit says no vendor bills it (self-hosted). A service named next (:data:`SERVICES`) decides where it went:
``anthropic/bedrock/...`` is provider ``bedrock`` (Claude on Amazon Bedrock);
``anthropic/vertex/...`` and ``anthropic/azure/...`` are Anthropic's, with the service (Vertex AI,
Microsoft Foundry) named; ``openai/azure/...`` is OpenAI's on Azure OpenAI, named so. Each keeps
its maker's rules and list price, which the audit says.

A run kept in two files (``inspect log convert`` leaves its ``.eval`` and ``.json`` logs side by
side, whose bytes differ) is counted once: a sample is told apart by its ``uuid``, or, in a log
whose samples have none, by the eval's ``run_id`` and ``task_id`` with its ``id`` and ``epoch``
(:attr:`ImportContext.inspect_samples`); the file read first counts it, the other skips it and
names that file in a note.

Each sample and epoch is a lane; a call extends the previous call of the same model in its lane
(Inspect's agents resend the conversation), its head the model, the tools and the system
messages the event shows; it keeps the input messages it sends past those that previous call
sent, for the audit to locate a break on. A sample with no events (a log written before inspect_ai 0.3.25, August 2024,
or one whose events were left out) keeps only its ``model_usage`` totals: it is counted apart, never read as calls, and a
log none of whose samples holds a call is refused in one line saying so.
"""

from __future__ import annotations

import io
import re
import struct
import zipfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import NamedTuple

from prefixbench.simulator.errors import UserError
from prefixbench.simulator.providers import UNKNOWN, rules_for
from prefixbench.simulator.providers.base import count, subset_usage
from prefixbench.simulator.providers.hosts import azure_service
from prefixbench.simulator.providers.vllm import inspect_engine, ollama_cloud
from prefixbench.simulator.usage import Usage
from prefixbench.workloads.logs.formats.base import Evidence, ImportContext, LogFormat
from prefixbench.workloads.logs.formats.common import as_dict, head_digest, objects, parse_time_ms
from prefixbench.workloads.logs.jsonlines import json_object
from prefixbench.workloads.logs.history import make_message
from prefixbench.workloads.logs.reading import starts_with
from prefixbench.workloads.logs.records import Record
from prefixbench.workloads.logs.trace import NO_MODEL, FileSummary, LoggedMessage, Prefix, TraceRequest

NAME = "inspect-ai"
#: The zip's first bytes, and the members that make a zip an Inspect log.
ZIP_MAGIC = b"PK\x03\x04"
HEADER = "header.json"
START = "_journal/start.json"
#: A sample's member: ``samples/<id>_epoch_<n>.json``.
SAMPLE_MEMBER = re.compile(r"samples/(.+)_epoch_(\d+)\.json")
#: The zip compression method of zstd (Inspect's later releases write every member so).
ZIP_ZSTD = 93
#: Largest member read, decompressed (bytes): far above any sample's (the member is decoded whole,
#: so its bytes and the objects they make are held at once).
MAX_MEMBER_BYTES = 1 << 28
#: A member larger than :data:`RATIO_FLOOR` decompressed that inflates more than
#: :data:`MAX_RATIO` times its compressed size is refused as a zip bomb: Inspect's compact JSON
#: deflates about 5 to 20 times, while a run of one repeated byte deflates about 1,000 times.
MAX_RATIO = 400
RATIO_FLOOR = 1 << 24
#: Decompressed bytes read at a time (what is held beyond the bounds before a refusal).
_CHUNK = 1 << 20
#: The releases from which ``input_tokens`` excludes the cached part: the OpenAI-shaped adapters
#: and Grok, and Google's.
ADDITIVE_FROM = (0, 3, 184)
GOOGLE_ADDITIVE_FROM = (0, 3, 208)


class Adapter(NamedTuple):
    """What Inspect's adapter of a provider the audit models writes (the adapter's name is the
    model name's part before its first ``/``)."""

    #: The provider that serves its calls.
    provider: str
    #: The release from which its ``input_tokens`` excludes the cached part (None: always did).
    additive_from: tuple[int, ...] | None
    #: Whether it counts cache reads from that release on (a count left out is then a 0).
    counts_cache: bool = True
    #: The service of the maker's models the calls went to (:attr:`TraceRequest.service`), where
    #: it is not the provider's own API: ``Vertex AI``, ``Azure OpenAI``.
    service: str = ""


#: Inspect's adapters of the providers the audit models; any other adapter (a gateway, a host of
#: open models) reads as :data:`OTHER`.
ADAPTERS = {
    "anthropic": Adapter("anthropic", None),
    "openai": Adapter("openai", ADDITIVE_FROM),
    "google": Adapter("gemini", GOOGLE_ADDITIVE_FROM),
    "vertex": Adapter("gemini", GOOGLE_ADDITIVE_FROM),
    "grok": Adapter("xai", ADDITIVE_FROM),
    "bedrock": Adapter("bedrock", ADDITIVE_FROM, counts_cache=False),
}
OTHER = Adapter(UNKNOWN.name, ADDITIVE_FROM, counts_cache=False)
#: The services an adapter sends to when a model name's next part names one (``anthropic/bedrock/
#: us.anthropic.claude-sonnet-4-...``, ``openai/azure/gpt-4o``): Inspect's Anthropic adapter (its
#: ``service``, ``model/_providers/anthropic.py``) builds the Anthropic SDK's Bedrock, Vertex and
#: Foundry clients, whose usage is Anthropic's own (additive, cache counted); its OpenAI adapter's
#: ``azure/`` goes to Azure OpenAI. The model is the name past that part.
SERVICES = {
    ("anthropic", "bedrock"): Adapter("bedrock", None),
    ("anthropic", "vertex"): Adapter("anthropic", None, service="Vertex AI"),
    ("anthropic", "azure"): Adapter("anthropic", None, service="Microsoft Foundry"),
    ("openai", "azure"): Adapter("openai", ADDITIVE_FROM, service=azure_service(name="azure")),
}
#: The usage fields read, in the order the notes list them.
_FIELDS = ("input_tokens", "input_tokens_cache_read", "input_tokens_cache_write", "output_tokens")


def detect(value: dict) -> Evidence | None:
    """A ``.json`` Inspect log: an integer ``version``, an ``eval`` (:class:`EvalSpec`) naming
    its task and model and when it was ``created`` (strings, in every release since the first),
    and its ``samples`` or ``stats``. Another tool's ``{version, eval {task, model}, samples}``
    lacks the time."""
    spec = value.get("eval")
    if not isinstance(spec, dict) or not all(isinstance(spec.get(key), str) for key in ("task", "model", "created")):
        return None
    version = value.get("version")
    if isinstance(version, int) and not isinstance(version, bool) and ("samples" in value or "stats" in value):
        return Evidence.WRAPPER
    return None


def starts_as_zip(path: Path) -> bool:
    """Whether ``path``'s first bytes are a zip's: with ``--input inspect-ai``, such a file is read
    as an ``.eval`` log, whose reader says what it lacks."""
    return starts_with(path, ZIP_MAGIC)


def _zip(path: Path) -> zipfile.ZipFile | None:
    """``path`` opened as a zip when its first bytes say it is one (None: it is not)."""
    if not starts_with(path, ZIP_MAGIC):
        return None
    try:
        return zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        if path.suffix == ".eval":
            raise UserError(f"{path}: an Inspect .eval log that is not a readable zip ({str(exc)[:80]})") from None
        return None


def is_eval_log(path: Path) -> bool:
    """Whether ``path`` is an ``.eval`` Inspect log: a zip holding ``header.json`` or
    ``_journal/start.json``.

    Raises:
        UserError: a ``.eval`` file that starts as a zip and cannot be read as one.
    """
    if not path.is_file():
        return False
    zf = _zip(path)
    if zf is None:
        return False
    with zf:
        names = set(zf.namelist())
    return HEADER in names or START in names


def _raw_member(path: Path, info: zipfile.ZipInfo) -> bytes:
    """A member's compressed bytes, read past its local header (for a method zipfile lacks)."""
    with path.open("rb") as raw:
        raw.seek(info.header_offset)
        local = raw.read(30)
        if len(local) < 30 or local[:4] != ZIP_MAGIC:
            raise UserError(f"{path}: {info.filename}: no local header where the zip's directory puts it")
        name_len, extra_len = struct.unpack("<HH", local[26:30])
        raw.seek(info.header_offset + 30 + name_len + extra_len)
        data = raw.read(info.compress_size)
    if len(data) < info.compress_size:
        raise UserError(f"{path}: {info.filename}: the zip ends inside this member")
    return data


def _member(path: Path, zf: zipfile.ZipFile, info: zipfile.ZipInfo) -> dict:
    """A member's JSON object; else one line naming the member."""
    where = f"{path}: {info.filename}"
    if info.file_size > MAX_MEMBER_BYTES:
        raise UserError(f"{where}: larger than {MAX_MEMBER_BYTES:,} bytes decompressed (the zip says {info.file_size:,}): not read")
    try:
        if info.compress_type == ZIP_ZSTD:
            import zstandard  # (a dependency; imported here, as the zstd-compressed logs need it)

            with zstandard.ZstdDecompressor().stream_reader(io.BytesIO(_raw_member(path, info)), read_across_frames=True) as reader:
                data = _bounded(reader, info.compress_size, where)
        else:
            with zf.open(info) as member:
                data = _bounded(member, info.compress_size, where)
    except UserError:
        raise
    except NotImplementedError:
        raise UserError(f"{where}: compressed with a method audit cannot read (zip method {info.compress_type})") from None
    except Exception as exc:  # zlib.error, zstandard.ZstdError, BadZipFile (CRC), EOFError, OSError
        raise UserError(f"{where}: cannot be decompressed ({type(exc).__name__}: {str(exc)[:80]})") from None
    return json_object(data, where)


def _bounded(stream, compressed: int, where: str) -> bytearray:
    """A member's decompressed bytes, read a chunk at a time and refused in one line as soon as
    they pass :data:`MAX_MEMBER_BYTES`, or :data:`RATIO_FLOOR` and :data:`MAX_RATIO` times the
    ``compressed`` size (a zip bomb: a few MB inflating to a GB), before more is held."""
    data = bytearray()
    while chunk := stream.read(_CHUNK):
        data += chunk
        if len(data) > MAX_MEMBER_BYTES:
            raise UserError(f"{where}: decompresses to more than {MAX_MEMBER_BYTES:,} bytes: not read")
        if len(data) > RATIO_FLOOR and len(data) > MAX_RATIO * max(compressed, 1):
            raise UserError(f"{where}: inflates more than {MAX_RATIO} times its {compressed:,} compressed bytes (past "
                            f"{len(data):,} bytes read): a zip bomb, not an Inspect log's member; not read")
    return data  # (not copied to bytes: the decoder reads a bytearray as it is)


def _release(log: dict) -> tuple[tuple[int, ...] | None, bool, str]:
    """The inspect_ai release that wrote ``log``: its numbers (None: not logged), whether it is a
    development build before that release, and the version as logged."""
    version = as_dict(as_dict(log.get("eval")).get("packages")).get("inspect_ai")
    if not isinstance(version, str):
        return None, False, ""
    found = re.match(r"(\d+)\.(\d+)\.(\d+)", version)
    if found is None:
        return None, False, version[:40]
    return tuple(int(part) for part in found.groups()), ".dev" in version, version[:40]


def _from(release: tuple[int, ...] | None, dev: bool, first: tuple[int, ...]) -> bool:
    """Whether ``release`` is ``first`` or later (a development build of ``first`` is before it;
    a release not logged is taken as the newest)."""
    if release is None:
        return True
    return release > first or (release == first and not dev)


class _Log:
    """The calls of one Inspect log (its samples read one by one)."""

    def __init__(self, path: Path, log: dict, counted: dict[str, str] | None = None) -> None:
        self.path = path
        self.file = str(path)
        #: The samples counted so far in this audit, by identity, to their file (ImportContext's).
        self.counted_samples = counted if counted is not None else {}
        spec = as_dict(log.get("eval"))
        run, task = spec.get("run_id"), spec.get("task_id") or spec.get("eval_id")
        self.run = run if isinstance(run, str) and run else None
        self.task = str(task) if isinstance(task, str) and task else ""
        #: Samples left out as counted from another file (the same run): that file to how many.
        self.repeated: dict[str, int] = {}
        self.release, self.dev, self.version = _release(log)
        self.log_version = log.get("version")
        self.out: list[TraceRequest] = []
        self.skipped: list[tuple[int, str]] = []
        self.samples = 0
        self.without_events = 0
        self.local_cache = 0
        self.additive = 0
        self.subset = 0
        self.exclusive = 0
        self.unreported = 0
        self.condensed = 0
        self.unknown_hosts: dict[str, int] = {}
        self.engines: dict[str, int] = {}
        #: The calls' own sums and the samples' model_usage sums (of the samples read).
        self.counted = dict.fromkeys(_FIELDS, 0)
        self.logged = dict.fromkeys(_FIELDS, 0)
        self.seen: set[str] = set()

    def sample(self, value: object, line: int, where: str, place: str) -> None:
        """Read one sample's calls: ``where`` leads an error's line (``file:line: ``), ``place``
        is where the sample is (``samples[0].`` in a .json log, its member in a zip)."""
        if not isinstance(value, dict):
            raise UserError(f"{where}{place.rstrip('.:')}: a sample is not a JSON object")
        sid, epoch = str(value.get("id"))[:80], value.get("epoch", 1)
        lane = f"{sid}_epoch_{epoch}"
        events = value.get("events")
        base = "events"
        if events is None and isinstance(value.get("transcript"), dict):
            events, base = value["transcript"].get("events"), "transcript.events"
        key = self._identity(value, epoch)
        if key is not None and isinstance(events, list) and events:
            first = self.counted_samples.get(key)
            if first is not None and first != self.file:
                self.repeated[first] = self.repeated.get(first, 0) + 1
                self.skipped.append((line, f"sample {sid} epoch {epoch}: already counted from {first} (the same run: "
                                     f"{'sample uuid' if key.startswith('uuid:') else 'run id, task id, sample id and epoch'} "
                                     "equal)"))
                return
            if first is None:
                self.counted_samples[key] = self.file
        self.samples += 1
        if not isinstance(events, list) or not events:
            self.without_events += 1
            self.skipped.append((line, f"sample {sid} epoch {epoch}: no events, only the sample's model_usage totals: not read as calls"))
            return
        pool = as_dict(value.get("events_data")).get("messages")
        pool = pool if isinstance(pool, list) else None
        calls_before = len(self.out)
        last: dict[str, str] = {}
        sent: dict[str, int] = {}
        for event, at in _walk(events, base):
            if event.get("event") == "model":
                self._call(event, line, f"{where}{place}{at}", f"{place}{at}", lane, last, sent, pool)
        if len(self.out) > calls_before:
            for usage in as_dict(value.get("model_usage")).values():
                usage = as_dict(usage)
                for key in _FIELDS:
                    got = usage.get(key)
                    if isinstance(got, int) and not isinstance(got, bool):
                        self.logged[key] += got

    def _identity(self, value: dict, epoch: object) -> str | None:
        """What tells a sample apart across logs, as Inspect writes it: its ``uuid`` (a
        shortuuid, from the releases that write one), else the eval's ``run_id`` and ``task_id``
        with the sample's ``id`` and ``epoch`` (one run of a task holds each sample and epoch
        once); None where the log names no run id."""
        uuid = value.get("uuid")
        if isinstance(uuid, str) and uuid:
            return f"uuid:{uuid}"
        if self.run is None:
            return None
        return f"run:{self.run}/{self.task}/{value.get('id')}/{epoch}"

    def _call(self, event: dict, line: int, where: str, at: str, lane: str, last: dict[str, str], sent: dict[str, int],
              pool: list | None) -> None:
        """Read one model event (``last``: each model's last call in the lane, ``sent``: how many
        input messages it sent; ``pool``: the sample's ``events_data.messages``, which a condensed
        event's ``input_refs`` index)."""
        uuid = event.get("uuid")
        if isinstance(uuid, str) and uuid:
            if uuid in self.seen:
                return
            self.seen.add(uuid)
        if event.get("cache") == "read":
            self.local_cache += 1
            self.skipped.append((line, f"{lane}: {at}: answered from Inspect's local cache (cache: read): no provider call"))
            return
        logged = as_dict(event.get("output")).get("usage")
        if not isinstance(logged, dict):
            error = event.get("error")
            why = f" (error: {str(error)[:60]})" if isinstance(error, str) and error else ""
            self.skipped.append((line, f"{lane}: {at}: model call without usage{why}"))
            return
        name = event.get("model")
        if name is not None and not isinstance(name, str):
            raise UserError(f"{where}: model is not a string ({type(name).__name__})")
        name = name or NO_MODEL
        adapter, model = _served(name)
        provider = adapter.provider
        usage = self._usage(adapter, provider, logged, where)
        if usage.is_empty:
            self.skipped.append((line, f"{lane}: {at}: call with no tokens"))
            return
        for key in _FIELDS:
            self.counted[key] += count(logged.get(key), where, f"usage.{key}")
        engine = inspect_engine(name) if provider == UNKNOWN.name else ""
        if engine and not ollama_cloud(name, engine):  # (a cloud model of Ollama's runs in its cloud: billed by plan)
            self.engines[engine] = self.engines.get(engine, 0) + 1
        elif provider == UNKNOWN.name:
            host = name.split("/", 1)[0]
            self.unknown_hosts[host] = self.unknown_hosts.get(host, 0) + 1
        config = as_dict(event.get("config"))
        effort = config.get("reasoning_effort")
        envelope = (("effort", str(effort)[:20]),) if isinstance(effort, str) and effort else ()
        node = f"inspect:{self.file}#{at}"
        parent = last.get(name)
        messages = self._input(event, pool, where)
        added = _added(messages, sent.get(name, 0) if parent is not None else 0)
        self.out.append(TraceRequest(
            file=self.file, line=line, lane=lane, lane_kind="main", seq=len(self.out),
            sent_ms=parse_time_ms(event.get("timestamp"), where), ready_ms=None, provider=provider, model=model,
            envelope=envelope, usage=usage, prefix=Prefix(f"inspect:{name}:{_head(event.get('tools'), messages)}", node, parent, max(1, len(added))),
            messages=added,
            request_id=uuid if isinstance(uuid, str) and uuid else None, source_format=NAME,
            done_ms=parse_time_ms(event.get("completed"), where), path=at, service=adapter.service, upstream=engine,
        ))
        last[name] = node
        sent[name] = len(messages) if isinstance(messages, list) else 0

    def _input(self, event: dict, pool: list | None, where: str) -> object:
        """A call's input messages: its ``input``, or, in a condensed sample (inspect_ai 0.3.195 on,
        ``event/_pool.py``), the ``events_data.messages`` its ``input_refs`` ranges (``[start,
        end)``, in order) pick where its ``input`` is empty."""
        messages, refs = event.get("input"), event.get("input_refs")
        if refs is None or messages:
            return messages
        if not isinstance(refs, list):
            raise UserError(f"{where}: input_refs is not a list")
        if pool is None:
            raise UserError(f"{where}: input_refs, but the sample has no events_data.messages for them to index")
        rebuilt: list = []
        for ref in refs:
            if not (isinstance(ref, list) and len(ref) == 2 and all(isinstance(n, int) and not isinstance(n, bool) for n in ref)
                    and 0 <= ref[0] <= ref[1] <= len(pool)):
                raise UserError(f"{where}: input_refs holds {str(ref)[:40]}, not a [start, end) range of the sample's "
                                f"{len(pool):,} events_data.messages")
            rebuilt.extend(pool[ref[0]:ref[1]])
        self.condensed += 1
        return rebuilt

    def _usage(self, adapter: Adapter, provider: str, logged: dict, where: str) -> Usage:
        tokens_in = count(logged.get("input_tokens"), where, "usage.input_tokens")
        output = count(logged.get("output_tokens"), where, "usage.output_tokens")
        read = count(logged.get("input_tokens_cache_read"), where, "usage.input_tokens_cache_read")
        write = count(logged.get("input_tokens_cache_write"), where, "usage.input_tokens_cache_write")
        later = adapter.additive_from is None or _from(self.release, self.dev, adapter.additive_from)
        present = logged.get("input_tokens_cache_read") is not None or logged.get("input_tokens_cache_write") is not None
        # A count left out is a 0 only from the release on which the adapter leaves a zero out
        # (0.3.184; Google's and Vertex's 0.3.208); before it, and for an adapter that counts no
        # cache, a usage without either field did not report the cache (Anthropic's too: its
        # counts are the API's, ``None`` where the response had none).
        zero = adapter.counts_cache and _from(self.release, self.dev, adapter.additive_from or ADDITIVE_FROM)
        if not (present or zero):
            self.unreported += 1
            return Usage(uncached=tokens_in, output=output, cache_reported=False)
        if later:
            self.additive += 1
            return Usage(cache_read=read, cache_write_5m=write, uncached=tokens_in, output=output)
        bills_writes = rules_for(provider).bills_writes if provider != UNKNOWN.name else True
        usage = subset_usage(tokens_in, read, write, output, bills_writes=bills_writes,
                             excess=f"{where}: input_tokens_cache_read and input_tokens_cache_write exceed input_tokens ({tokens_in:,})")
        if usage.prompt_count:
            self.exclusive += 1
        else:
            self.subset += 1
        return usage

    def summary(self, extra: tuple[str, ...] = ()) -> tuple[list[TraceRequest], FileSummary]:
        if not self.out and not self.repeated:
            if not self.samples:
                raise UserError(f"{self.path}: an Inspect log with no sample (logged without its samples): only the eval's totals "
                                "(stats.model_usage), no call's usage to audit; audit a log written with its samples")
            if self.without_events == self.samples:
                raise UserError(f"{self.path}: an Inspect log (version {str(self.log_version)[:10]}) whose {self.samples} sample(s) hold "
                                "no events: only each sample's model_usage totals, no call's usage to audit")
        return self.out, FileSummary(self.file, NAME, len(self.out), tuple(self.skipped), (*self._notes(), *extra))

    def _notes(self) -> tuple[str, ...]:
        release = f"inspect_ai {self.version}" if self.version else "a release it does not name (read as the newest)"
        # (a sample another file of the same run counted is one of this file's too: said apart)
        repeated = sum(self.repeated.values())
        samples = (f"{self.samples + repeated} sample(s), {self.samples} counted here ("
                   + ", ".join(f"{n} the same run as {first}" for first, n in sorted(self.repeated.items())) + ")"
                   if repeated else f"{self.samples} sample(s)")
        notes = [f"an Inspect log (version {str(self.log_version)[:10]}, {release}): {samples}, each epoch a lane; "
                 f"{len(self.out)} call(s) read from its model events"]
        for first, n in sorted(self.repeated.items()):
            named = f" (run id {self.run})" if self.run else " (the same sample uuids)"
            notes.append(f"the same run as {first}{named}: {n} sample(s) left out here, counted once, from that "
                         "file (`inspect log convert` leaves a run's log in both formats, .eval and .json)")
        if self.additive:
            notes.append(f"{self.additive} call(s) read with input_tokens excluding the cache read and write (Inspect's Anthropic "
                         "adapter writes it so in every release, its OpenAI-shaped, Grok and Bedrock adapters from inspect_ai "
                         "0.3.184, its Google adapter from 0.3.208; adapters that write no cache count are read apart)")
        if self.subset:
            notes.append(f"{self.subset} call(s) read with input_tokens including the cached part (OpenAI-shaped adapters before "
                         "inspect_ai 0.3.184, Google's before 0.3.208): uncached = input - read")
        if self.exclusive:
            notes.append(f"{self.exclusive} call(s) of a release that counted the cached part inside input_tokens whose read exceeds "
                         "it: read with input_tokens excluding the cache")
        if self.condensed:
            notes.append(f"{self.condensed} model event(s) of condensed samples (inspect_ai 0.3.195 on): input rebuilt from "
                         "input_refs over the sample's events_data.messages")
        if self.unreported:
            notes.append(f"{self.unreported} call(s) whose usage has no cache count (the adapter wrote none): cache not reported")
        if self.unknown_hosts:
            hosts = ", ".join(f"{host} {n}" for host, n in sorted(self.unknown_hosts.items()))
            notes.append(f"calls through an adapter the audit does not model as a provider ({hosts}): counted under provider "
                         "unknown, unpriced")
        if self.engines:
            engines = ", ".join(f"{engine} {n}" for engine, n in sorted(self.engines.items()))
            notes.append(f"calls through an adapter that runs the model on an engine of the user's ({engines}): counted under "
                         "provider unknown, self-hosted: no bill")
        if self.local_cache:
            notes.append(f"{self.local_cache} model event(s) answered from Inspect's local cache (cache: read): no provider call, skipped")
        if self.out:
            shown = ", ".join(f"{key} {self.counted[key]:,}" + ("" if self.counted[key] == self.logged[key] else f" (Inspect's {self.logged[key]:,})")
                              for key in _FIELDS)
            notes.append(f"counted against the samples' own model_usage: {shown}")
        return tuple(notes)


def _walk(events: list, base: str, depth: int = 0) -> Iterator[tuple[dict, str]]:
    """Each event object of ``events`` with its index path, nested ``events`` read in place."""
    for index, event in enumerate(events):
        if not isinstance(event, dict):
            continue
        at = f"{base}[{index}]"
        yield event, at
        nested = event.get("events")
        if isinstance(nested, list) and depth < 8 and event.get("event") != "model":
            yield from _walk(nested, f"{at}.events", depth + 1)


def _served(name: str) -> tuple[Adapter, str]:
    """The adapter (and service) a model name of Inspect's (``adapter/model``,
    ``adapter/service/model``) is served by, and the model as priced: the name past the adapter
    and service for a provider the audit models, else the whole name."""
    first, _, rest = name.partition("/")
    adapter = ADAPTERS.get(first)
    if adapter is None or not rest:
        return OTHER, name
    second, _, model = rest.partition("/")
    service = SERVICES.get((first, second))
    if service is not None and model:
        return service, model
    return adapter, rest


def _added(messages: object, before: int) -> tuple[LoggedMessage, ...]:
    """The input messages a call sends past the ``before`` its model's previous call in the lane
    sent (the previous reply, tool results, a user turn), system messages aside: where the audit
    locates a break (a condensed event's input rebuilt from its ``input_refs`` first: ``_Log._input``)."""
    if not isinstance(messages, list):
        return ()
    return tuple(make_message(str(m.get("role") or "user")[:20], m.get("content") if m.get("content") is not None else "")
                 for m in messages[before:] if isinstance(m, dict) and m.get("role") != "system")


def _head(tools: object, messages: object) -> str:
    """A digest of what a call's event shows of its head: the tools and the system messages."""
    system = [m.get("content") for m in messages if isinstance(m, dict) and m.get("role") == "system"] \
        if isinstance(messages, list) else []
    return head_digest([tools, system])


def read(path: Path, records: Iterable[Record], ctx: ImportContext) -> tuple[list[TraceRequest], FileSummary]:
    """A ``.json`` Inspect log's calls; see the module doc."""
    logs: list[_Log] = []
    for record in objects(path, records, " (an Inspect log)"):
        value: dict = record.value  # type: ignore[assignment]
        if detect(value) is None:
            raise UserError(f"{path}:{record.line}: not an Inspect log (no version, eval with task, model and created, and samples)")
        if logs:
            raise UserError(f"{path}:{record.line}: a second Inspect log in one file (a .json log is one object)")
        log = _Log(path, value, ctx.inspect_samples)
        samples = value.get("samples")
        if samples is not None and not isinstance(samples, list):
            raise UserError(f"{path}:{record.line}: samples is not a list")
        for index, sample in enumerate(samples or ()):
            log.sample(sample, record.line, f"{path}:{record.line}: ", f"samples[{index}].")
        logs.append(log)
    if not logs:
        raise UserError(f"{path}:1: empty file, no Inspect log")
    return logs[0].summary()


def read_eval(path: Path, ctx: ImportContext) -> tuple[list[TraceRequest], FileSummary]:
    """An ``.eval`` Inspect log's calls (a zip: its header, then each sample's member)."""
    zf = _zip(path)
    if zf is None:
        raise UserError(f"{path}: not an Inspect .eval log (not a zip)")
    with zf:
        infos = {info.filename: info for info in zf.infolist()}
        name = HEADER if HEADER in infos else START if START in infos else None
        if name is None:
            raise UserError(f"{path}: a zip without {HEADER} or {START}: not an Inspect .eval log")
        header = _member(path, zf, infos[name])
        log = _Log(path, header, ctx.inspect_samples)
        for member in infos:
            if SAMPLE_MEMBER.fullmatch(member):
                log.sample(_member(path, zf, infos[member]), 1, f"{path}: ", f"{member}:")
    extra = () if name == HEADER else (f"no {HEADER} (a run still going, or one that stopped): the eval read from {START}",)
    return log.summary(extra)


def _release_text(release: tuple[int, ...]) -> str:
    return ".".join(str(part) for part in release)


#: The formats table's words for the usage (docs/formats.md): the convention is per adapter and
#: release (:data:`ADAPTERS`, :meth:`_Log._usage`).
USAGE_WORDS = (f"per adapter and release: Anthropic additive; OpenAI-shaped, Grok and Bedrock additive from inspect_ai "
               f"{_release_text(ADDITIVE_FROM)}, Google from {_release_text(GOOGLE_ADDITIVE_FROM)} (subset before); a "
               f"missing cache count is 0 only from {_release_text(ADDITIVE_FROM)} (Google from "
               f"{_release_text(GOOGLE_ADDITIVE_FROM)}) on adapters that count the cache, else not reported; local cache "
               "answers skipped")


FORMAT = LogFormat(
    name=NAME,
    noun="Inspect AI log",
    nouns="Inspect AI logs",
    description="Inspect AI evaluation logs (.eval zips and .json logs): one call per model event of each sample",
    detect=detect,
    read=read,
    usage="by-endpoint",
    usage_words=USAGE_WORDS,
    versions=(
        "before inspect_ai 0.3.25 (August 2024; log version 1, early version 2): samples without events, only totals: refused",
        "0.3.25 to 0.3.42: a sample's transcript.events; from 0.3.43 (October 2024) its events, and .eval zips (later zstd-compressed)",
        "inspect_ai before 0.3.184: OpenAI-shaped and Grok input_tokens include the cached part (Google's before 0.3.208)",
        "inspect_ai 0.3.184 on: OpenAI-shaped, Grok and Bedrock input_tokens exclude cache reads and writes (Google's from 0.3.208; "
        "Anthropic's always did; adapters writing no cache count: cache not reported)",
        "inspect_ai 0.3.195 on: condensed samples (model events' input_refs into events_data.messages): input rebuilt",
    ),
    aliases=("inspect",),
    detect_file=is_eval_log,
    claims_file=starts_as_zip,
    read_file=read_eval,
    file_suffixes=(".eval",),
)
