"""The generated Gemini streams (``_generate``): a stream per kind of part (text, thought,
function call, parts that are content of their own) and per Part field that rides beside
content, whole and cut, validated by google-genai's models."""

from __future__ import annotations

import base64
from typing import Any

from _generate_common import Case, markers_in

# ---------------------------------------------------------------------------------------------
# Gemini

#: a value of each Part field that rides beside content (google-genai's models check it)
_BESIDE_VALUES: dict[str, Any] = {
    "videoMetadata": {"startOffset": "1s", "endOffset": "2s"},
    "mediaResolution": {"level": "MEDIA_RESOLUTION_LOW"},
    "mediaProcessing": "STATIC",
    "partMetadata": {"tag": "M007q"},
    "audioTranscription": {"text": "M007q"},
    "speechMetadata": {"speaker": "M007q"},
    "documentMetadata": {"startPage": 1, "endPage": 2},
    "spreadsheetMetadata": {"visibleCells": "M007q", "sheetIndex": 0},
    "audioMetadata": {"startOffset": "1s", "endOffset": "2s"},
}
#: a part of each kind that is content of its own
_OWN_PARTS: dict[str, dict[str, Any]] = {
    "inlineData": {"inlineData": {"mimeType": "image/png", "data": "TTAwMHE="}},
    "fileData": {"fileData": {"mimeType": "image/png", "fileUri": "gs://b/M000q"}},
    "executableCode": {"executableCode": {"language": "PYTHON", "code": "print('M000q')"}},
    "codeExecutionResult": {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "M000q"}},
    "functionResponse": {"functionResponse": {"name": "f", "response": {"r": "M000q"}}},
    "toolCall": {"toolCall": {"id": "t1", "args": {"q": "M000q"}}},
    "toolResponse": {"toolResponse": {"id": "t1", "response": {"r": "M000q"}}},
}


def _gemini_chunk(parts: list[dict[str, Any]], finish: str | None = None, **top: Any) -> Any:
    from google.genai import types

    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    if finish is not None:
        candidate["finishReason"] = finish
    data = {"candidates": [candidate], "responseId": "r1", "modelVersion": "gemini-x", **top}
    return types.GenerateContentResponse.model_validate(data)


def _signature() -> str:
    return base64.b64encode(b"M005q-signature").decode()


def gemini_cases() -> list[Case]:
    sig = _signature()
    rows: list[tuple[str, list[list[dict[str, Any]]], set[str], list[dict[str, Any]]]] = [
        (
            "text",
            [[{"text": "M000q"}], [{"text": "M001q", "thoughtSignature": sig}]],
            {"part:text", "part:thoughtSignature"},
            [{"text": "M000qM001q", "thoughtSignature": sig}],
        ),
        (
            "thought",
            [[{"text": "M000q", "thought": True}], [{"text": "M001q", "thought": True}]],
            {"part:text", "part:thought"},
            [{"text": "M000qM001q", "thought": True}],
        ),
        (
            "function_call",
            [
                [
                    {
                        "functionCall": {"id": "c1", "name": "f", "args": {"q": "M000q"}},
                        "thoughtSignature": sig,
                    }
                ]
            ],
            {"part:functionCall", "function_call:id", "function_call:name", "function_call:args"},
            [
                {
                    "functionCall": {"id": "c1", "name": "f", "args": {"q": "M000q"}},
                    "thoughtSignature": sig,
                }
            ],
        ),
        (
            "partial_args",
            [
                [{"functionCall": {"name": "f", "willContinue": True}}],
                [
                    {
                        "functionCall": {
                            "partialArgs": [
                                {"jsonPath": "$.q", "stringValue": "M000q", "willContinue": True}
                            ],
                            "willContinue": True,
                        }
                    }
                ],
                [
                    {
                        "functionCall": {
                            "partialArgs": [{"jsonPath": "$.q", "stringValue": "M001q"}],
                            "willContinue": True,
                        }
                    }
                ],
                [{"functionCall": {}}],
            ],
            {
                "part:functionCall",
                "function_call:name",
                "function_call:partialArgs",
                "function_call:willContinue",
            },
            [{"functionCall": {"name": "f", "args": {"q": "M000qM001q"}}}],
        ),
    ]
    for name, part in _OWN_PARTS.items():
        rows.append((name, [[part]], {f"part:{name}"}, [part]))
    for name, value in _BESIDE_VALUES.items():
        # beside a text part, a thought and a function call: kept with each
        text = {"text": "M001q", name: value}
        thought = {"text": "M002q", "thought": True, name: value}
        call = {"functionCall": {"name": "f", "args": {"q": "M003q"}}, name: value}
        rows.append(
            (f"beside-{name}", [[thought], [text], [call]], {f"part:{name}"}, [thought, text, call])
        )
    cases = []
    for name, chunks, covers, parts in rows:
        for cut in (False, True):
            events = [_gemini_chunk(p) for p in chunks]
            if not cut:
                usage = {"promptTokenCount": 3, "candidatesTokenCount": 2, "totalTokenCount": 5}
                events.append(_gemini_chunk([], "STOP", usageMetadata=usage))
            kept = markers_in(chunks)
            cases.append(
                Case(
                    id=f"gemini-{name}{'-cut' if cut else ''}",
                    provider="gemini",
                    events=events,
                    covers=covers,
                    kept=kept,
                    # compare with the rule: the parts render back as sent, joined
                    reference=None if cut else (lambda parts=parts: parts),
                    rendered=lambda out: out["candidates"][0]["content"]["parts"],
                )
            )
    return cases
