"""Public repositories the realdata tests read real sessions from, at one commit, out of a local
git copy (a bare mirror or a clone); a test skips, naming the repository and how to get it,
where the copy or the commit is absent."""

from __future__ import annotations

import base64
import gzip
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest


def mirror(owner_name: str, env: str) -> tuple[str, str, Path]:
    """A public repository's address, the variable naming its local git copy, and that copy: the
    variable's value, else the look-up tools' mirror of it under ``/work/.mirror``."""
    url = f"github.com/{owner_name}"
    return url, env, Path(os.environ.get(env, f"/work/.mirror/{owner_name.replace('/', '+')}/repo"))


def git(repo: Path, *args: str, text: bool = True) -> subprocess.CompletedProcess:
    """``git`` on ``repo``'s object store (its ``.git`` in a clone, the folder itself if bare)."""
    git_dir = repo / ".git" if (repo / ".git").is_dir() else repo
    return subprocess.run(["git", f"--git-dir={git_dir}", *args], capture_output=True, text=text, check=False)


def file_at(repo: Path, commit: str, path: str, url: str, env: str) -> bytes:
    """The bytes of ``path`` at ``commit``; skips the test when git, the copy or the file is missing."""
    if shutil.which("git") is None or not repo.is_dir():
        pytest.skip(f"no git copy of {url} at {repo}: clone it and set {env} to read {path} at commit {commit}")
    shown = git(repo, "show", f"{commit}:{path}", text=False)
    if shown.returncode != 0:
        pytest.skip(f"{commit[:12]}:{path} not in {repo}")
    return shown.stdout


def files_at(repo: Path, commit: str, url: str, env: str) -> list[str]:
    """Every file of ``repo`` at ``commit``; skips the test when git, the copy or the commit is missing."""
    if shutil.which("git") is None or not repo.is_dir():
        pytest.skip(f"no git copy of {url} at {repo}: clone it and set {env}")
    # NUL-separated: without -z, git quotes a name holding non-ASCII bytes ("\320\267..."). Read
    # as bytes and decoded as the file system does: a name that is not UTF-8 (Latin-1 bytes) is
    # kept, its bytes as surrogates, and given back to git and the file system as they were.
    listed = git(repo, "ls-tree", "-r", "-z", "--name-only", commit, text=False)
    if listed.returncode != 0:
        pytest.skip(f"commit {commit[:12]} not in {repo}")
    return [os.fsdecode(name) for name in listed.stdout.split(b"\0") if name]


def tree_at(repo: Path, commit: str, url: str, env: str, prefix: str, into: Path, suffix: str = "",
            left_out: frozenset[str] = frozenset()) -> list[Path]:
    """The files under ``prefix`` ending in ``suffix`` at ``commit`` (``left_out`` aside), written
    into ``into`` with their paths kept (subagent folders mean something); the paths written.
    Skips as :func:`files_at` does."""
    written = []
    for name in files_at(repo, commit, url, env):
        if name.startswith(prefix) and name.endswith(suffix) and name not in left_out:
            target = into / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(file_at(repo, commit, name, url, env))
            written.append(target)
    return written


def codex_recount(paths: list[Path]) -> tuple[int, int, int, int]:
    """Calls, uncached input, reads and output of Codex rollouts: one call per ``token_count``
    event whose running total moved, its ``last_token_usage``; a count of no input and no output
    is no call, and one whose running total and usage another rollout holds (a subagent's copy
    of its parent's history) is counted once. Lines are split at newlines only (a message may
    hold a U+2028). A last line with no newline that is not JSON (a torn tail, or the zero bytes a
    crash left) is left out, as the audit leaves it."""
    calls = uncached = read = output = 0
    seen: set[tuple[str, str]] = set()
    for path in paths:
        previous = None
        lines = path.read_text(encoding="utf-8").split("\n")
        for n, line in enumerate(lines):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
            except ValueError:
                if n == len(lines) - 1:
                    continue
                raise
            payload = entry.get("payload") or {}
            if entry.get("type") == "event_msg" and payload.get("type") == "token_count" and payload.get("info"):
                total, last = payload["info"]["total_token_usage"], payload["info"]["last_token_usage"]
                if total == previous:  # the same count repeated: no new call
                    continue
                previous = total
                key = (json.dumps(total, sort_keys=True), json.dumps(last, sort_keys=True))
                if (last["input_tokens"] == 0 and last["output_tokens"] == 0) or key in seen:
                    continue
                seen.add(key)
                calls += 1
                uncached += last["input_tokens"] - last["cached_input_tokens"]
                read += last["cached_input_tokens"]
                output += last["output_tokens"]
    return calls, uncached, read, output


