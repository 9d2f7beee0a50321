"""Reading a large field of a complete message: ``message.logprobs`` with 20,000 entries and
``message.completion_token_ids`` with 20,000 ids, on the Rust backend and on the twin.

Value semantics: mutating what a read returned never changes a later read. The token ids are a
fresh copy per read, so their cost is the copy; a message's logprobs are read-only
(``FrozenDict`` / ``FrozenList``, built once: at the first read of a message built from
fields, as here, which the first round pays), so a read hands out the same object. Each
benchmark first checks the read equals the entries the message was built from, then times one
read. ``pytest benches --benchmark-disable`` runs each once (CI smoke).
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from _bench import REQUESTED, SEED, _load_messages, canonical

SIZE = 20_000


def _entries() -> list[dict[str, Any]]:
    """OpenAI Chat ``logprobs.content`` entries, each with two ``top_logprobs``."""
    rng = random.Random(SEED)
    entries = []
    for _ in range(SIZE):
        token = "".join(rng.choice("abcdefgh ") for _ in range(4))
        top = [
            {"token": token, "logprob": round(-5 * rng.random(), 6), "bytes": list(token.encode())}
            for _ in range(2)
        ]
        entries.append(
            {
                "token": token,
                "logprob": top[0]["logprob"],
                "bytes": list(token.encode()),
                "top_logprobs": top,
            }
        )
    return entries


@pytest.fixture(scope="module")
def entries() -> list[dict[str, Any]]:
    return _entries()


@pytest.fixture(params=("rust", "twin"))
def messages(request: pytest.FixtureRequest) -> Any:
    """fastmerge's messages module on one backend (``rust`` or ``twin``)."""
    backend = "rust" if request.param == "rust" else "python"
    module = _load_messages(backend)
    if isinstance(module, str):
        if backend == "rust" and REQUESTED == "rust":
            pytest.fail(f"FASTMERGE_BACKEND=rust but {module}")
        pytest.skip(module)
    request.node.user_properties.append(("impl", request.param))
    return module


def _label(benchmark: Any, request: pytest.FixtureRequest, field: str) -> None:
    impl = dict(request.node.user_properties)["impl"]
    benchmark.group = f"read message.{field} ({SIZE:,} entries)"
    benchmark.extra_info.update(kind="reads", shape=field, size=SIZE, impl=impl)


def test_read_logprobs(
    benchmark: Any, request: pytest.FixtureRequest, messages: Any, entries: list[dict[str, Any]]
) -> None:
    """One ``message.logprobs`` read of 20,000 entries."""
    message = messages.AssistantMessage(logprobs={"content": entries})
    expected = canonical({"content": entries})
    _label(benchmark, request, "logprobs")
    result = benchmark(lambda: message.logprobs)
    assert canonical(result) == expected
    with pytest.raises(TypeError):  # read-only
        result["content"][0]["top_logprobs"][0]["token"] = "changed"
    assert result is message.logprobs
    assert canonical(message.logprobs) == expected


def test_read_completion_token_ids(
    benchmark: Any, request: pytest.FixtureRequest, messages: Any
) -> None:
    """One ``message.completion_token_ids`` read of 20,000 ids."""
    ids = list(range(SIZE))
    message = messages.AssistantMessage(completion_token_ids=ids)
    _label(benchmark, request, "completion_token_ids")
    result = benchmark(lambda: message.completion_token_ids)
    assert result == ids
    result.append(-1)
    assert message.completion_token_ids == ids
