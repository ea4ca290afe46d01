"""Fixed texts the checkpoint engine sends: the summary instruction and the checkpoint framing.

Written for prefixbench. Their sizes follow the engine they model (an instruction of about
1,800 characters, a framing paragraph of about 300) because the size of the instruction is what
a warm summary call pays uncached.
"""

SUMMARY_INSTRUCTION = """\
Stop working on the task for one reply. Your only job now is to write a checkpoint of the \
conversation above, so that another instance of you can pick the work up from it alone, \
without the transcript. Anything you leave out of the checkpoint is lost for good.

Write Markdown with exactly the following headings, in this order. Under each heading give \
short bullet points; when a heading has nothing to report, write "(none)" under it.

## Goal
## Decisions and Constraints
## Files and Symbols
## Commands and Results
## Failures and Remedies
## Open Items
## In Progress
## Next Action

How to write it:
- Keep exact strings exact: file paths, commands, identifiers, error messages, numbers, \
versions and function signatures are copied character for character, never paraphrased.
- Record what the user asked for, and every correction or preference the user stated, in \
the user's own terms; these outrank anything you inferred.
- Prefer facts that are still true. If an earlier checkpoint appears above inside \
<compacted-summary> tags, fold it into this one: keep what still holds, drop what later \
turns made obsolete, and do not copy it wholesale.
- Under "In Progress" say precisely what was being done when this checkpoint was requested, \
including partial edits and the state of any running command.
- Under "Next Action" name the single next step, concretely enough to act on it at once.
- Be terse. Use plain English, no preamble, no closing remarks, no tables.
- Do not call any tool, even though tools are listed. Do not mention this checkpoint, the \
summary or the fact that the context was shortened.
- Output only the checkpoint itself.

The checkpoint replaces the conversation above. Tool output not captured here must be \
fetched again, so note which files were read and what in them mattered."""

CHECKPOINT_PREAMBLE = (
    "Context note: the earlier part of this session was condensed automatically into the "
    "checkpoint below to free room in the context window. Take it as settled background, "
    "do not repeat or summarize it back, and do not remark on it; carry on with the work "
    "exactly where the messages that follow it leave off."
)

SUMMARY_OPEN = "<compacted-summary>"
SUMMARY_CLOSE = "</compacted-summary>"
