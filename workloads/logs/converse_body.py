"""AWS Bedrock Converse / ConverseStream request bodies as prefixbench requests.

The shape (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html),
the same for both calls; the model is in the URL, not the body:

- ``system``: a list of blocks, each one of ``text``, ``guardContent`` or ``cachePoint``;
- ``messages``: ``{role: user | assistant, content: [block...]}``, each block one of ``text``,
  ``image``, ``document``, ``video``, ``toolUse`` ``{toolUseId, name, input}``, ``toolResult``
  ``{toolUseId, content: [text | json | image | document...], status}``, ``reasoningContent``
  (``{reasoningText: {text, signature}}`` or ``{redactedContent}``), ``cachePoint``,
  ``guardContent``, ``citationsContent``...;
- ``toolConfig``: ``{tools: [toolSpec {name, description, inputSchema: {json}} | cachePoint...],
  toolChoice}``;
- ``inferenceConfig``: ``{maxTokens, temperature, topP, stopSequences}``;
- ``additionalModelRequestFields``: the model's own parameters (Claude's ``thinking``, Nova's
  ``reasoningConfig``...); ``promptVariables`` with a prompt from Prompt management (its
  prompt is the managed one, filled in by Bedrock).

Mapping onto :class:`~prefixbench.simulator.wire.Request`, so a Converse call replays and
diffs as an InvokeModel call with Anthropic's Messages body does:

- a ``cachePoint`` (``{type: default, ttl?: 5m | 1h}``,
  https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_CachePointBlock.html) is
  not a block: it is a breakpoint at the end of the block before it, in prompt order (tools,
  then system, then messages; one first in its list closes the previous section's last block,
  one with nothing before it caches nothing). Without a ``ttl`` it writes with the default
  (5 min); a model that cannot choose its TTL (Nova: the rules' ``default_ttl_only``) writes
  every point with the default. At most 4 distinct points, as on Anthropic;
- the system blocks become ``system_blocks`` (a ``guardContent`` block its canonical JSON);
- text -> Text, toolUse -> ToolCall (``input`` as JSON in the client's key order), toolResult
  -> ToolResult (``status: error`` is an error; ``json`` content its JSON text), reasoningText
  -> Reasoning (field ``reasoningText``; the signature is not prompt text), redactedContent ->
  Reasoning (field ``redactedContent``), image / document / video -> a Text stub naming the
  format and a sha256 of the block, anything else -> Text of its canonical JSON;
- a ``toolSpec`` -> ToolSchema (its ``inputSchema.json`` canonical), another tool kind
  (``systemTool``...) a ToolSchema named by its kind holding its canonical JSON;
- the envelope: provider ``bedrock``, the model, effort from ``additionalModelRequestFields``
  (``thinking`` / ``reasoning_config`` budget or ``adaptive``, ``output_config.effort``,
  ``reasoningConfig.maxReasoningEffort``, ``reasoning_effort``), ``inferenceConfig``'s
  temperature and stop sequences; ``maxTokens`` is the output cap.

A body without a ``messages`` list, or with ``promptVariables`` (a managed prompt), is not
replayed (:func:`replayable` is False): the chain model predicts its reads. A body that is
replayable but malformed (a block that is not an object, a role that is neither user nor
assistant, a bad ``cachePoint``, more than 4 cache points...) is one :class:`UserError` naming
the line and the part.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping

from msgspec.structs import replace

from prefixbench.simulator.checks import is_int
from prefixbench.simulator.errors import UserError
from prefixbench.simulator.providers.bedrock import RULES as BEDROCK_RULES
from prefixbench.simulator.render import render_request
from prefixbench.simulator.wire import (
    Block,
    CacheBreakpoint,
    CacheTtl,
    Envelope,
    Message,
    Reasoning,
    Request,
    Text,
    ToolCall,
    ToolResult,
    ToolSchema,
    canonical_json,
)
from prefixbench.workloads.logs.anthropic_capture import classify_call, require_dict, require_list
from prefixbench.workloads.logs.reading import as_finite

#: Distinct cache points a request may carry (Bedrock's, as Anthropic's).
MAX_CACHE_POINTS = BEDROCK_RULES.max_breakpoints or 4
#: Media blocks stood in for by their format and a digest (their token cost is not modelled).
_MEDIA = ("image", "document", "video", "audio")


def replayable(body: Mapping[str, object]) -> bool:
    """Whether a Converse body carries its whole prompt: a ``messages`` list and no managed prompt."""
    return isinstance(body.get("messages"), list) and body.get("promptVariables") is None


class _Points:
    """The cache points of a body, each closing the block before it in prompt order."""

    def __init__(self, model: str) -> None:
        self.marks: list[CacheBreakpoint] = []
        self.last: tuple[str, int, int | None] | None = None  # (section, block, message) of the last block
        self.default_only = not BEDROCK_RULES.picks_ttl(model)

    def block(self, section: str, block_idx: int, message_idx: int | None = None) -> None:
        self.last = (section, block_idx, message_idx)

    def point(self, value: object, where: str) -> None:
        ttl = _ttl(value, where)
        if self.last is None:
            return  # nothing before it: no prefix to cache
        section, block_idx, message_idx = self.last
        self.marks.append(CacheBreakpoint(section, block_idx, message_idx, "5m" if self.default_only else ttl))  # type: ignore[arg-type]


def parse_converse_body(body: Mapping[str, object], model: str, where: str) -> Request:
    """A Converse request body (model from the URL) as a prefixbench request.

    Raises:
        UserError: ``where: what`` for a body Bedrock would not accept (see the module doc).
    """
    if not model:
        raise UserError(f"{where}: the URL names no model")
    raw_messages = body.get("messages")
    if not isinstance(raw_messages, list):
        raise UserError(f"{where}: request body has no messages list")
    points = _Points(model)
    tools = _tools(body.get("toolConfig"), where, points)
    system = _system(body.get("system", []), where, points)
    messages = _messages(raw_messages, where, points)
    inference = body.get("inferenceConfig", {})
    if not isinstance(inference, dict):
        raise UserError(f"{where}: inferenceConfig: expected an object")
    max_tokens = inference.get("maxTokens")
    request = Request(
        envelope=_envelope(body, inference, model, where),
        messages=messages,
        tools=tools,
        max_tokens=max_tokens if is_int(max_tokens) else None,  # type: ignore[arg-type]
        system_blocks=system,
        cache_breakpoints=tuple(points.marks),
    )
    if classify_call(request) == "compaction":
        request = replace(request, purpose="compaction")
    count = len(render_request(request).breakpoints)
    if count > MAX_CACHE_POINTS:
        raise UserError(f"{where}: {count} cachePoint blocks, at most {MAX_CACHE_POINTS} allowed")
    return request


def _tools(raw: object, where: str, points: _Points) -> tuple[ToolSchema, ...]:
    """``toolConfig.tools``: each ``toolSpec`` a tool, each ``cachePoint`` a breakpoint."""
    if raw is None:
        return ()
    config = require_dict(raw, f"{where}: toolConfig")
    tools: list[ToolSchema] = []
    for idx, tool in enumerate(require_list(config.get("tools", []), f"{where}: toolConfig.tools")):
        tool_where = f"{where}: toolConfig.tools[{idx}]"
        tool = require_dict(tool, tool_where)
        if "cachePoint" in tool:
            points.point(tool["cachePoint"], tool_where)
            continue
        spec = tool.get("toolSpec")
        if spec is None:
            kind = next(iter(tool), "")
            value = tool.get(kind)
            tools.append(ToolSchema(str(value.get("name", kind)) if isinstance(value, dict) else kind, "", canonical_json(tool)))
        else:
            spec = require_dict(spec, f"{tool_where}.toolSpec")
            name = spec.get("name")
            if not isinstance(name, str) or not name:
                raise UserError(f"{tool_where}.toolSpec: no name")
            schema = spec.get("inputSchema", {})
            schema = schema.get("json", schema) if isinstance(schema, dict) else schema
            description = spec.get("description", "")
            tools.append(ToolSchema(name, description if isinstance(description, str) else canonical_json(description), canonical_json(schema)))
        points.block("tools", len(tools) - 1)
    return tuple(tools)


def _system(raw: object, where: str, points: _Points) -> tuple[str, ...]:
    """The system blocks: text, or a guard block's canonical JSON; cache points between them."""
    blocks: list[str] = []
    for idx, block in enumerate(require_list(raw, f"{where}: system")):
        block_where = f"{where}: system[{idx}]"
        block = require_dict(block, block_where)
        if "cachePoint" in block:
            points.point(block["cachePoint"], block_where)
            continue
        text = block.get("text")
        if "text" in block and not isinstance(text, str):
            raise UserError(f"{block_where}: text is not a string")
        blocks.append(text if isinstance(text, str) else canonical_json(block))
        points.block("system", len(blocks) - 1)
    return tuple(blocks)