def _gemini_tally(messages) -> tuple[int, int, int, int, set[str]]:
    """Calls, uncached input (the tool-use prompt with it), output (thoughts with it), reads and
    models of Gemini CLI ``gemini`` messages, each counted where its token count is not zero;
    ``input`` includes ``cached``."""
    calls = uncached = output = read = 0
    models: set[str] = set()
    for message in messages:
        tokens = message.get("tokens") or {}
        if not (tokens.get("input") or tokens.get("output")):
            continue
        calls += 1
        uncached += tokens["input"] - tokens.get("cached", 0) + tokens.get("tool", 0)
        output += tokens["output"] + tokens.get("thoughts", 0)
        read += tokens.get("cached", 0)
        models.add(message["model"])
    return calls, uncached, output, read, models


def gemini_recount(paths: list[Path]) -> tuple[int, int, int, int, set[str]]:
    """:func:`_gemini_tally` of Gemini CLI session files (one JSON object each): one call per
    ``gemini`` message with a non-zero token count, the first one per session and message id."""
    first: dict[tuple[str, str], dict] = {}
    for path in paths:
        session = json.loads(path.read_text(encoding="utf-8"))
        for message in session["messages"]:
            tokens = message.get("tokens") or {}
            if message.get("type") == "gemini" and (tokens.get("input") or tokens.get("output")):
                first.setdefault((session["sessionId"], message["id"]), message)
    return _gemini_tally(first.values())


def gemini_jsonl_recount(paths: list[Path]) -> tuple[int, int, int, int, set[str]]:
    """:func:`_gemini_tally` of Gemini CLI's JSONL session files: each ``gemini`` record's last
    line per session and message id, counted where its token count is not zero. Lines split at
    newlines only."""
    last: dict[tuple[str, str], dict] = {}
    for path in paths:
        session = ""
        for line in path.read_text(encoding="utf-8").split("\n"):
            if not line.strip():
                continue
            record = json.loads(line)
            if "sessionId" in record and "projectHash" in record:
                session = record["sessionId"]
            elif record.get("type") == "gemini":
                last[(session, record["id"])] = record
    return _gemini_tally(last.values())


_CLAUDE_COUNTS = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")


def claude_recount(paths: list[Path]) -> tuple[int, int, int, int, int]:
    """Calls, uncached input, output, reads and writes of Claude Code transcripts: one call per
    (requestId, message id), the usage of its last line in the file (a file holding its entries
    twice over gives the same last line twice); ``<synthetic>`` lines are no call, nor is a
    response whose usage counts nothing (a relay's all-zero answers). Lines are split at newlines
    only (a message may hold a U+0085 or U+2028, which ``splitlines`` would split at)."""
    last: dict[tuple, dict] = {}
    for path in paths:
        for line in path.read_text(encoding="utf-8").split("\n"):
            if not line.strip():
                continue
            entry = json.loads(line)
            message = entry.get("message") or {}
            if entry.get("type") == "assistant" and isinstance(message, dict) and message.get("usage") \
                    and message.get("model") != "<synthetic>":
                last[(entry.get("requestId"), message.get("id"))] = message["usage"]
    usages = [u for u in last.values() if any(u.get(k) for k in _CLAUDE_COUNTS)]
    return (len(usages), *(sum(u.get(k) or 0 for u in usages) for k in _CLAUDE_COUNTS))


def read_within(result) -> int:
    """How many reads an audit predicted within 3%, over all its files."""
    return sum(f.read_within for f in result.files)


