"""A local stand-in for the providers, speaking their real wire protocols (written for these
tests from the providers' API references): Anthropic Messages (JSON, or the SSE sequence
message_start, content_block_start, ping, content_block_delta..., content_block_stop,
message_delta, message_stop), OpenAI Responses (JSON, or response.created, response.in_progress,
output_item / content_part / output_text events, response.completed) and chat completions
(JSON, or chunks ending with the usage chunk of ``stream_options.include_usage`` and
``data: [DONE]``).

Its cache is a plain prefix cache over the request's canonical text (4 bytes a token): a call
whose text starts with the previous call's text (same path) reads all of it, any other call
reads nothing; Anthropic reports the rest as written, OpenAI as uncached input (reads rounded
down to 128 tokens, none below 1,024). Every answer is deterministic (ids count up, no clock),
so a direct call and a call through the proxy can be compared byte for byte.

Test hooks, read from request headers: ``x-standin-fail: 529`` answers that status with the
provider's error body; ``x-standin-hold: 1`` sends the first event, then waits for
:attr:`StandIn.release` before the rest (a stream in flight).
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field

from aiohttp import web

WORDS = ["The", " answer", " is", " forty", "-two", "."]


def _sse(event: str | None, data: object) -> bytes:
    text = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))
    return (f"event: {event}\n" if event else "").encode() + f"data: {text}\n\n".encode()


def _flat(*parts: object) -> str:
    """The prompt as the cache sees it: each part's JSON, one after the other (a longer
    conversation starts with the shorter one's text)."""
    return "".join(json.dumps(part, separators=(",", ":")) for part in parts)


