//! The `"anthropic"` adapter without Python (`cargo test --no-default-features --test
//! engine_provider_anthropic`): the leaves of each event, key order included, the anomalies,
//! the errors, and a recorded stream through the aggregator.

use crate::common;
use common::*;

use fastmerge::engine::providers::Adapter;
use serde_json::json;

fn adapter() -> Box<dyn Adapter> {
    adapter_for("anthropic")
}

#[test]
fn message_events() {
    let mut a = adapter();
    assert_eq!(
        leaves(
            a.as_mut(),
            json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "model": "m", "content": [], "stop_reason": null, "stop_sequence": null, "container": {"id": "c"}, "usage": {"input_tokens": 10, "cache_read_input_tokens": 5, "cache_creation_input_tokens": null, "output_tokens": 1}}})
        ),
        text(
            json!([[0, {"role": "assistant", "response_id": "msg_1", "response_model": "m", "usage": {"input_tokens": 10, "cache_read_tokens": 5, "cache_creation_input_tokens": null, "output_tokens": 1}, "provider_metadata": {"container": {"id": "c"}}}]])
        )
    );
    assert_eq!(leaves(a.as_mut(), json!({"type": "ping"})), "[]");
    assert_eq!(
        leaves(
            a.as_mut(),
            json!({"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": null, "stop_details": null}, "usage": {"output_tokens": 42}, "context_management": {"applied_edits": []}})
        ),
        text(
            json!([[0, {"finish_reason": "end_turn", "final_usage": {"output_tokens": 42}, "provider_metadata": {"context_management": {"applied_edits": []}}}]])
        )
    );
    assert_eq!(
        leaves(a.as_mut(), json!({"type": "message_stop"})),
        text(json!([[0, {"status": "complete"}]]))
    );
    assert!(a.end().is_empty());
}

#[test]
fn blocks_and_deltas() {
    let mut a = adapter();
    assert_eq!(
        leaves(
            a.as_mut(),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": "", "signature": ""}})
        ),
        text(json!([[0, {"parts": [{"part": "reasoning", "text": "", "index": 0}]}]]))
    );
    assert_eq!(
        leaves(
            a.as_mut(),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "SIG"}})
        ),
        text(
            json!([[0, {"parts": [{"part": "reasoning", "text": "", "payload": {"provider": "anthropic", "kind": "signature", "data": "SIG"}, "index": 0}]}]])
        )
    );
    assert_eq!(
        leaves(
            a.as_mut(),
            json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "t", "name": "f", "input": {}, "caller": {"type": "direct"}}})
        ),
        text(
            json!([[0, {"parts": [{"part": "tool_call", "id": "t", "name": "f", "provider_index": 1, "extra": {"caller": {"type": "direct"}}}]}]])
        )
    );
    assert_eq!(
        leaves(
            a.as_mut(),
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "{\"a\""}})
        ),
        text(
            json!([[0, {"parts": [{"part": "tool_call", "provider_index": 1, "arguments": "{\"a\""}]}]])
        )
    );
    // a server tool block is kept whole, its JSON input parsed at its stop
    assert_eq!(
        leaves(
            a.as_mut(),
            json!({"type": "content_block_start", "index": 2, "content_block": {"type": "server_tool_use", "id": "s", "name": "web_search", "input": {}}})
        ),
        "[]"
    );
    assert_eq!(
        leaves(
            a.as_mut(),
            json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": "{\"q\": 1}"}})
        ),
        "[]"
    );
    assert_eq!(
        leaves(
            a.as_mut(),
            json!({"type": "content_block_stop", "index": 2})
        ),
        text(
            json!([[0, {"parts": [{"part": "unknown", "provider": "anthropic", "kind": "server_tool_use", "raw": {"type": "server_tool_use", "id": "s", "name": "web_search", "input": {"q": 1}}, "index": 2}]}]])
        )
    );
    // the stream ends: the thinking and tool blocks were never stopped
    assert_eq!(
        show_leaves(&a.end()),
        text(json!([[0, {"anomalies": [
            {"code": "truncated", "detail": "the thinking block at index 0 had no content_block_stop (the stream ended)"},
            {"code": "truncated", "detail": "the tool_use block 'f' at index 1 had no content_block_stop (the stream ended)", "tool_call": {"name": "f", "provider_index": 1}}
        ]}]]))
    );
}

#[test]
fn fallback_block_names_the_model() {
    let mut a = adapter();
    let block = json!({"type": "fallback", "from": {"model": "a"}, "to": {"model": "b"}, "trigger": {"type": "refusal"}});
    assert_eq!(
        leaves(
            a.as_mut(),
            json!({"type": "content_block_start", "index": 0, "content_block": block})
        ),
        text(json!([[0, {"response_model": "b"}]]))
    );
    assert_eq!(
        leaves(
            a.as_mut(),
            json!({"type": "content_block_stop", "index": 0})
        ),
        text(
            json!([[0, {"parts": [{"part": "unknown", "provider": "anthropic", "kind": "fallback", "raw": block, "index": 0}]}]])
        )
    );
    // no model name: the block alone
    assert_eq!(
        leaves(
            a.as_mut(),
            json!({"type": "content_block_start", "index": 1, "content_block": {"type": "fallback", "to": {"model": ""}}})
        ),
        "[]"
    );
}

