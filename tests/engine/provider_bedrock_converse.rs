//! The `"bedrock-converse"` adapter without Python (`cargo test --no-default-features --test
//! engine_provider_bedrock_converse`): the leaves of each event kind, key order included, the
//! errors, the end-of-stream anomalies, and a recorded stream through the aggregator.

use crate::common;
use common::*;

use fastmerge::engine::providers::Adapter;
use serde_json::json;

fn adapter() -> Box<dyn Adapter> {
    adapter_for("bedrock-converse")
}

#[test]
fn deltas_and_starts() {
    let mut a = adapter();
    assert_eq!(
        leaves(
            a.as_mut(),
            json!({"messageStart": {"p": "x", "role": "assistant"}})
        ),
        text(json!([[0, {"role": "assistant"}]]))
    );
    assert_eq!(
        leaves(
            a.as_mut(),
            json!({"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"reasoningContent": {"signature": "S"}}, "p": "x"}})
        ),
        text(
            json!([[0, {"parts": [{"part": "reasoning", "text": "", "payload": {"provider": "bedrock-converse", "kind": "signature", "data": "S"}, "index": 0}]}]])
        )
    );
    assert_eq!(
        leaves(
            a.as_mut(),
            json!({"contentBlockDelta": {"contentBlockIndex": 1, "delta": {"text": ""}}})
        ),
        "[]"
    );
    assert_eq!(
        leaves(
            a.as_mut(),
            json!({"contentBlockStart": {"contentBlockIndex": 2, "start": {"toolUse": {"toolUseId": "t", "name": "f", "type": "tool_use"}}}})
        ),
        text(
            json!([[0, {"parts": [{"part": "tool_call", "id": "t", "name": "f", "provider_index": 2, "extra": {"type": "tool_use"}}]}]])
        )
    );
    assert_eq!(
        leaves(
            a.as_mut(),
            json!({"contentBlockDelta": {"contentBlockIndex": 2, "delta": {"toolUse": {"input": "{\"a\""}}}})
        ),
        text(
            json!([[0, {"parts": [{"part": "tool_call", "provider_index": 2, "arguments": "{\"a\""}]}]])
        )
    );
    // cut here: the open blocks are flagged in the order they opened
    assert_eq!(
        text(json!(a
            .end()
            .iter()
            .map(|(c, l)| json!([c, to_json(l)]))
            .collect::<Vec<_>>())),
        text(json!([[0, {"anomalies": [
            {"code": "truncated", "detail": "the stream ended inside content block 0 (reasoningContent)"},
            {"code": "truncated", "detail": "the stream ended inside content block 1 (text)"},
            {"code": "truncated", "detail": "the stream ended inside tool call 't' (content block 2); its arguments are kept as streamed", "tool_call": {"id": "t", "provider_index": 2}}
        ]}]]))
    );
}

#[test]
fn stop_metadata_and_exceptions() {
    let mut a = adapter();
    assert_eq!(
        leaves(
            a.as_mut(),
            json!({"messageStop": {"p": "x", "stopReason": "end_turn", "additionalModelResponseFields": {"k": 1}}})
        ),
        text(
            json!([[0, {"finish_reason": "end_turn", "status": "complete", "provider_metadata": {"additionalModelResponseFields": {"k": 1}}}]])
        )
    );
    assert_eq!(
        leaves(
            a.as_mut(),
            json!({"metadata": {"metrics": {"latencyMs": 5}, "p": "x", "usage": {"inputTokens": 1, "outputTokens": 2, "totalTokens": 3, "cacheReadInputTokens": 4}}})
        ),
        text(
            json!([[0, {"usage": {"input_tokens": 1, "output_tokens": 2, "total_tokens": 3, "cache_read_tokens": 4}, "provider_metadata": {"metrics": {"latencyMs": 5}}}]])
        )
    );
    assert_eq!(
        leaves(
            a.as_mut(),
            json!({"validationException": {"message": "bad", "p": "x"}})
        ),
        text(
            json!([[0, {"status": "failed", "provider_metadata": {"error": {"type": "validationException", "message": "bad"}}}]])
        )
    );
    assert!(a.end().is_empty());
}

#[test]
fn errors() {
    let cases = [
        (
            json!({"a": {}, "b": {}}),
            "an event is an object with one key, its event type; got 2 keys",
        ),
        (
            json!({"metadata": 1}),
            "metadata: the payload must be an object, got number",
        ),
        (
            json!({"contentBlockDelta": {"contentBlockIndex": null, "delta": {}}}),
            "contentBlockDelta: contentBlockIndex must be an integer, got null",
        ),
        (
            json!({"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"text": []}}}),
            "contentBlockDelta: delta.text must be a string, got array",
        ),
        (
            json!({"contentBlockStart": {"contentBlockIndex": 0}}),
            "contentBlockStart: start must be an object, got null",
        ),
    ];
    assert_event_errors("bedrock-converse", cases);
}

#[test]
fn recorded_stream() {
    let messages = common::recorded(
        "bedrock-converse",
        "bedrock_converse/nova-micro-tool-use.jsonl",
        7,
    );
    let message = &messages[0];
    assert_eq!(message["status"], "complete");
    assert_eq!(message["finish_reason"], "tool_use");
    assert_eq!(message["anomalies"], json!([]));
    assert_eq!(message["parts"][1]["name"], "get_temperature");
    assert_eq!(message["parts"][1]["arguments"], "{\"city\":\"Paris\"}");
    assert_eq!(message["usage"]["total_tokens"], 562);
}

/// E104: an image block's start (its format) and delta (its source) make one part, emitted at
/// the block's stop; a second bytes piece joins the base64 text when the join is exact.
#[test]
fn an_image_is_one_block() {
    let mut a = adapter();
    assert_eq!(
        leaves(
            a.as_mut(),
            json!({"contentBlockStart": {"contentBlockIndex": 0, "start": {"image": {"format": "png"}}}})
        ),
        "[]"
    );
    for piece in ["YWJj", "ZGU="] {
        assert_eq!(
            leaves(
                a.as_mut(),
                json!({"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"image": {"source": {"bytes": piece}}}}})
            ),
            "[]"
        );
    }
    assert_eq!(
        leaves(
            a.as_mut(),
            json!({"contentBlockStop": {"contentBlockIndex": 0}})
        ),
        text(
            json!([[0, {"parts": [{"part": "unknown", "provider": "bedrock-converse", "kind": "image", "raw": {"image": {"format": "png", "source": {"bytes": "YWJjZGU="}}}, "index": 0}]}]])
        )
    );
    assert!(a.end().is_empty());
}

/// E104: an image block still open when the stream ends is emitted as it came, flagged.
#[test]
fn a_cut_image_is_kept() {
    let mut a = adapter();
    leaves(
        a.as_mut(),
        json!({"contentBlockStart": {"contentBlockIndex": 2, "start": {"image": {"format": "jpeg"}}}}),
    );
    assert_eq!(
        show_leaves(&a.end()),
        text(
            json!([[0, {"parts": [{"part": "unknown", "provider": "bedrock-converse", "kind": "image", "raw": {"image": {"format": "jpeg"}}, "index": 2}], "anomalies": [{"code": "truncated", "detail": "the stream ended inside content block 2 (image)"}]}]])
        )
    );
}

/// A block whose deltas carry signed reasoning and a redacted blob keeps both: the kind that
/// came second is a part of its own at a spare index (one part holds one payload); a second
/// piece of either kind goes where its kind went first.
#[test]
fn signed_and_redacted_reasoning_in_one_block_are_two_parts() {
    let mut a = adapter();
    let reasoning = |index: i64, content: serde_json::Value| json!({"contentBlockDelta": {"contentBlockIndex": index, "delta": {"reasoningContent": content}}});
    assert_eq!(
        leaves(a.as_mut(), reasoning(0, json!({"text": "why"}))),
        text(json!([[0, {"parts": [{"part": "reasoning", "text": "why", "index": 0}]}]]))
    );
    assert_eq!(
        leaves(a.as_mut(), reasoning(0, json!({"redactedContent": "AQ=="}))),
        text(
            json!([[0, {"parts": [{"part": "reasoning", "text": "", "redacted": true, "payload": {"provider": "bedrock-converse", "kind": "redacted_content", "data": "AQ=="}, "index": -1}]}]])
        )
    );
    assert_eq!(
        leaves(a.as_mut(), reasoning(0, json!({"signature": "S"}))),
        text(
            json!([[0, {"parts": [{"part": "reasoning", "text": "", "payload": {"provider": "bedrock-converse", "kind": "signature", "data": "S"}, "index": 0}]}]])
        )
    );
    // another block, redacted first: its signed text is the next spare index
    leaves(a.as_mut(), reasoning(1, json!({"redactedContent": "Ag=="})));
    assert_eq!(
        leaves(a.as_mut(), reasoning(1, json!({"text": "so"}))),
        text(json!([[0, {"parts": [{"part": "reasoning", "text": "so", "index": -2}]}]]))
    );
    assert_eq!(
        leaves(a.as_mut(), reasoning(0, json!({"redactedContent": "Aw=="}))),
        text(
            json!([[0, {"parts": [{"part": "reasoning", "text": "", "redacted": true, "payload": {"provider": "bedrock-converse", "kind": "redacted_content", "data": "Aw=="}, "index": -1}]}]])
        )
    );
}

/// Rules §6.1: after messageStop an image start is a part at once (the aggregator refuses it
/// by its own event), never held to join the finished message at the stream's end.
#[test]
fn an_image_after_message_stop_is_not_held() {
    let mut a = adapter();
    leaves(
        a.as_mut(),
        json!({"messageStop": {"stopReason": "end_turn"}}),
    );
    assert_eq!(
        leaves(
            a.as_mut(),
            json!({"contentBlockStart": {"contentBlockIndex": 3, "start": {"image": {"format": "png"}}}})
        ),
        text(
            json!([[0, {"parts": [{"part": "unknown", "provider": "bedrock-converse", "kind": "image", "raw": {"image": {"format": "png"}}, "index": 3}]}]])
        )
    );
    assert!(a.end().is_empty());
}
