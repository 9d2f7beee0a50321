"""The corpus folders and the wire format of each: what the conformance tests and the
benchmarks (which cannot import the tests' conftest) both read."""

from __future__ import annotations

from pathlib import Path

CORPUS = Path(__file__).resolve().parents[1] / "corpus"

# corpus folder -> wire format
KINDS = {
    "openai_chat": "openai-chat",
    "mistral": "openai-chat",
    "openai_responses": "openai-responses",
    "anthropic_messages": "anthropic",
    "gemini": "gemini",
    "bedrock_converse": "bedrock-converse",
    "ollama": "ollama",
}