#[test]
fn quirks() {
    let mut a = adapter();
    assert_eq!(
        leaves(
            a.as_mut(),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "x"}})
        ),
        text(
            json!([[0, {"anomalies": [{"code": "delta_before_start", "detail": "text_delta at index 0 before any content_block_start: kept as a text block"}], "parts": [{"part": "text", "text": "x", "index": 0}]}]])
        )
    );
    assert_eq!(
        leaves(
            a.as_mut(),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})
        ),
        text(json!([[0, {"parts": [{"part": "text", "text": "", "index": 0, "opened": true}]}]]))
    );
    assert_eq!(
        leaves(
            a.as_mut(),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "redacted_thinking", "data": "D"}})
        ),
        text(
            json!([[0, {"anomalies": [{"code": "index_collision", "detail": "content_block_start of a redacted_thinking block at index 0, already used by a text block: kept apart as part index -1"}], "parts": [{"part": "reasoning", "text": "", "payload": {"provider": "anthropic", "kind": "redacted_thinking", "data": "D"}, "redacted": true, "index": -1}]}]])
        )
    );
    assert_eq!(
        leaves(
            a.as_mut(),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "y"}})
        ),
        text(
            json!([[0, {"anomalies": [{"code": "mismatched_delta", "detail": "text_delta for the redacted_thinking block at index 0: kept as a part of its own"}], "parts": [{"part": "text", "text": "y", "index": -2}]}]])
        )
    );
    assert_eq!(
        leaves(
            a.as_mut(),
            json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
        ),
        text(
            json!([[0, {"status": "failed", "provider_metadata": {"error": {"type": "overloaded_error", "message": "Overloaded"}}}]])
        )
    );
    assert!(
        a.end().is_empty(),
        "an error is a terminal signal: no truncated anomaly"
    );
}

#[test]
fn errors() {
    let cases = [
        (
            json!({"index": 0}),
            "an event needs a string 'type', not null",
        ),
        (
            json!({"type": "message_start", "message": 1}),
            "message_start: 'message' must be an object, not number",
        ),
        (
            json!({"type": "content_block_start", "index": 1.0, "content_block": {"type": "text"}}),
            "content_block_start: 'index' must be an integer, not number",
        ),
        (
            json!({"type": "content_block_delta", "index": 0, "delta": []}),
            "content_block_delta: 'delta' must be an object with a string 'type'",
        ),
        (
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta"}}),
            "thinking_delta: 'thinking' must be a string, not null",
        ),
        (
            json!({"type": "message_delta", "usage": "3"}),
            "message_delta: 'usage' must be an object, not string",
        ),
    ];
    assert_event_errors("anthropic", cases);
}

#[test]
fn recorded_stream() {
    let messages = common::recorded(
        "anthropic",
        "anthropic_messages/sonnet37-max-tokens-truncated-tool-json.jsonl",
        7,
    );
    let message = &messages[0];
    assert_eq!(message["status"], "complete");
    assert_eq!(message["finish_reason"], "max_tokens");
    assert_eq!(message["anomalies"][0]["code"], "truncated");
    let arguments = message["parts"][1]["arguments"]
        .as_str()
        .unwrap_or_default();
    assert!(arguments.ends_with("\n\"Filing taxes"));
    assert_eq!(message["usage"]["output_tokens"], 124);
    assert_eq!(message["usage"]["input_tokens"], 450);
}

/// E101: each `compaction_delta` holds the block's whole content so far: its fields replace
/// the block's (the SDK's rule), never appended.
#[test]
fn compaction_delta_replaces() {
    let mut a = adapter();
    leaves(
        a.as_mut(),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "compaction", "content": null}}),
    );
    for content in ["Part one.", "Part one. Part two."] {
        assert_eq!(
            leaves(
                a.as_mut(),
                json!({"type": "content_block_delta", "index": 0, "delta": {"type": "compaction_delta", "content": content}})
            ),
            "[]"
        );
    }
    assert_eq!(
        leaves(
            a.as_mut(),
            json!({"type": "content_block_stop", "index": 0})
        ),
        text(
            json!([[0, {"parts": [{"part": "unknown", "provider": "anthropic", "kind": "compaction", "raw": {"type": "compaction", "content": "Part one. Part two."}, "index": 0}]}]])
        )
    );
}

/// E102: a text block started with `citations: []` keeps the empty list in its part.
#[test]
fn empty_citations_are_kept() {
    let mut a = adapter();
    assert_eq!(
        leaves(
            a.as_mut(),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": "", "citations": []}})
        ),
        text(
            json!([[0, {"parts": [{"part": "text", "text": "", "citations": [], "index": 0, "opened": true}]}]])
        )
    );
}