def pi_recount(paths: list[Path], once: bool = False) -> tuple[int, int, int, int, int, int, set[tuple[str, str]]]:
    """Assistant messages, those with a usage that is not all zero (the calls), uncached input,
    output, reads and writes, and the (provider, model) pairs of pi sessions; with ``once``, a
    call a fork copied from its source (the same entry id, time and usage) is counted once. An
    errored or aborted call's usage is all zero; pi's ``input`` excludes the reads and writes.
    Lines split at newlines only."""
    messages = calls = uncached = output = read = written = 0
    served: set[tuple[str, str]] = set()
    seen: set[tuple[str, int, str]] = set()
    for path in paths:
        for line in path.read_text(encoding="utf-8").split("\n"):
            if not line.strip():
                continue
            entry = json.loads(line)
            message = entry.get("message") or {}
            if entry.get("type") != "message" or message.get("role") != "assistant":
                continue
            messages += 1
            usage = message.get("usage") or {}
            if not any(usage.get(key) for key in ("input", "output", "cacheRead", "cacheWrite")):
                continue
            if once:
                key = (entry["id"], message["timestamp"], json.dumps(usage, sort_keys=True))
                if key in seen:
                    continue
                seen.add(key)
            calls += 1
            uncached += usage["input"]
            output += usage["output"]
            read += usage.get("cacheRead", 0)
            written += usage.get("cacheWrite", 0)
            served.add((message["provider"], message["model"]))
    return messages, calls, uncached, output, read, written, served


_CREATED = re.compile(r'"created(?:_at)?":\s*(\d+)')


def _cassette_json(value: object) -> object:
    """A cassette's body as JSON: pydantic-ai's ``parsed_body``, or vcrpy's text (bytes gunzipped);
    None where it is not JSON (a stream's events stay text for the caller)."""
    if isinstance(value, bytes):
        try:
            value = gzip.decompress(value).decode("utf-8") if value[:2] == b"\x1f\x8b" else value.decode("utf-8")
        except UnicodeDecodeError:  # a binary body (an upload, a protobuf): not JSON
            return None
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return None
    return value


