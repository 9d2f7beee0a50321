"""Streams built from the providers' own SDK types, one case per member of their stream unions.

Re-run with the next SDK release: the members come from the installed packages (``_unions``),
their values from the SDK models (``minimal``: each required field filled by its annotation,
then ``model_validate``), so a new member gets a case without an edit here; only its place in
a stream (which item kind an event belongs to) is stated below.

Each :class:`Case` is one stream of SDK objects (for Bedrock: the dicts boto3 yields, with raw
``bytes``), the ``WIRE_RULES`` keys it covers, the marker strings the stream carries (every one
must survive into the message: nothing lost), and, where the SDK has an accumulator, the
response that accumulator builds (to compare with the message rendered for the provider).

This module holds the five input forms and the whole set; the cases of each provider are built
in ``_generate_<provider>``, on the shared parts in ``_generate_common``.
"""

from __future__ import annotations

import json
import typing
from typing import Any

from _generate_anthropic import anthropic_cases
from _generate_bedrock import bedrock_cases, bedrock_json
from _generate_chat import chat_cases
from _generate_common import Case
from _generate_gemini import gemini_cases
from _generate_responses import responses_cases

__all__ = ["FORMS", "Case", "all_cases", "dump", "run", "sse"]

# ---------------------------------------------------------------------------------------------
# The five input forms


def dump(case: Case, event: Any, nulls: bool) -> dict[str, Any]:
    """One event as a dict: with the SDK's explicit nulls, or without them."""
    if case.provider == "bedrock-converse":
        return typing.cast("dict[str, Any]", bedrock_json(event))  # botocore sends no nulls
    # the API's own names (Anthropic's ``from``, Gemini's camelCase), as a log holds them
    data = event.model_dump(mode="json", by_alias=True, exclude_none=not nulls)
    return typing.cast("dict[str, Any]", data)


def sse(case: Case) -> bytes:
    """The stream as its transport carries it: SSE (``event:`` lines where the API sends
    them), JSON lines for Bedrock."""
    out = []
    for event in case.events:
        data = json.dumps(dump(case, event, nulls=False), ensure_ascii=False)
        if case.provider == "bedrock-converse":
            out.append(f"{data}\n")
        elif case.provider in ("openai-responses", "anthropic"):
            out.append(f"event: {event.type}\ndata: {data}\n\n")
        else:
            out.append(f"data: {data}\n\n")
    if case.provider == "openai-chat":
        out.append("data: [DONE]\n\n")
    return "".join(out).encode()


FORMS = ("sdk", "nulls", "bare", "sse", "fed13")


def run(case: Case, aggregate_module: Any, form: str) -> Any:
    """The message of ``case`` in input ``form`` on the backend of ``aggregate_module``."""
    provider = case.provider
    if form == "sdk":
        return aggregate_module.aggregate(case.events, provider)
    if form in ("nulls", "bare"):
        events = [dump(case, e, nulls=form == "nulls") for e in case.events]
        return aggregate_module.aggregate(events, provider)
    data = sse(case)
    if form == "sse":
        return aggregate_module.aggregate(data, provider)
    agg = aggregate_module.Aggregator(provider)
    for at in range(0, len(data), 13):
        agg.feed(data[at : at + 13])
    return agg.finish()


def all_cases() -> list[Case]:
    """Every generated case, in a stable order."""
    return responses_cases() + anthropic_cases() + chat_cases() + gemini_cases() + bedrock_cases()