@dataclass
class StandIn:
    """The stand-in upstream; ``seen`` holds every request as received (method, path, headers, body)."""

    seen: list[dict] = field(default_factory=list)
    previous: dict[str, str] = field(default_factory=dict)
    counter: int = 0
    release: asyncio.Event | None = None
    aborted: int = 0
    delay: float = 0.0

    def app(self) -> web.Application:
        app = web.Application(client_max_size=1 << 30)
        app.router.add_post("/v1/messages", self.messages)
        app.router.add_post("/v1/responses", self.responses)
        app.router.add_post("/v1/chat/completions", self.chat)
        app.router.add_get("/v1/models", self.models)
        return app

    async def models(self, request: web.Request) -> web.Response:
        return web.json_response({"data": [{"id": "claude-sonnet-4-20250514", "type": "model"}]})

    def _cache(self, path: str, text: str, openai: bool) -> tuple[int, int, int]:
        """(prompt tokens, read, written) of one call through the prefix cache."""
        prompt = len(text.encode()) // 4
        before = self.previous.get(path, "")
        read = len(before.encode()) // 4 if before and text.startswith(before) else 0
        if openai:
            read = read // 128 * 128 if read >= 1024 else 0
        self.previous[path] = text
        return prompt, read, 0 if openai else prompt - read

    async def _take(self, request: web.Request) -> tuple[dict, str | None]:
        raw = await request.read()
        body = json.loads(raw)
        self.seen.append({"method": request.method, "path": request.path_qs, "headers": list(request.headers.items()), "body": raw})
        self.counter += 1
        return body, request.headers.get("x-standin-fail")

    async def _stream(self, request: web.Request, events: list[bytes]) -> web.StreamResponse:
        response = web.StreamResponse(status=200, headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache", "request-id": f"req_{self.counter:04d}"})
        await response.prepare(request)
        hold = request.headers.get("x-standin-hold") == "1"
        try:
            for n, event in enumerate(events):
                await response.write(event)
                if n == 0 and hold and self.release is not None:
                    await self.release.wait()
                elif self.delay:
                    await asyncio.sleep(self.delay)
            await response.write_eof()
        except (ConnectionError, RuntimeError):
            self.aborted += 1
        return response

    async def messages(self, request: web.Request) -> web.StreamResponse:
        body, fail = await self._take(request)
        if fail:
            error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
            return web.json_response(error, status=int(fail), headers={"request-id": f"req_{self.counter:04d}"})
        text = _flat(body.get("tools"), body.get("system"), *body.get("messages", []))
        prompt, read, written = self._cache(request.path, text, openai=False)
        usage = {"input_tokens": prompt - read - written, "cache_creation_input_tokens": written, "cache_read_input_tokens": read, "output_tokens": len(WORDS)}
        message = {"id": f"msg_{self.counter:04d}", "type": "message", "role": "assistant", "model": body["model"]}
        if not body.get("stream"):
            content = [{"type": "text", "text": "".join(WORDS)}]
            return web.json_response({**message, "content": content, "stop_reason": "end_turn", "stop_sequence": None, "usage": usage}, headers={"request-id": f"req_{self.counter:04d}"})
        events = [_sse("message_start", {"type": "message_start", "message": {**message, "content": [], "stop_reason": None, "stop_sequence": None, "usage": {**usage, "output_tokens": 1}}}),
                  _sse("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
                  _sse("ping", {"type": "ping"})]
        events += [_sse("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": word}}) for word in WORDS]
        events += [_sse("content_block_stop", {"type": "content_block_stop", "index": 0}),
                   _sse("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None}, "usage": {"output_tokens": len(WORDS)}}),
                   _sse("message_stop", {"type": "message_stop"})]
        return await self._stream(request, events)

    async def responses(self, request: web.Request) -> web.StreamResponse:
        body, fail = await self._take(request)
        if fail:
            error = {"error": {"message": "The server had an error", "type": "server_error", "param": None, "code": None}}
            return web.json_response(error, status=int(fail))
        text = _flat(body.get("instructions"), body.get("tools"), *body.get("input", []))
        prompt, read, _ = self._cache(request.path, text, openai=True)
        usage = {"input_tokens": prompt, "input_tokens_details": {"cached_tokens": read}, "output_tokens": len(WORDS),
                 "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": prompt + len(WORDS)}
        rid, mid = f"resp_{self.counter:04d}", f"msg_{self.counter:04d}"
        base = {"id": rid, "object": "response", "created_at": 1764633600 + self.counter, "model": body["model"], "output": [], "usage": None}
        item = {"id": mid, "type": "message", "status": "completed", "role": "assistant", "content": [{"type": "output_text", "annotations": [], "text": "".join(WORDS)}]}
        done = {**base, "status": "completed", "output": [item], "usage": usage}
        if not body.get("stream"):
            return web.json_response(done)
        seq = iter(range(1000))
        events = [_sse("response.created", {"type": "response.created", "sequence_number": next(seq), "response": {**base, "status": "in_progress"}}),
                  _sse("response.in_progress", {"type": "response.in_progress", "sequence_number": next(seq), "response": {**base, "status": "in_progress"}}),
                  _sse("response.output_item.added", {"type": "response.output_item.added", "sequence_number": next(seq), "output_index": 0, "item": {**item, "status": "in_progress", "content": []}}),
                  _sse("response.content_part.added", {"type": "response.content_part.added", "sequence_number": next(seq), "item_id": mid, "output_index": 0, "content_index": 0, "part": {"type": "output_text", "annotations": [], "text": ""}})]
        events += [_sse("response.output_text.delta", {"type": "response.output_text.delta", "sequence_number": next(seq), "item_id": mid, "output_index": 0, "content_index": 0, "delta": word}) for word in WORDS]
        events += [_sse("response.output_text.done", {"type": "response.output_text.done", "sequence_number": next(seq), "item_id": mid, "output_index": 0, "content_index": 0, "text": "".join(WORDS)}),
                   _sse("response.content_part.done", {"type": "response.content_part.done", "sequence_number": next(seq), "item_id": mid, "output_index": 0, "content_index": 0, "part": item["content"][0]}),
                   _sse("response.output_item.done", {"type": "response.output_item.done", "sequence_number": next(seq), "output_index": 0, "item": item}),
                   _sse("response.completed", {"type": "response.completed", "sequence_number": next(seq), "response": done})]
        return await self._stream(request, events)

    async def chat(self, request: web.Request) -> web.StreamResponse:
        body, fail = await self._take(request)
        if fail:
            return web.json_response({"error": {"message": "upstream failure", "type": "server_error"}}, status=int(fail))
        text = _flat(body.get("tools"), *body.get("messages", []))
        prompt, read, _ = self._cache(request.path, text, openai=True)
        usage = {"prompt_tokens": prompt, "completion_tokens": len(WORDS), "total_tokens": prompt + len(WORDS),
                 "prompt_tokens_details": {"cached_tokens": read}}
        base = {"id": f"chatcmpl-{self.counter:04d}", "created": 1764633600 + self.counter, "model": body["model"], "system_fingerprint": "fp_standin"}
        if not body.get("stream"):
            choice = {"index": 0, "message": {"role": "assistant", "content": "".join(WORDS)}, "finish_reason": "stop"}
            return web.json_response({**base, "object": "chat.completion", "choices": [choice], "usage": usage})
        include = bool((body.get("stream_options") or {}).get("include_usage"))
        chunk = {**base, "object": "chat.completion.chunk"}
        extra = {"usage": None} if include else {}
        events = [_sse(None, {**chunk, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}], **extra})]
        events += [_sse(None, {**chunk, "choices": [{"index": 0, "delta": {"content": word}, "finish_reason": None}], **extra}) for word in WORDS]
        events += [_sse(None, {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}], **extra})]
        if include:
            events.append(_sse(None, {**chunk, "choices": [], "usage": usage}))
        events.append(_sse(None, "[DONE]"))
        return await self._stream(request, events)


def main() -> None:
    """``python -m tests.unit.proxy.standin [DELAY]``: serve on a free port, print it, run until killed
    (the benchmark runs the stand-in in its own process, as a provider would be)."""
    import sys

    async def serve() -> None:
        standin = StandIn(delay=float(sys.argv[1]) if len(sys.argv) > 1 else 0.0)
        runner = web.AppRunner(standin.app(), access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        print(site._server.sockets[0].getsockname()[1], flush=True)  # type: ignore[union-attr]
        await asyncio.Event().wait()

    asyncio.run(serve())


if __name__ == "__main__":
    main()