def cassette_captures(repo: Path, commit: str, url: str, env: str, folders: tuple[str, ...], into: Path) -> list[dict]:
    """The VCR cassettes (``*.yaml``) under ``folders`` at ``commit``, each made into a capture
    file in ``into`` (one line a call: the request body, and the answer as a JSON body or, for a
    stream, ``body_raw``, timed at the answer's own ``created`` / ``created_at`` where it names
    one), for ``http-capture`` to read; every line written. Both shapes are read: pydantic-ai's
    (``parsed_body`` beside each body) and vcrpy's own (the body as text, a response's
    ``body.string`` gzipped or not; a binary one, Bedrock's event stream, kept as base64 and
    flagged ``body_encoding``; Bedrock's ``X-Amzn-Bedrock-*`` count headers kept beside the
    content type). An interaction without a JSON request body (a GET) is no
    call; a cassette past the snapshot's size limit (absent) gives nothing. Skips as
    :func:`files_at` does, and where no cassette is found."""
    yaml = pytest.importorskip("yaml")
    every = []
    for n, path in enumerate(sorted(p for p in files_at(repo, commit, url, env) if p.startswith(folders) and p.endswith(".yaml"))):
        shown = git(repo, "show", f"{commit}:{path}", text=False)
        lines = []
        for interaction in ((yaml.safe_load(shown.stdout) if shown.returncode == 0 else None) or {}).get("interactions", []):
            request, response = interaction["request"], interaction["response"]
            body = _cassette_json(request.get("parsed_body", request.get("body")))
            if not isinstance(body, dict):
                continue
            raw = (response.get("body") or {}).get("string")
            raw = gzip.decompress(raw).decode("utf-8") if isinstance(raw, bytes) and raw[:2] == b"\x1f\x8b" else raw
            encoded = False
            if isinstance(raw, bytes):
                try:
                    raw = raw.decode("utf-8")
                except UnicodeDecodeError:  # a binary answer (Bedrock's event stream): kept as base64
                    raw, encoded = base64.b64encode(raw).decode("ascii"), True
            answer = response["parsed_body"] if "parsed_body" in response else (None if encoded else _cassette_json(raw))
            created = (answer.get("created") or answer.get("created_at")) if isinstance(answer, dict) else None
            if created is None and isinstance(raw, str) and _CREATED.search(raw):
                created = int(_CREATED.search(raw).group(1))
            if isinstance(created, str) and created.isdigit():  # Writer's answers give the epoch as text
                created = int(created)
            headers = {key.lower(): value for key, value in (response.get("headers") or {}).items()}
            kept: dict = {"timestamp": created, "status_code": response["status"]["code"],
                          "headers": {"content-type": (headers.get("content-type") or ["application/json"])[0],
                                      **{key: value[0] for key, value in headers.items() if key.startswith("x-amzn-bedrock-") and value}}}
            kept["body" if isinstance(answer, dict) else "body_raw"] = answer if isinstance(answer, dict) else raw
            if encoded:
                kept["body_encoding"] = "base64"
            lines.append({"request": {"timestamp": created, "method": request["method"], "url": request["uri"],
                                      "body": body}, "response": kept})
        (into / f"{n:03d}.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
        every.extend(lines)
    if not every:
        pytest.skip(f"no cassette under {folders} at {commit[:12]} in {repo}")
    return every


def answer_events(response: dict) -> list[dict]:
    """The answer's JSON body, else its stream's ``data:`` events (or a JSON array of chunks)."""
    body = response.get("body")
    if isinstance(body, dict):
        return [body]
    raw = response.get("body_raw") or ""
    try:
        whole = json.loads(raw)
        return [e for e in (whole if isinstance(whole, list) else [whole]) if isinstance(e, dict)]
    except ValueError:
        return [json.loads(e[len("data: "):]) for e in raw.splitlines() if e.startswith("data: {")]


def anthropic_answer_calls(response: dict) -> list[tuple[int, int, int, int]]:
    """(uncached, read, written, output) of each call an Anthropic answer reports: its usage (a
    stream's ``message_start``, each count the last ``message_delta`` gives overriding it), and
    each ``compaction`` and ``advisor_message`` of its ``iterations`` as a call of its own."""
    usage: dict = {}
    for event in answer_events(response):
        found = event.get("usage") or (event.get("message") or {}).get("usage")
        if found:
            usage.update({key: value for key, value in found.items() if value is not None})
    if "output_tokens" not in usage:
        return []
    own = [it for it in usage.get("iterations") or [] if it.get("type") in ("compaction", "advisor_message")]
    return [(u["input_tokens"], u.get("cache_read_input_tokens") or 0, u.get("cache_creation_input_tokens") or 0,
             u["output_tokens"]) for u in [*own, usage]]


def bedrock_counts(response: dict) -> tuple[int, int | None, int | None, int] | None:
    """(uncached, read, written, output) of a Bedrock answer, as it says them: an InvokeModel
    answer's ``X-Amzn-Bedrock-*`` count headers, a Converse body's usage, or a stream's last
    metrics (an InvokeModel stream's ``amazon-bedrock-invocationMetrics``, a ConverseStream's
    ``metadata`` usage, base64 event-stream frames). Every count excludes the cached parts."""
    from prefixbench.workloads.logs.bedrock_wire import decode_frames

    headers = response.get("headers") or {}
    if "x-amzn-bedrock-input-token-count" in headers:
        def count(name: str) -> int | None:
            value = headers.get(f"x-amzn-bedrock-{name}-token-count")
            return None if value is None else int(value)
        return count("input"), count("cache-read-input"), count("cache-write-input"), count("output")  # type: ignore[return-value]
    body = response.get("body")
    if isinstance(body, dict):
        usage = body.get("usage") or {}
        if "inputTokens" in usage:
            return usage["inputTokens"], usage.get("cacheReadInputTokens"), usage.get("cacheWriteInputTokens"), usage["outputTokens"]
        if "prompt_tokens" in usage:  # a SageMaker model imported into Bedrock, OpenAI-shaped
            return usage["prompt_tokens"], None, None, usage["completion_tokens"]
        return None
    if response.get("body_encoding") != "base64":
        return None
    found = None
    for frame in decode_frames(base64.b64decode(response["body_raw"])):
        payload = json.loads(frame.payload)
        if "bytes" in payload:
            metrics = json.loads(base64.b64decode(payload["bytes"])).get("amazon-bedrock-invocationMetrics")
            if metrics:
                found = (metrics["inputTokenCount"], metrics.get("cacheReadInputTokenCount"),
                         metrics.get("cacheWriteInputTokenCount"), metrics["outputTokenCount"])
        elif "inputTokens" in (payload.get("usage") or {}):
            usage = payload["usage"]
            found = usage["inputTokens"], usage.get("cacheReadInputTokens"), usage.get("cacheWriteInputTokens"), usage["outputTokens"]
    return found


_OPENAI_COUNTS = ("prompt_tokens", "input_tokens", "completion_tokens", "output_tokens")


def audited_calls(result) -> dict[tuple[str, int], list[tuple[int, int | None, int]]]:
    """The audit's rows as :func:`recorded_calls` gives a line's calls, keyed by (file name,
    line): (prompt with its cached and written parts, read, output) for each row."""
    rows: dict[tuple[str, int], list[tuple[int, int | None, int]]] = {}
    for r in result.rows:
        rows.setdefault((Path(r.file).name, r.line), []).append(
            (r.reported_uncached + (r.reported_cache_read or 0) + (r.reported_cache_write or 0) + (r.reported_cache_write_1h or 0),
             r.reported_cache_read, r.reported_output))
    return rows


def recorded_calls(line: dict) -> list[tuple[int, int | None, int]]:
    """(prompt, read or None where no cache field, output) of each call a served capture line's
    answer reports, by the wire its URL and answer speak: Anthropic's usage (its iterations too),
    Bedrock's counts (:func:`bedrock_counts`), Gemini's ``usageMetadata`` (the richest; a usage
    without ``cachedContentTokenCount`` a read of 0: Gemini leaves a 0 out), else an OpenAI-shaped
    usage (the last; Groq's stream of 2025 kept it in ``x_groq``), one holding a prompt or output
    count (its read ``prompt_tokens_details.cached_tokens``, else a top-level ``cached_tokens``), or
    Cohere's v2 chat usage (``tokens``, its read a top-level ``cached_tokens``; a stream's in its
    ``message-end`` delta); Ollama's own API (``/api/chat``, ``/api/generate``): its final
    (``done``) line's ``prompt_eval_count`` and ``eval_count``, no cache field. The prompt
    includes the reads and writes."""
    response = line["response"]
    if response["status_code"] != 200:
        return []
    url = line["request"]["url"]
    if re.search(r"/api/(chat|generate)$", url):
        raw = response.get("body_raw")
        finals = [response["body"]] if isinstance(response.get("body"), dict) else [
            json.loads(text) for text in (raw or "").splitlines() if text.strip().startswith("{")]
        final = next((f for f in reversed(finals) if f.get("done") is True), None)
        if final is None or "prompt_eval_count" not in final or "eval_count" not in final:
            return []
        return [(final["prompt_eval_count"], final.get("prompt_eval_cached_count"), final["eval_count"])]
    if "anthropic.com" in url:
        return [(u + read + written, read, out) for u, read, written, out in anthropic_answer_calls(response)]
    if "bedrock-runtime" in url:
        counts = bedrock_counts(response)
        if counts is None:
            return []
        uncached, read, written, out = counts
        return [(uncached + (read or 0) + (written or 0), read, out)]
    events = answer_events(response)
    metas = [e["usageMetadata"] for e in events if isinstance(e.get("usageMetadata"), dict)]
    if metas:
        meta = max(reversed(metas), key=len)
        if "promptTokenCount" not in meta:
            return []
        return [(meta["promptTokenCount"] + meta.get("toolUsePromptTokenCount", 0), meta.get("cachedContentTokenCount", 0),
                 meta.get("candidatesTokenCount", 0) + meta.get("thoughtsTokenCount", 0))]
    usage = None
    for event in events:
        nested = event.get("response") if isinstance(event.get("response"), dict) else {}
        usage = (event.get("usage") or nested.get("usage") or (event.get("x_groq") or {}).get("usage")
                 or ((event.get("delta") or {}).get("usage") if event.get("type") == "message-end" else None) or usage)
    if isinstance(usage, dict) and isinstance(usage.get("tokens"), dict) and not any(key in usage for key in _OPENAI_COUNTS):
        tokens = usage["tokens"]  # Cohere's v2 chat
        return [(tokens.get("input_tokens", 0), usage.get("cached_tokens"), tokens.get("output_tokens", 0))]
    if not isinstance(usage, dict) or not any(key in usage for key in _OPENAI_COUNTS):
        return []
    details = usage.get("prompt_tokens_details") or usage.get("input_tokens_details") or {}
    return [(usage.get("prompt_tokens", usage.get("input_tokens")) or 0, (details.get("cached_tokens") if details.get("cached_tokens") is not None else usage.get("cached_tokens")),
             usage.get("completion_tokens", usage.get("output_tokens")) or 0)]