def _messages(raw_messages: list[object], where: str, points: _Points) -> tuple[Message, ...]:
    messages: list[Message] = []
    for message_idx, message in enumerate(raw_messages):
        message_where = f"{where}: messages[{message_idx}]"
        message = require_dict(message, message_where)
        role = message.get("role")
        if role not in ("user", "assistant"):
            raise UserError(f"{message_where}: role must be user or assistant, not {role!r:.40}")
        blocks: list[Block] = []
        for block_idx, block in enumerate(require_list(message.get("content"), f"{message_where}.content")):
            block_where = f"{message_where}.content[{block_idx}]"
            block = require_dict(block, block_where)
            if "cachePoint" in block:
                points.point(block["cachePoint"], block_where)
                continue
            blocks.append(_block(block, block_where))
            points.block("messages", len(blocks) - 1, message_idx)
        messages.append(Message(role, tuple(blocks)))  # type: ignore[arg-type]
    return tuple(messages)


def _block(block: dict[str, object], where: str) -> Block:
    """One message content block (see the module doc)."""
    if "text" in block:
        text = block["text"]
        if not isinstance(text, str):
            raise UserError(f"{where}: text is not a string")
        return Text(text)
    if "toolUse" in block:
        use = require_dict(block["toolUse"], f"{where}.toolUse")
        arguments = json.dumps(use.get("input", {}), ensure_ascii=False, separators=(",", ":"))
        return ToolCall(_str(use, "toolUseId", f"{where}.toolUse"), _str(use, "name", f"{where}.toolUse"), arguments)
    if "toolResult" in block:
        result = require_dict(block["toolResult"], f"{where}.toolResult")
        items: list[Text] = []
        for idx, item in enumerate(require_list(result.get("content", []), f"{where}.toolResult.content")):
            item = require_dict(item, f"{where}.toolResult.content[{idx}]")
            if isinstance(item.get("text"), str):
                items.append(Text(item["text"]))  # type: ignore[arg-type]
            elif "json" in item:
                items.append(Text(json.dumps(item["json"], ensure_ascii=False, separators=(",", ":"))))
            else:
                items.append(_stub(item))
        return ToolResult(_str(result, "toolUseId", f"{where}.toolResult"), tuple(items), result.get("status") == "error")
    if "reasoningContent" in block:
        reasoning = require_dict(block["reasoningContent"], f"{where}.reasoningContent")
        if "reasoningText" in reasoning:
            text = require_dict(reasoning["reasoningText"], f"{where}.reasoningContent.reasoningText")
            return Reasoning(_str(text, "text", f"{where}.reasoningContent.reasoningText"), "reasoningText")
        redacted = reasoning.get("redactedContent")
        if isinstance(redacted, str):
            return Reasoning(redacted, "redactedContent")
    return _stub(block)


