"""The proxy's header rules, redaction and capture lines (no network, no aiohttp needed)."""

from __future__ import annotations

import gzip
import json

from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from prefixbench.reports.proxy_record import (
    REDACTED,
    capture_line,
    capture_record,
    forwarded,
    live_line,
    redact_headers,
    redact_url,
)

KEY = "sk-PLANTED-0123456789abcdef"


def test_hop_by_hop_and_connection_named_headers_are_not_forwarded() -> None:
    headers = [("Host", "127.0.0.1:8787"), ("Connection", "keep-alive, X-Trace"), ("X-Trace", "1"), ("Keep-Alive", "5"),
               ("Transfer-Encoding", "chunked"), ("Content-Length", "10"), ("x-api-key", KEY), ("anthropic-beta", "a"),
               ("anthropic-beta", "b"), ("Accept-Encoding", "gzip")]
    assert forwarded(headers) == [("x-api-key", KEY), ("anthropic-beta", "a"), ("anthropic-beta", "b"), ("Accept-Encoding", "gzip")]


def test_credentials_are_redacted_in_headers_and_urls() -> None:
    shown = redact_headers([("x-api-key", KEY), ("Authorization", f"Bearer {KEY}"), ("api-key", KEY),
                            ("X-Goog-Api-Key", KEY), ("anthropic-version", "2023-06-01")])
    assert KEY not in json.dumps(shown) and shown["anthropic-version"] == "2023-06-01"
    assert redact_url(f"https://g.example/v1beta/models/m:streamGenerateContent?alt=sse&key={KEY}#x") == \
        f"https://g.example/v1beta/models/m:streamGenerateContent?alt=sse&key={REDACTED}#x"
    assert redact_url("https://api.example/v1/messages") == "https://api.example/v1/messages"


def _record(url: str, headers: list[tuple[str, str]], body: bytes = b'{"model": "m"}') -> bytes:
    return capture_line(capture_record(method="POST", url=url, request_headers=headers, request_body=body, sent=1.0,
                                       status=200, response_headers=headers, response_body=b"{}", answered=2.0))


@settings(max_examples=200, deadline=None)
@given(
    key=st.text(st.characters(min_codepoint=33, max_codepoint=126, exclude_characters="&#=%+"), min_size=12, max_size=40),
    name=st.sampled_from(["x-api-key", "Authorization", "API-KEY", "x-goog-api-key", "Proxy-Authorization", "Cookie"]),
    query=st.sampled_from(["key", "api_key", "KEY", "access_token"]),
    others=st.lists(st.tuples(st.sampled_from(["accept", "x-a", "anthropic-version"]), st.text(st.characters(min_codepoint=48, max_codepoint=57), max_size=5)), max_size=4),
)
@example(key="x-goog-api-k", name="x-goog-api-key", query="key", others=[])  # drawn once: a header's own name
def test_no_planted_key_survives_in_a_capture_line(key: str, name: str, query: str, others: list[tuple[str, str]]) -> None:
    # A "key" that the line holds anyway (a header's own name, x-goog-api-k; a piece of the
    # record's JSON) says nothing about redaction: drawn again.
    assume(key.encode() not in _record(f"https://h.example/p?alt=sse&{query}=Z", [*others, (name, "Bearer Z")]))
    line = _record(f"https://h.example/p?alt=sse&{query}={key}", [*others, (name, f"Bearer {key}")])
    assert key.encode() not in line
    assert json.loads(line)["request"]["url"].endswith(f"{query}={REDACTED}")


def test_a_gzip_json_response_is_recorded_readable() -> None:
    body = {"usage": {"input_tokens": 3}}
    record = capture_record(method="POST", url="http://u/v1/messages", request_headers=[], request_body=b'{"model":"m"}', sent=1.0,
                            status=200, response_headers=[("Content-Encoding", "gzip"), ("Content-Type", "application/json")],
                            response_body=gzip.compress(json.dumps(body).encode()), answered=2.0)
    assert record["response"]["body"] == body  # type: ignore[index]


def test_an_unreadable_encoding_is_noted_not_fatal() -> None:
    record = capture_record(method="POST", url="http://u/x", request_headers=[], request_body=b"", sent=1.0, status=200,
                            response_headers=[("Content-Encoding", "zstd")], response_body=b"\x28\xb5", answered=2.0)
    assert "cannot read (zstd)" in record["response"]["body_note"]  # type: ignore[index]


def test_the_live_line_of_a_skipped_call() -> None:
    assert live_line(3, "HTTP 529: not served, neither read nor written", 529) == "#3 HTTP 529 passed through: HTTP 529: not served, neither read nor written"
    assert live_line(4, "not a model call (no request body with a model)", 200) is None


@settings(max_examples=300, deadline=None)
@given(listen=st.one_of(st.text(max_size=30), st.sampled_from(["127.0.0.1:0", "[::1]:8787", ":8787", "h:99999", "h:-1", "h:",
                                                                  # past int()'s 4,300 digits (a traceback, review)
                                                                  "h:" + "9" * 5000, "h:" + "0" * 5000 + "80"])),
       upstream=st.one_of(st.text(max_size=30), st.sampled_from(["anthropic", "OPENAI", "vllm", "http://", "https://x/y/", "ftp://x"])))
def test_any_listen_or_upstream_value_is_accepted_or_one_user_error(listen: str, upstream: str) -> None:
    from prefixbench.reports.proxy_options import parse_listen, resolve_upstream
    from prefixbench.simulator.errors import UserError

    for parse, value in ((parse_listen, listen), (resolve_upstream, upstream)):
        try:
            parsed = parse(value)
        except UserError as exc:
            assert "\n" not in str(exc) or "\n" in value
            continue
        if parse is parse_listen:
            host, port = parsed  # type: ignore[misc]
            assert 0 <= port <= 65535
        else:
            assert str(parsed).startswith(("http://", "https://"))


def test_an_error_message_loses_the_calls_credentials() -> None:
    from prefixbench.reports.proxy_record import scrub

    url = f"https://h.example/v1?alt=sse&key={KEY}"
    text = f"InvalidURL {url}; header Bearer {KEY}"
    shown = scrub(text, url, [("Authorization", f"Bearer {KEY}")])
    assert KEY not in shown and REDACTED in shown
