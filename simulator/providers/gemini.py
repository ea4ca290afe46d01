"""Google Gemini: implicit caching, per-model caches and minimums, subset usage, no write fee.

Facts (https://ai.google.dev/gemini-api/docs/caching and the Vertex copy,
https://docs.cloud.google.com/gemini-enterprise-agent-platform/models/context-cache/context-cache-overview):
implicit caching is on by default from Gemini 2.5 (best effort: the Gemini API guarantees no
saving); the input that creates an entry bills at the normal input price (no write fee, no
storage fee); a read costs 0.1x (Vertex: a 90% discount); ``usageMetadata.cachedContentTokenCount``
is part of ``promptTokenCount`` (subset usage).

**Checkpoints [M].** No page states a granularity, but a real Gemini CLI session on
gemini-3-flash-preview (2026-05-06, 94 calls, 93 reads) reads only at fixed checkpoints: every
read lies near a multiple of ~3,924 reported tokens (3,885; 15,486-15,534; 19,448; ... 74,336:
a fit ``k x 3,923 - 155``, residuals at most 169; 17 new checkpoints, each 3,825-3,954 above the
last), never the whole previous prompt. So a read is the largest multiple of the step at or
below the shared prefix: :data:`CHECKPOINTS` gives gemini-3-flash 3,924, at every date.
The same model id sent in March 2026 (six Gemini CLI sessions, 1,234 calls, 2026-03-26) reads
on no grid: each read falls short of the previous prompt by a varying amount, spread evenly
over 0 to ~3,700 tokens on five of them, a median ~600 on the longest (802 calls, prompts up to
315K). Rounding down to 3,924 predicted more of those calls within 3% than reading to the
token (905 against 887) while each read was predicted from the prompt alone; with reads followed
(below) the two come out alike (1,037 against 1,041), and the step, which the May and June
sessions need (Axe: 75 against 53), is applied at every date. What changed between the two (the date, the CLI version: the March sessions
are one JSON object, the May one JSONL; the endpoint or auth, which neither log records) is not
known; the prompt sizes overlap. A third pattern was reported on the Gemini API in February
2026 (googleapis/python-genai#2064: 2,048-token blocks below ~8K, none from ~9K to ~17K, then
plateaus ~8,200 apart). Elsewhere the step is 1 token: gemini-2.5-pro (13 calls, 2025-10), and
gemini-3.1-pro-preview in March 2026 (402 reads in 12 sessions). ``block`` sets one step for
every model.

**The step holds at every date measured; no date bounds it [M].** Over the nine Gemini CLI and
OpenClaw sources the realdata tests read with gemini-3-flash-preview calls sent straight to Google
(45 sessions, 2,029 calls, 2026-01-25 to 2026-06-15; Kilo's gateway tasks, ruled by their
upstream, left out), reads lie within 200 tokens of ``k x 3,923 - 155`` on the May session (93 of
93) and partly the June one (22 of 54), elsewhere no more often than chance (~10%: aim 11%,
AnthonyontheHub/TP-Tutor's April JSONL sessions 8%). Yet with reads followed the step fits more
calls within 3% than reading to the token at every date but January: 1,584 against 1,433 in all
(fabien-lessirard, 2026-01: 10 against 11; abhishekibr2/openclaw, 2026-02: 61 against 49;
computermode/test-repo, 2026-03: 7 against 7; aim, 2026-03: 1,091 against 1,041; IDAHO-VAULT,
2026-03/04: 41 against 29; TP-Tutor, 2026-04: 247 against 210; Axe, 2026-05: 75 against 53; the
June plan-mode session's Flash calls: 52 against 33). A step applied only from a date D (by each
session's first call) was chosen on the even sessions in name order (by source, then file; 23
sessions, 1,450 calls: every date 1,200, none 1,094; D of 2026-01-27 or 2026-02-13, which
spares the half's one earlier session, fabien-lessirard's of 2026-01-26, 1,201, the tie broken by
the earliest date; any D from 2026-03-17 on fits fewer, the May grid's own date 1,135) and held out
on the odd ones (22 sessions, 579 calls): 384 from 2026-01-27 (or 2026-02-13), 384 at every date,
339 with none. It wins nothing held out, so the step stays at every date (why it fits reads that
lie on no grid is not known: it predicts less than the previous prompt, as those reads lag it). No Gemini CLI log names its CLI version;
its form does not part the on-grid sessions from the rest either: one JSON object in March
(aim, computermode) and June (the plan-mode session, partly on the grid), JSONL in April
(TP-Tutor, off it) and May (Axe, on it).

**Through OpenRouter, 2.5 Pro reads on ~4,080-token checkpoints [M].** A Roo Code task sent
to ``google/gemini-2.5-pro`` through OpenRouter (jsboige/jsboige-mcp-servers, 2025-08-19/20, 20
calls; the log names no upstream) read 12,244, 12,240, 16,324, 16,315, 24,474, 28,548, 28,554 and
32,633 tokens: 3, 4, 6, 7 and 8 times ~4,080 (each within 15 of a multiple, where by chance 0.06
of the eight would be), each the newest such checkpoint inside its lane's previous
prompt but one (16,320 inside 16,997, not read). No page gives this step; Gemini CLI's 2.5 Pro
reads (fabien-lessirard, IDAHO-VAULT, brexp: 1,814 reads) lie near multiples of 4,080 no more
often than chance. So ``google/gemini-2.5-pro`` (that name exactly) sent through OpenRouter reads
in steps of 4,080 (:data:`ROUTE_STEPS`: the route, not the name, decides it; Vertex AI's
OpenAI-compatible endpoint takes the same name and is not measured, nor are dated or preview names
or other gateways): a Roo Code or Kilo Code call whose handler is OpenRouter's, or whose log names
only the ``openai`` protocol and a ``google/`` name (as this task's does), an HTTP capture sent to
openrouter.ai. The step found on the task's first day (4,081) fits the second's
reads; within 3% first day 2 -> 4 of 10, second day 4 -> 6 of 10. Nine of the other twelve
calls read 0 in the middle of the task (the first call and two after 37 minutes and 12 hours idle
read 0 as predicted), after 7 s to 7 minutes idle, after a read of 0 or not alike, yet a later
call read what a call that read 0 had sent (28,548 inside its 28,884): best effort, nothing in
the log tells them. Of the 14 calls that could read (a read before them, no resume, under 10
minutes idle), the 6 that read 0 were sent 7 s to 7 min after the previous call (the 8 that read,
5 s to 4.7 min), at prompts of 20.3K to 36.1K (the reads 17.0K to 38.9K); the model never changes;
the log names no upstream (Roo Code's entries of 2025-08 have no ``inferenceProvider``), so a
Vertex AI against AI Studio difference cannot be looked for; no request failed or was retried among
them; and each call's ``cost`` is its counts at 2.5 Pro's prices (1.25, 0.31 read, 10 per 1M
tokens) times 1.05, the zeros billed as misses. A read of 0 followed a read in 4 of 6 cases, a 0
in 2 of 8: too few calls to make a rule of.

**Through OpenRouter, 3 Pro reads whole blocks of its upstream's previous prompt [M].** In
gruckion/mini-swe-agent's 500 SWE-bench runs (gemini-3-pro-preview, 2025-11-18/19, 20,163 calls;
mini-swe-agent keeps each response as OpenRouter returned it, its ``provider`` the upstream) a read
is the last whole block inside the previous prompt the same upstream served. Vertex AI
(``Google``, 14,782 calls) reads every block of ~2,016 reported tokens; Google AI Studio (4,802)
and the 16 runs sent through Portkey (579, ``google``) every block to four, then only every second
one. The blocks fall ~1-1.7% short of 2,048 as reported, the more the more blocks (a median 2,024
for one block, 32,222 for sixteen through Vertex AI), alike on Portkey, which passes Google's own
counts; OpenRouter documents its usage as the model's native tokenizer's counts; so the shortfall is
not a gateway's normalizing. So such a call (the route and the upstream both named:
:data:`ROUTE_UPSTREAM_STEPS`, :attr:`~prefixbench.simulator.providers.base.ProviderRules.route_upstream_steps`)
reads in steps of 2,016 through Vertex AI and 4,032 through AI Studio and Portkey (their finer
blocks below 8,064 are not modelled: one step per request is what the cache model takes); within
3% 5,370 -> 14,747 of 20,163 (2,016 for every upstream: 13,546). AI Studio's step was chosen on the
even runs by name (6,863 -> 7,481 of 10,102 for 4,032 against 2,016) and held on the odd (6,683 ->
7,266 of 10,061). No call straight to Google takes it: Gemini CLI's 3 Pro reads (105) lie on
neither grid more often than chance, and a gateway whose route or upstream is not known keeps the
model's own step.

**Reads lag the prompts [M].** A read is seldom the whole previous prompt: it stays on one
checkpoint for a few calls, its count drifting by tens of tokens (3.1 Pro, March 2026: 10,952,
10,889, 10,781 while the prompt grew 11.6K -> 12.1K; 39,795 ... 39,724 over five calls from 43K
to 45K), then jumps to about the previous prompt, or falls back to an older one, or to 0. On 3.1 Pro little
in a log says when it jumps (not the idle time, the thoughts, the growth since the checkpoint
below 6,000 tokens); on 3 Flash the growth does (below, "A new checkpoint"), and on 3 Pro past 6,000 tokens
("On 3 Pro a read moves up"). Google calls the cache best effort. Predicted from the last read the lane reported
(:attr:`~prefixbench.simulator.providers.base.ProviderRules.follows_reads`: the audit's
``--no-follow-reads`` turns it off), 3.1 Pro's calls within 3% go from 126 to 283 of 441, 2.5
Pro's (2025-10) from 1 to 5 of 13, March Flash's from 905 to 1,034 of 1,234; the May and June
Flash sessions, on the grid, keep theirs (75 of 94; 58 of 93 for the June one with Pro, 56
before). A read of 0 in the middle of a lane is a lapse, not the checkpoint's end: the next
read mostly returns to the checkpoint read before it (aim's and the June session's: 12 of the 14 reads
after such a 0 where the two predictions differ), so the lane keeps that read across the 0 (3.1 Pro
290 of 441, March Flash 1,037, the June session 57: its one loss follows a model switch's head read).

**A new checkpoint needs ~3,000 new tokens [M].** On gemini-3-flash-preview a read moves up
to a newer checkpoint almost only after a request that left at least ~3,000 tokens past the one it
read uncached: over the eight sessions the tests read (aim's six of March 2026, Axe's of May, the
June plan-mode one), of 1,122 pairs of calls where the previous left fewer, 23 reads moved up
(none of 58 in May and June); of 210 where it left more, 158 did. On the grid the chain model
predicted the newest checkpoint inside the previous prompt whenever one lay above the last read,
so the March reads that stay were missed; they now keep to the last read until the previous
request left :data:`NEW_CHECKPOINT_MIN` tokens uncached (:attr:`~prefixbench.simulator.providers.base.ProviderRules.new_checkpoint_min`):
March Flash 1,037 -> 1,091 of 1,234 within 3%, May and June unchanged (there a new grid point
is never nearer than one step, 3,924). Anything from 2,500 to 3,924 gains 40 to 54; 3,000 is
also the effective minimum users report for Flash-Lite (hits absent below ~3,000 tokens). On
3.1 Pro (read to the token, no grid) it changes nothing: its reads move up as often below as
above (a rule that moved them up past 3,000 fit fewer calls at every threshold tried).

**A Flash lane's first checkpoint is the head [M].** In computermode/test-repo's nine Gemini CLI
sessions (gemini-3-flash-preview, 2026-03) seven second calls read 5,665-5,888 of a 6,272-7,318
token previous prompt, about the 5,736 one session's first call read of another's head (system
prompt and tools), not the 3,924 checkpoint inside that prompt; aim's six Flash runs (held out)
read 6,132-6,221 of 8,759-9,117 in five, 9,343 of 9,527 in the sixth (3,300 past the head). So a
lane that has read nothing yet keeps to the head as its last checkpoint where its size is known
(:attr:`~prefixbench.simulator.providers.base.ProviderRules.head_checkpoint`), and moves past it
only as above: the nine audited together 13 -> 20 of 23 within 3%, aim's 18 together 1,391 -> 1,396
of 1,675; a session alone has no head size and does not change.

**On 3 Pro a read moves up after ~6,000 new tokens [M].** On aim's gemini-3.1-pro-preview runs a
read moved up past the last one in 13 of 191 pairs of calls where the previous request left fewer
than 3,000 tokens uncached past its read, 36 of 137 from 3,000 to 6,000, and 27 of 37 from 6,000
on, then short of the previous prompt by a median 1,572 (quartiles 1,073 and 3,471). So on 3 and
3.1 Pro a request whose previous one left 6,000 tokens or more uncached is predicted to read at
least that prompt less 2,000 (:data:`READ_LAGS`, the rule 2.5 has with its own numbers): aim's
441 Pro calls within 3% go from 290 to 302, and out of sample fabien-lessirard's 38
gemini-3-pro-preview calls from 10 to 12, the figma-eval 3 Pro session's 31 from 12 to 13,
personal_finance's 93 from 60 to 61; no Gemini sample loses a call. Lags of 2,000 to 5,000 with
6,000 to 12,000 gain 4 to 12 on aim; 6,000 is the best floor at every lag tried, 5,000 and less
gain at most 5 (2,000 with 5,000 loses 2).

**Through Google AI Studio: 8,000-token checkpoints from 16,000 [M].** Kilo Code's gateway
names the upstream that served each call (``inferenceProvider``). In the one public sample
(gao51-qw/n8nworkflow.com, 2026-01-12, 451 gemini-3-flash-preview calls, each call's cost the
log's own to the token at the listed prices), the 335 calls Google AI Studio served read nothing
while the previous prompt was under ~16,000 tokens (prompts of 9K to 16.3K), then only at
checkpoints about 8,000 tokens apart (16,100-16,400; 23,900-24,500; 31,800-32,700; 39,500-40,800;
47,300-48,900 ... falling a little behind ``k x 8,192`` as prompts grow), each the newest inside the
previous prompt: the plateaus of googleapis/python-genai#2064 (the Gemini API, February 2026:
none from ~9K to ~17K, then ~8,200 apart). So such a call's reads lie on ``16,000 + k x 8,000``
(:data:`UPSTREAM_GRIDS`, :attr:`~prefixbench.simulator.providers.base.ProviderRules.upstream_grids`):
AI Studio's calls within 3% go from 119 to 277 of 335 (steps of 7,800 to 8,050 from 16,000 fit
271 to 281, 8,192 from 16,384 fits 242, 8,000 from 8,000 248). A long lane's checkpoints fall
behind those points (76,650, 84,788, 92,941 ...: ~8,150 apart), so once a lane read one, a read
moves up by whole steps from it as far as the previous prompt holds: 277 -> 313. The 116 calls Vertex AI
(``Google``) served read on no such grid (below).

**Through Kilo's gateway's Vertex AI upstream: to the token, 1,000 behind the previous prompt
[M].** The 116 calls of the same sample that Kilo's gateway names Vertex AI (``Google``) for read
on no grid (10,175, 10,771,
16,187, 20,729, 23,831 ...). Of the 105 that extended the lane's previous Vertex call within ten
minutes, 18 read 0, 52 read 0 to 4,000 tokens short of the previous prompt (quartiles 974, 2,024 and
3,087 short), 34 fell further back and 1 read past it. So such a call is read to the token (the
model's 3,924 set aside) and, following the lane's last read, predicted to read at least the
previous prompt less 1,000 (:data:`UPSTREAM_READ_LAGS`,
:attr:`~prefixbench.simulator.providers.base.ProviderRules.upstream_read_lags`, which
:meth:`~prefixbench.simulator.providers.base.ProviderRules.upstream_grid` gives a reader with the
step): within 3% 39 -> 42 of the 116 (11 gained, 8 lost). Chosen on the even ones of the tasks with
Vertex calls, in name order (12 of 31 on the grid; lags of 1,000, 1,200, 1,250 and 1,300 fit 13,
1,100, 1,400 and 1,500 12, 750 and 2,000 to 3,000 11), the tie broken by a rule fixed in advance:
the smallest tied lag. Held out on the odd ones: 27 -> 29 of 85 (1,200 to 1,300 would give 32 or
33, but picking them took the held-out half's help). Any lag from 1,000 to 3,000 gains overall
(41 to 46 of 116) and on the odd half (29 to 34); on the even half only the tied four gain. No
other sample names that upstream. What is left:
the reads of 0 and the falls, and the second calls of four tasks, which read 10,142 to 10,349
tokens of first prompts of 12,323 to 12,545 (missed before and after: the whole prompt is
predicted). Those reads are not one size: the two tasks in Kilo's debug mode sent the longer first
prompts (12,468, 12,545) with the shorter first messages (8.1K-8.3K characters, against 8.7K-8.8K
in ask mode) yet read the less (10,142, 10,175, against 10,209 to 10,349), so they do not stop where
the system prompt and tools end in both modes; the log holds neither, and no grid puts them on one
point.

**A session start reads no head it was not kept warm [M].** In two Gemini CLI homes committed to
public repositories, most sessions' first calls read nothing of the head (system prompt and
tools) that other sessions sent seconds to days before (56 of 68 lane starts, 2025-09/10; 45 of
67, 2026-03/04), so a lane start reads the head only where the account keeps it warm
(:attr:`~prefixbench.simulator.providers.base.ProviderRules.reads_stored_head`): within 3%,
56 -> 109 of 316 calls in the home it was found on, 465 -> 497 of 1,151 in the other.

**Gemini 2.5 reads trail the previous prompt [M].** In the Gemini CLI homes committed to public
repositories (2025-09 to 2026-03: fabien-lessirard/dotfiles, brexp/infra, KuantumQuest/MyDotFiles-HyDE,
LAF-US/IDAHO-VAULT), a 2.5 read moves up with the prompts, short of the previous prompt by a few
hundred tokens (median shortfall 675 on 2.5 Flash, 1,298 on 2.5 Pro; on no grid: reads spread
evenly modulo 64 to 2,048), rather than keeping to the last read as 3.x's do. So a 2.5 request that
extends its lane's previous one is predicted to read at least that prompt less a lag
(:data:`READ_LAGS`: 500 on Flash and Flash-Lite, 1,000 on Pro,
:attr:`~prefixbench.simulator.providers.base.ProviderRules.read_lag_by_model`), and on Pro only
once the previous request left 2,000 tokens or more uncached past its read (below, it keeps to
that read; with no floor ai-sessions' 13 calls lose 2, with 1,500 one, though 13 more fit in all). Within 3%, fabien-lessirard's 3,332
calls go from 1,992 to 2,305, brexp's 283 from 71 to 90, MyDotFiles-HyDE's 316 from 109 to 123,
IDAHO-VAULT's 1,151 from 497 to 592, FabianLobosMendoza/Autos' 28 from 6 to 8, Tar-ive/brain-system's
27 from 10 to 11; ai-sessions' 13 stay at 5. The lags were chosen on the first two and hold on the
others (Pro 700 or 1,500, Flash 300 or 700 each fit fewer in all, tried without the floor).

**A 2.5 call right after a model switch reads nothing [M].** Gemini CLI's router sends each turn
to Flash or Pro; the first call after the lane switched model read nothing in most cases
(fabien-lessirard: 88 of 151, KuantumQuest: 13 of 15), neither the head nor that model's own
earlier prompt in the lane, minutes before. So on 2.5 such a call is predicted to read nothing
(:attr:`~prefixbench.simulator.providers.base.ProviderRules.unread_after_switch`): within 3%, with the
lag above, fabien-lessirard 2,305 -> 2,381, MyDotFiles-HyDE 123 -> 135, IDAHO-VAULT 592 -> 661;
brexp, Autos, brain-system and ai-sessions have no switch. Gemini 3 is left out: the June 2026
plan-mode session's switches read the head (6 of 12), and with 3.x in the rule its calls within 3%
go from 66 to 62 of 93 (fabien-lessirard's 3.x calls stay at 22 of 67; no other set changes).

**A 2.5 lane reads nothing until it has read [M].** In the Gemini CLI homes a 2.5 call whose
lane had read nothing yet (its session's first call read 0, as lane starts mostly do, and so
had every call since), extending the previous prompt on the same model, read nothing again in
about half the cases (KuantumQuest/MyDotFiles-HyDE 30 of 58, fabien-lessirard 13 of 49,
IDAHO-VAULT 22 of 50, brexp 8 of 20), where the chain predicted the whole previous prompt (3, 5,
9 and 0 of them within 3%); a call that read something read that prompt less about the lag
above, seldom within 3% of the whole. Once a lane has read, a read of 0 is a lapse as before (after
such a 0, 45 of 91 KuantumQuest calls read 0, but fabien-lessirard's reads mostly return). So a
2.5 request whose lane has reported no read yet is predicted to read nothing
(:attr:`~prefixbench.simulator.providers.base.ProviderRules.unread_until_read`; a follow rule:
``--no-follow-reads`` turns it off, and it goes before a head of known size or a checkpoint
step). Chosen on
KuantumQuest's even sessions (65 -> 78 of 149 within 3%) and held out elsewhere: its odd sessions
80 -> 92 of 167, fabien-lessirard 2,400 -> 2,408 (odd sessions 1,239 -> 1,238), IDAHO-VAULT
680 -> 693, brexp 93 -> 101, Tar-ive/brain-system 11 -> 12, the Roo task through OpenRouter 10 -> 12 of 20 (its first read
itself, 12,244, now missed). Gemini 3 is left out, measured: a 3 Flash lane that has read nothing
mostly reads its head or a checkpoint next, not 0. With gemini-3-flash-preview in the rule, of the
71 predictions it changes over the sets the realdata tests read, 16 calls read 0 (now within 3%),
28 that had been within 3% read something (now missed), and 27 were missed either way; the 2,638
reported 3.x calls within 3% go from 2,060 to 2,048, on the even sessions too (the Kilo tasks 212
-> 205, computermode/test-repo's nine sessions 12 -> 9, IDAHO-VAULT 26 -> 27, the plan-mode and Axe
sessions lose one each), the odd ones 141 -> 138 (Kilo), 7 -> 5 (computermode), 16 -> 19 (IDAHO-VAULT),
33 -> 34 (abhishekibr2/openclaw). On gemini-3-pro-preview it changes 3 predictions and no count, on
gemini-3.1-pro-preview 14 (aim's 1,393 -> 1,392, the pi session's 5 -> 6 of 8). 2.5 Flash-Lite is
left out too: of fabien-lessirard's 59 Flash-Lite calls (the only ones in these homes) the rule
changes no prediction (37 within 3% either way).

**A call after ten idle minutes reads nothing [M].** No page gives implicit entries a lifetime;
Vertex AI's says in-memory prefixes are evicted as capacity is reclaimed (then kept, for a while,
in a durable tier). In the Gemini sessions the realdata tests read, a read of 0 in the middle of a
lane grows with the idle time before it (fabien-lessirard's 2.5 calls: 6% within 15 s of the
previous one, 37% after 5 to 15 minutes, 62% after more), and 96 of the 136 calls sent more than
10 minutes after their lane's previous one read 0, 2.5 and 3 alike. So such a call is predicted to
read nothing where the log gives no request bodies (the audit's chain model; the byte-level
``gemini`` model that replays bodies has no such rule) and both calls' send times
(:data:`UNREAD_AFTER_IDLE_MS`,
:attr:`~prefixbench.simulator.providers.base.ProviderRules.unread_after_idle_ms`): within 3%,
fabien-lessirard 2,381 -> 2,398, brexp 90 -> 93 (the two it was chosen on: 6 to 10 minutes gain
15 to 21 and 3 or 4), and out of sample IDAHO-VAULT 661 -> 680, MyDotFiles-HyDE 135 -> 145,
personal_finance 57 -> 60, abhishekibr2/openclaw 60 -> 61; no Gemini or Qwen sample loses a call
(at 7 minutes Axe loses one; at 30 fabien-lessirard loses the two calls that read their whole
previous prompt after 36 and 38 minutes).

**On 3 Flash a lane stays readable for 20 idle minutes [M].** Over the Gemini CLI, OpenClaw and
Kilo Code sources the realdata tests read, of the 28 gemini-3-flash-preview calls sent 10 to 20
minutes after their lane's previous one (same model, the prompt extended) 3 read 0, all three
through Kilo's gateway; 11 read 85% or more of the previous prompt (Myflix five, 2026-02;
damini-ai two, after 10m04s and 15m04s, 2026-05; expenses-tracker two and TP-Tutor one, 2026-04;
Kilo one), 13 only a head of 2.9K-6.2K tokens (Myflix eleven, 3.3K-4.0K, a little above its
lane starts' 3.0K-3.4K), 1 part of it. A 2.5 call read 0 in 33 of 56 such cases; a 3 Flash call after 20 to
30 minutes in 4 of 10 (one read most of the prompt), after more in 5 of 13 (none did). So on
gemini-3-flash (not Flash-Lite) the idle rule above waits 20 minutes
(:data:`UNREAD_AFTER_IDLE_BY_MODEL`,
:attr:`~prefixbench.simulator.providers.base.ProviderRules.unread_after_idle_by_model`). Chosen on
the sources measured before damini-ai (within 3%, against ten minutes: 12 minutes +0, 15 +2, 20
+3, 25 +2, 30 +0; at 20 Myflix 1,497 -> 1,500, TP-Tutor 285 -> 286, the Kilo tasks 524 -> 523)
and held out on damini-ai: 17 -> 19 of 24. The head-sized reads stay missed (nothing is predicted
to fall back to the head). Gemini 3 and 3.1 Pro keep ten minutes: of their 3 calls after 10 to 20
idle minutes two read a 3.4K-3.8K head (fabien-lessirard) and one 0 (Myflix's 3.1 Pro). Google
states no lifetime: Vertex AI's page says implicit entries leave memory for a durable tier as
memory is reclaimed and expire within 24 hours.

**Minimums: the official table changed in mid-2026** [O]. Up to its version of 2026-05-28
(the caching page, https://ai.google.dev/gemini-api/docs/caching, and its Interactions API copy)
the page listed 1,024 tokens for Gemini 3 Flash Preview (3.5 Flash in that last version) and
2.5 Flash, 4,096 for 3 Pro Preview and 2.5 Pro (:data:`EARLIER_MINIMUMS`). From its version of
2026-07-07 on (and in those of 2026-10-13 and 2026-10-23) it lists 4,096 for Gemini 3.5 to 3.8
Flash, 3.1 Pro Preview and Gemini 4 Argon, and 2,048 for 2.5 Flash and 2.5 Pro
(:data:`DOCS_MINIMUMS`); models it no longer lists (3 Flash Preview, 3 Pro Preview) keep the
earlier page's value, which the May 2026 gemini-3-flash-preview reads bear out (3,885 tokens read,
under 4,096). When the page changed between those two versions is not known: in the audit a
request sent before :data:`DOCS_MINIMUMS_SINCE` (the first version seen with the new table)
takes the earlier table, one sent on or after it, or at an unknown time, the current one
(:attr:`~prefixbench.simulator.providers.base.ProviderRules.min_tokens_before`). A sweep has no
calendar: ``minimums=docs`` (the default) is the current table, ``minimums=docs-2026-05`` the
earlier one, ``minimums=reseller`` a reseller's copy of mid-2026 (2,048 for every 2.5 model,
4,096 for every 3.x: the current page agrees but for the 3.0 previews); ``min_tokens`` sets one
value for every model. Community reports say the effective threshold runs higher than
documented (Flash-Lite hits absent below ~3,000 tokens) [M].

**Lifetime.** Not published ("send requests with the same prefix close in time"): no TTL by
default; ``ttl_ms`` sets an idle lifetime. The audit predicts nothing read after a lane idled ten
minutes, twenty on 3 Flash (above), a rule on a lane's calls in a log without request bodies, not an entry's lifetime.

**Explicit ``CachedContent``** (``mode=explicit``, the model in
:mod:`prefixbench.simulator.cached_content`): the agent creates a named content of the stable
part of its prompt (``explicit_at``: tools, system and the older history, or tools and system
only) with a TTL (``explicit_ttl_ms``, the documented default 1 h); a request whose prompt starts
with a live content reads it at the explicit rate (0.1x; the price row's ``explicit_read`` where
it has one); creating it bills its tokens as input, and it is billed for storage per token-hour
for its whole TTL (the price row's ``storage``, its own line of the bill). The minimum is the
same per-model table (the caching page gives one table for both). Implicit caching never
applies to a request that uses a content. When the agent makes a new content is its choice
(``explicit_refresh``). The audit prices what an HTTP capture shows of it: a request body that
names ``cachedContent`` read that content (its ``cachedContentTokenCount`` at the explicit rate),
and a captured ``POST .../cachedContents`` is the creation (its ``usageMetadata.totalTokenCount``
at the input price, and storage until its ``expireTime``, an update or a delete):
:func:`native_route` tells those calls apart.

**Wire.** https://ai.google.dev/api/generate-content: ``usageMetadata`` holds
``promptTokenCount`` (the whole prompt, the cached content included),
``cachedContentTokenCount``, ``candidatesTokenCount``, ``thoughtsTokenCount`` (billed as output)
and ``toolUsePromptTokenCount`` (the prompt of a built-in tool's run, input counted apart from the
prompt); ``totalTokenCount`` is their sum.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Literal
from urllib.parse import unquote, urlsplit

import msgspec

from prefixbench.simulator.errors import UserError
from prefixbench.simulator.providers.base import CacheOption, ProviderRules, count
from prefixbench.simulator.providers.openai import read_usage as read_openai_usage
from prefixbench.simulator.usage import Usage

#: Minimum per model, the official caching page from its version of 2026-07-07 on [O]; first
#: match wins. The 3.0 previews (and 3.1 Flash), which that page no longer lists, keep the
#: earlier page's values. No version lists a Flash-Lite (its 2026-10-23 version: 3.5 to 3.8
#: Flash, 3.1 Pro Preview, Gemini 4 Argon, 2.5 Flash and Pro): 3.5+ Flash-Lite takes its Flash's
#: 4,096 and 3.1 Flash-Lite the 3.x Flash 1,024 by these patterns (inferred; users report Flash-Lite
#: hits absent below ~3,000 tokens, the module doc's [M]).
DOCS_MINIMUMS: tuple[tuple[str, int], ...] = (
    (r"gemini-4", 4096),
    (r"gemini-3\.[5-9]-flash", 4096),
    (r"gemini-3(\.[0-9]+)?-pro", 4096),
    (r"gemini-3(\.[0-9]+)?-flash", 1024),
    (r"gemini-2\.5-pro", 2048),
    (r"gemini-2\.5-flash", 2048),
)
#: Minimum per model, the official caching page up to its version of 2026-05-28 [O].
EARLIER_MINIMUMS: tuple[tuple[str, int], ...] = (
    (r"gemini-3(\.[0-9]+)?-pro", 4096),
    (r"gemini-3(\.[0-9]+)?-flash", 1024),
    (r"gemini-2\.5-pro", 4096),
    (r"gemini-2\.5-flash", 1024),
)
#: The first version of the caching page seen with :data:`DOCS_MINIMUMS` (2026-07-07 00:00 UTC,
#: epoch ms): the audit gives a request sent before it :data:`EARLIER_MINIMUMS`.
DOCS_MINIMUMS_SINCE = "2026-07-07"
DOCS_MINIMUMS_SINCE_MS = 1_783_382_400_000
#: Minimum per model, a reseller's copy of the page (mid-2026) [S].
RESELLER_MINIMUMS: tuple[tuple[str, int], ...] = (
    (r"gemini-2\.5", 2048),
    (r"gemini-3", 4096),
)
#: The tables, by the name ``minimums=`` takes.
MINIMUM_TABLES: dict[str, tuple[tuple[str, int], ...]] = {
    "docs": DOCS_MINIMUMS, "docs-2026-05": EARLIER_MINIMUMS, "reseller": RESELLER_MINIMUMS,
}
#: The step implicit-cache reads count in, per model [M] (see the module doc): the largest
#: multiple at or below the shared prefix is read; others read to the token. Gemini CLI's 2.5 Pro
#: reads on no grid (through OpenRouter: :data:`ROUTE_STEPS`).
CHECKPOINTS: tuple[tuple[str, int], ...] = ((r"gemini-3-flash(?!-lite)", 3924),)
#: The step a model's reads count in through a gateway [M] (module doc, "Through OpenRouter"):
#: ``google/gemini-2.5-pro`` through OpenRouter reads on ~4,080-token checkpoints; the same name
#: on Vertex AI's OpenAI-compatible endpoint, or a dated/preview name, is not measured there.
ROUTE_STEPS: tuple[tuple[str, str, int], ...] = (("openrouter", r"google/gemini-2\.5-pro$", 4080),)
#: The step gemini-3-pro's reads count in when sent through a gateway that names the upstream
#: that served it [M] (see the module doc, "Through OpenRouter, 3 Pro reads whole blocks"):
#: (route, upstream, model pattern, step). The route and the upstream together decide it: no call
#: sent straight to Google (Gemini CLI, Vertex AI) takes it.
ROUTE_UPSTREAM_STEPS: tuple[tuple[str, str, str, int], ...] = (
    ("openrouter", "google", r"gemini-3-pro-preview$", 2016),
    ("openrouter", "google ai studio", r"gemini-3-pro-preview$", 4032),
    ("portkey", "google", r"gemini-3-pro-preview$", 4032),
)
#: The grid gemini-3-flash's reads lie on when a gateway names Google AI Studio as the upstream
#: that served it [M] (see the module doc, "Through Google AI Studio"): (upstream, model pattern,
#: step, first checkpoint).
UPSTREAM_GRIDS: tuple[tuple[str, str, int, int], ...] = (("google ai studio", r"gemini-3-flash(?!-lite)", 8000, 16000),)
#: How far gemini-3-flash's followed reads trail the lane's previous prompt, read to the token,
#: when Kilo Code's gateway names ``Google`` (Vertex AI) as the upstream that served it [M] (see
#: the module doc, "Through Vertex AI"): (upstream, model pattern, lag).
UPSTREAM_READ_LAGS: tuple[tuple[str, str, int], ...] = (("google", r"gemini-3-flash(?!-lite)", 1000),)
#: The fewest tokens past the checkpoint a request read that it must leave uncached before the next
#: request of its lane reads a newer one [M] (see the module doc, "A new checkpoint").
NEW_CHECKPOINT_MIN = 3000
#: How far a Gemini 2.5 (and 3 Pro) read trails its lane's previous prompt, and the fewest tokens
#: that prompt must hold past its own read before the next read moves up [M] (see the module doc,
#: "Gemini 2.5 reads trail the previous prompt", "On 3 Pro a read moves up"): (model pattern, lag, after).
READ_LAGS: tuple[tuple[str, int, int], ...] = (
    (r"gemini-2\.5-pro", 1000, 2000), (r"gemini-2\.5-flash", 500, 0), (r"gemini-3(\.1)?-pro", 2000, 6000),
)
#: A request sent more than this long (ms) after its lane's previous one reads nothing [M] (see the
#: module doc, "A call after ten idle minutes reads nothing").
UNREAD_AFTER_IDLE_MS = 10 * 60_000
#: Models whose idle limit differs from :data:`UNREAD_AFTER_IDLE_MS` [M] (see the module doc, "On
#: 3 Flash a lane stays readable for 20 idle minutes"): gemini-3-flash, 20 minutes.
UNREAD_AFTER_IDLE_BY_MODEL: tuple[tuple[str, int], ...] = ((r"gemini-3-flash(?!-lite)", 20 * 60_000),)
#: A model no table names: the smallest minimum either official table gives.
DEFAULT_MIN_TOKENS = 1024
#: Models before Gemini 2.5, which implicit caching does not cover (it is on "from Gemini 2.5"):
#: none of their tokens is read without an explicit cache. On a public OpenClaw home
#: (KushiTdm/openclaw, pi's ``google-generative-ai``) 49 gemini-2.0-flash calls read nothing of
#: 1.6M prompt tokens, where the same sessions' gemini-2.5-flash calls read 1.4M.
NO_IMPLICIT: tuple[tuple[str, int], ...] = ((r"gemini-(?:1\.[0-9]+|2\.0)", 0),)
#: A cached content's TTL when the client sets none [O].
EXPLICIT_TTL_MS = 60 * 60_000


#: Why a ``usageMetadata`` without a single token count is no call: Vertex AI answers a prompt its
#: Model Armor template blocked with ``usageMetadata: {trafficType}`` alone (pydantic-ai's recording).
NO_TOKEN_COUNT = "usageMetadata with no token count (blocked prompt?): no model call"
#: The keys of an OpenAI-shaped usage (the OpenAI-compatible endpoint's, or a gateway's).
_CHAT_COUNTS = ("prompt_tokens", "completion_tokens", "total_tokens", "input_tokens", "output_tokens")


#: The same for an OpenAI-shaped usage (the OpenAI-compatible endpoint's, or a gateway's).
NO_CHAT_COUNT = "usage with no token count (no prompt_tokens, completion_tokens or total_tokens): no model call"
#: Why a native usage naming cached tokens but no prompt count is left out: the cached part is
#: known, the prompt's size (and so its uncached part) is not.
NO_PROMPT_COUNT = "usageMetadata names cached tokens but no prompt token count: the prompt's size is unknown"


class NoTokenCount(UserError):
    """A Gemini usage that names no token count at all: no model call was made (a blocked prompt).
    A reader that can skip a line skips it with its :attr:`reason` (:data:`NO_TOKEN_COUNT`,
    :data:`NO_CHAT_COUNT`); another refuses it."""

    def __init__(self, where: str, reason: str = NO_TOKEN_COUNT) -> None:
        super().__init__(f"{where}: {reason}")
        self.reason = reason


class NoPromptCount(NoTokenCount):
    """A native usage naming cached tokens but not the prompt's count: one call that cannot be
    read, skipped with :data:`NO_PROMPT_COUNT` where a reader can skip a line (its file is kept)."""

    def __init__(self, where: str) -> None:
        super().__init__(where, NO_PROMPT_COUNT)


def _native_shaped(usage: Mapping[str, object]) -> bool:
    """Whether a count-less usage is shaped as a native ``usageMetadata`` (a camelCase key, or the
    SDK's ``traffic_type``) rather than an OpenAI-shaped one."""
    return any(isinstance(key, str) and (key != key.lower() or key == "traffic_type") for key in usage)


def has_token_count(usage: Mapping[str, object]) -> bool:
    """Whether a native ``usageMetadata`` names any token count (camelCase or the SDK's snake_case)."""
    return any(isinstance(key, str) and key.endswith(("TokenCount", "token_count")) for key in usage)


def read_usage(usage: Mapping[str, object], where: str) -> Usage:
    """Gemini usage: the native ``usageMetadata`` (camelCase, or the SDK's snake_case), else the
    OpenAI-compatible endpoint's chat-completions usage. Cached tokens are part of the prompt;
    tool-use prompt tokens are input beside it, thoughts are output. A native usage naming some
    counts but not the prompt's is read with what it names (the prompt 0), unless it names cached
    tokens: a prompt of unknown size holding them is no count to read.

    Raises:
        NoTokenCount: a non-empty usage naming no token count in either shape (no model call).
        NoPromptCount: cached tokens named with no prompt count (a subclass: skipped alike).
        UserError: a bad count, or cached tokens above the prompt.
    """
    if not has_token_count(usage):
        if usage and not any(key in usage for key in _CHAT_COUNTS):
            raise NoTokenCount(where, NO_TOKEN_COUNT if _native_shaped(usage) else NO_CHAT_COUNT)
        return read_chat_usage(usage, where)
    snake = "promptTokenCount" not in usage and any(isinstance(key, str) and key.endswith("token_count") for key in usage)
    native = "prompt_token_count" if snake else "promptTokenCount"
    total = count(usage.get(native), where, native)
    cached_key = "cached_content_token_count" if snake else "cachedContentTokenCount"
    cached = count(usage.get(cached_key), where, cached_key)
    output = 0
    for key in ("candidates_token_count", "thoughts_token_count") if snake else ("candidatesTokenCount", "thoughtsTokenCount"):
        output += count(usage.get(key), where, key)
    if cached and native not in usage:
        raise NoPromptCount(where)
    if cached > total:
        raise UserError(f"{where}: {cached_key} ({cached}) exceeds {native} ({total})")
    tool_key = "tool_use_prompt_token_count" if snake else "toolUsePromptTokenCount"
    tool = count(usage.get(tool_key), where, tool_key)
    return Usage(cache_read=cached, uncached=total - cached + tool, output=output)


def read_chat_usage(usage: Mapping[str, object], where: str) -> Usage:
    """An OpenAI-shaped Gemini usage (the OpenAI-compatible endpoint, or a gateway's: http-capture
    and the LiteLLM-shaped readers alike). OpenRouter turns a ``cache_control`` marker on a Gemini
    model into an explicit cached content made for the call and read by it at once: its usage then
    names the same tokens twice, as ``cache_write_tokens`` and inside ``cached_tokens`` (both
    within ``prompt_tokens``), and its own ``cost`` bills them as a read plus five minutes of
    storage, not as input [M]. Such a count (the written part no larger than the read, the two
    together above the prompt) is read as a read with no write, its explicit part the written
    one: that is the content the log shows made for the call; the rest of a larger read (never
    seen: the recorded calls read what they wrote) is taken as the implicit cache's. Any other
    count is OpenAI's reading."""
    details = usage.get("prompt_tokens_details")
    if isinstance(details, dict) and "prompt_tokens" in usage:
        total = count(usage.get("prompt_tokens"), where, "usage.prompt_tokens")
        cached = count(details.get("cached_tokens"), where, "prompt_tokens_details.cached_tokens")
        written = count(details.get("cache_write_tokens"), where, "prompt_tokens_details.cache_write_tokens")
        if 0 < written <= cached <= total < cached + written:
            output = count(usage.get("completion_tokens"), where, "usage.completion_tokens")
            return Usage(cache_read=cached, cache_read_explicit=written, uncached=total - cached, output=output)
    return read_openai_usage(usage, where)


#: What a native Gemini call is: a model call (``generate``, ``stream``), or the creation,
#: update or deletion of a cached content.
Action = Literal["generate", "stream", "cache-create", "cache-update", "cache-delete"]
#: ``models/<model>:generateContent`` (Gemini API) or ``publishers/google/models/<model>:...`` (Vertex AI).
_GENERATE = re.compile(r"/models/([^/:]+):(generateContent|streamGenerateContent)\Z")
#: ``cachedContents`` (create) or ``cachedContents/<id>`` (get, update, delete), under
#: ``/v1beta/`` or Vertex's ``projects/<p>/locations/<l>/``.
_CACHED_CONTENTS = re.compile(r"/(cachedContents)(?:/([^/:]+))?\Z")


class NativeRoute(msgspec.Struct, frozen=True):
    """A native Gemini call, from its URL and method: what it is, the model the URL names (a
    model call), the cached content it names (``cachedContents/<id>``: an update or a delete)."""

    action: Action
    model: str | None = None
    cache: str | None = None


def native_route(url: str, method: str) -> NativeRoute | None:
    """What a captured call to Gemini's own API is (https://ai.google.dev/api/generate-content,
    https://ai.google.dev/api/caching), else None (the OpenAI-compatible endpoint included).

    A model call is told by its path on any host (a proxy keeps it); a cached-content call only
    on Google's hosts, whose path is too plain to tell elsewhere.
    """
    try:
        path = unquote(urlsplit(url).path)
    except ValueError:  # not a URL urllib can split (an unclosed IPv6 bracket): no route
        return None
    found = _GENERATE.search(path)
    if found is not None:
        return NativeRoute("stream" if found.group(2) == "streamGenerateContent" else "generate", found.group(1))
    found = _CACHED_CONTENTS.search(path)
    if found is None or not RULES.names_url(url):
        return None
    verb = method.upper()
    if found.group(2) is None:
        return NativeRoute("cache-create") if verb == "POST" else None
    name = f"cachedContents/{found.group(2)}"
    if verb == "PATCH":
        return NativeRoute("cache-update", cache=name)
    if verb == "DELETE":
        return NativeRoute("cache-delete", cache=name)
    return None


def cache_id(name: object) -> str | None:
    """A cached content's short name, ``cachedContents/<id>``, from the Gemini API's name or
    Vertex's ``projects/<p>/locations/<l>/cachedContents/<id>``; None when ``name`` is none."""
    if not isinstance(name, str):
        return None
    head, sep, tail = name.rpartition("cachedContents/")
    del head
    return f"cachedContents/{tail}" if sep and tail and "/" not in tail else None


OPTIONS = (
    CacheOption(key="minimums", default="docs",
                seen="docs (the page from 2026-07-07: 2,048 for 2.5, 4,096 for 3.1 Pro, 3.5+ Flash, 4) | docs-2026-05 "
                     "(the page to 2026-05-28: 1,024 Flash / 4,096 Pro) | reseller (2,048 for 2.5 / 4,096 for 3.x)",
                source="O", help="which per-model minimum table (the audit: the page's table on the day a request was sent)"),
    CacheOption(key="min_tokens", default=None, seen="1,024-4,096; ~3,000 measured on Flash-Lite",
                source="O", help="one minimum for every model, overriding the table"),
    CacheOption(key="block", default=None, seen="3,924 (3 Flash: grid in May 2026, 94 calls; best fit, no grid, March 2026, 1,234 calls) | 4,080 (2.5 Pro through OpenRouter, 2025-08, 20 calls) | 2,016 / 4,032 (3 Pro through OpenRouter's Vertex AI / AI Studio and Portkey, 2025-11, 20,163 calls) | 1 (2.5 Pro; 3.1 Pro; 3 Flash through Vertex AI behind Kilo's gateway, 116 calls)",
                source="M", help="implicit-cache checkpoint step in tokens, a read being the last checkpoint inside "
                                 "the shared prefix (none: per model, 3,924 for gemini-3-flash but Flash-Lite, 4,080 for google/gemini-2.5-pro through OpenRouter, 2,016 or 4,032 for gemini-3-pro-preview through OpenRouter's or Portkey's named Google upstreams, else 1)"),
    CacheOption(key="ttl_ms", default=None, seen="not published (best effort)", source="O",
                help="idle lifetime of an entry in ms"),
    CacheOption(key="mode", default="implicit", seen="implicit | explicit", source="O",
                help="implicit caching only, or explicit CachedContent objects the agent creates "
                     "(implicit then applies only to requests that use none)"),
    CacheOption(key="explicit_ttl_ms", default=EXPLICIT_TTL_MS, seen="any (the client sets it; 1 h if unset)",
                source="O", help="lifetime of a cached content from its creation, in ms (storage is paid for all of it)"),
    CacheOption(key="explicit_at", default="history", seen="history | head (the client's choice)", source="O",
                help="where the agent cuts a content: before the newest message, or after tools and system"),
    CacheOption(key="explicit_refresh", default="double", seen="double | N tokens (the client's choice)", source="O",
                help="a new content once the cut point is this many tokens past the cited one "
                     "(double: as many as the cited one holds)"),
)

RULES = ProviderRules(
    hosts_bill_list_price=True,  # closed weights: the Gemini API and Vertex AI
    name="gemini",
    api_base="https://generativelanguage.googleapis.com",
    usage_convention="subset",
    read_usage=read_usage,
    model_prefixes=("gemini",),
    url_markers=("generativelanguage.googleapis.com", "aiplatform.googleapis.com"),
    block_tokens=1,
    block_tokens_by_model=CHECKPOINTS,
    upstream_grids=UPSTREAM_GRIDS,
    upstream_read_lags=UPSTREAM_READ_LAGS,
    route_steps=ROUTE_STEPS,
    route_upstream_steps=ROUTE_UPSTREAM_STEPS,
    route_upstream_evidence="measured on one published source of 500 runs (gemini-3-pro-preview, 2025-11; every 2,016-token "
                            "block read through Vertex AI, every second one, 4,032, through Google AI Studio and Portkey)",
    min_tokens=DEFAULT_MIN_TOKENS,
    min_tokens_by_model=DOCS_MINIMUMS,
    min_tokens_before=((DOCS_MINIMUMS_SINCE_MS, EARLIER_MINIMUMS),),
    max_cached_by_model=NO_IMPLICIT,
    min_applies_to="prompt",
    read_multiplier=0.1,
    write_multiplier=1.0,
    best_effort_note="Gemini's implicit cache is best effort (no saving guaranteed)",
    step_note="measured, not documented: a real gemini-3-flash-preview session (May 2026) read only at multiples "
              "of ~3,924 tokens (residuals up to ~170); sessions of the same model in March 2026 read on no grid, "
              "short of the previous prompt by 0 to ~3,700 tokens, and predicted from the prompt alone the step fit more "
              "of them than reading to the token (905 against 887 of 1,234 within 3%; following the last read, "
              "1,037 against 1,041; 1,091 in steps once a read moves up only after a call left 3,000 tokens uncached); "
              "google/gemini-2.5-pro through OpenRouter (a Roo Code task, 2025-08) read only near multiples of ~4,080; "
              "a read up to 400 tokens short of its checkpoint "
              "(the May session's reads of one checkpoint vary by 36-331) is no miss",
    step_slack=400,
    follows_reads=True,
    follow_reason="a provider whose reads lag its prompts (Gemini, measured: a read stays on one checkpoint for several "
                  "calls, then jumps; no page documents when)",
    new_checkpoint_min=NEW_CHECKPOINT_MIN,
    head_checkpoint=True,
    read_lag_by_model=READ_LAGS,
    reads_stored_head=False,
    unread_after_switch=(r"gemini-2\.5",),
    unread_until_read=(r"gemini-2\.5-(?!flash-lite)",),
    unread_after_idle_ms=UNREAD_AFTER_IDLE_MS,
    unread_after_idle_by_model=UNREAD_AFTER_IDLE_BY_MODEL,
    body_model="gemini",
    body_model_options_before=((DOCS_MINIMUMS_SINCE_MS, (("minimums", "docs-2026-05"),)),),
    chain_as="gemini",
    cache_options=OPTIONS,
    sources=("https://ai.google.dev/gemini-api/docs/caching",),
    # Cline's handler wrote promptTokenCount whole (3.17, no reads), then less the cached (3.30 on).
    agent_handlers=(("gemini", "by-counts"),),
)