def _stub(block: Mapping[str, object]) -> Text:
    """Text standing in for a non-text block: media by kind, format and digest, others as JSON."""
    for kind in _MEDIA:
        value = block.get(kind)
        if isinstance(value, dict):
            digest = hashlib.sha256(canonical_json(value).encode()).hexdigest()[:16]
            return Text(f"[{kind} {value.get('format', '')} sha256:{digest}]")
    return Text(canonical_json(block))


def _envelope(body: Mapping[str, object], inference: Mapping[str, object], model: str, where: str) -> Envelope:
    """The request family: model, effort, temperature, stop sequences."""
    raw_temperature = inference.get("temperature")
    temperature = as_finite(raw_temperature)
    if raw_temperature is not None and (temperature is None or not 0 <= temperature <= 1):
        raise UserError(f"{where}: inferenceConfig.temperature must be a number from 0 to 1, got {raw_temperature!r:.40}")
    stop = inference.get("stopSequences")
    if stop is not None and not (isinstance(stop, list) and all(isinstance(item, str) for item in stop)):
        raise UserError(f"{where}: inferenceConfig.stopSequences is not a list of strings")
    return Envelope(
        provider=BEDROCK_RULES.name,
        model=model,
        reasoning_effort=_effort(body.get("additionalModelRequestFields")),
        temperature=temperature,
        stop=tuple(stop) if stop else None,
    )


def _effort(fields: object) -> str | None:
    """The reasoning setting in ``additionalModelRequestFields`` (Claude's, Nova's, others')."""
    if not isinstance(fields, dict):
        return None
    parts: list[str] = []
    output_config = fields.get("output_config")
    if isinstance(output_config, dict) and isinstance(output_config.get("effort"), str):
        parts.append(output_config["effort"])
    for key in ("thinking", "reasoning_config"):  # Claude's (reasoning_config: 3.7's first name)
        thinking = fields.get(key)
        if isinstance(thinking, dict):
            match thinking.get("type"):
                case "enabled":
                    parts.append(f"thinking={thinking.get('budget_tokens')}")
                case "adaptive":
                    parts.append("thinking=adaptive")
                case _:
                    pass
    nova = fields.get("reasoningConfig")
    if isinstance(nova, dict) and nova.get("type") == "enabled":
        parts.append(f"reasoning={nova.get('maxReasoningEffort', 'enabled')}")
    if isinstance(fields.get("reasoning_effort"), str):
        parts.append(fields["reasoning_effort"])  # type: ignore[arg-type]
    return " ".join(parts) or None


def _ttl(value: object, where: str) -> CacheTtl:
    if not isinstance(value, dict) or value.get("type") != "default":
        raise UserError(f"{where}: cachePoint must be {{\"type\": \"default\"}}, got {value!r:.60}")
    ttl = value.get("ttl", "5m")
    if ttl == "5m" or ttl == "1h":
        return ttl
    raise UserError(f"{where}: cachePoint ttl must be \"5m\" or \"1h\", got {ttl!r:.40}")


def _str(holder: Mapping[str, object], key: str, where: str) -> str:
    value = holder.get(key)
    if not isinstance(value, str):
        raise UserError(f"{where}: no string {key}")
    return value
