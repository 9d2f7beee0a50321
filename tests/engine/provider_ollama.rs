//! The `"ollama"` adapter without Python (`cargo test --no-default-features --test
//! engine_provider_ollama`): the leaves of generate and chat objects, key order included, the
//! errors, and a recorded stream through the aggregator.

use crate::common;
use common::*;

use fastmerge::engine::providers::Adapter;
use serde_json::json;

fn adapter() -> Box<dyn Adapter> {
    adapter_for("ollama")
}

#[test]
fn generate_objects() {
    let mut a = adapter();
    assert_eq!(
        leaves(
            a.as_mut(),
            json!({"model": "m", "created_at": "t0", "response": "", "thinking": "hm", "done": false})
        ),
        text(
            json!([[0, {"role": "assistant", "parts": [{"part": "reasoning", "text": "hm"}], "response_model": "m", "provider_metadata": {"api": "generate", "created_at": "t0"}}]])
        )
    );
    assert_eq!(
        leaves(
            a.as_mut(),
            json!({"model": "m", "created_at": "t1", "response": "Hi", "done": false})
        ),
        text(json!([[0, {"parts": [{"part": "text", "text": "Hi"}]}]]))
    );
    assert_eq!(
        leaves(
            a.as_mut(),
            json!({"model": "m", "created_at": "t2", "response": "", "done": true, "done_reason": "stop", "context": [1], "total_duration": 9, "prompt_eval_count": 3, "eval_count": 4})
        ),
        text(
            json!([[0, {"finish_reason": "stop", "usage": {"input_tokens": 3, "output_tokens": 4}, "status": "complete", "provider_metadata": {"created_at": "t2", "context": [1], "total_duration": 9}}]])
        )
    );
    assert!(a.end().is_empty());
}

#[test]
fn chat_tool_calls() {
    let mut a = adapter();
    assert_eq!(
        leaves(
            a.as_mut(),
            json!({"model": "m", "message": {"role": "assistant", "content": "", "tool_calls": [
                {"function": {"name": "f", "arguments": {"x": 1}}},
                {"id": "c2", "function": {"index": 1, "name": "g", "arguments": {}}}
            ]}, "done": false})
        ),
        text(json!([[0, {"role": "assistant", "parts": [
            {"part": "tool_call", "name": "f", "arguments": {"x": 1}, "provider_index": 0},
            {"part": "tool_call", "id": "c2", "name": "g", "arguments": {}, "provider_index": 1, "extra": {"function": {"index": 1}}}
        ], "response_model": "m", "provider_metadata": {"api": "chat"}}]]))
    );
    assert_eq!(
        leaves(
            a.as_mut(),
            json!({"message": {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "f"}}]}})
        ),
        text(json!([[0, {"parts": [{"part": "tool_call", "name": "f", "provider_index": 2}]}]]))
    );
    assert_eq!(
        leaves(a.as_mut(), json!({"error": "boom"})),
        text(json!([[0, {"status": "failed", "provider_metadata": {"error": "boom"}}]]))
    );
}

#[test]
fn errors() {
    let cases = [
        (json!({"done": "yes"}), "done must be a boolean, got string"),
        (
            json!({"response": 1}),
            "response must be a string, got number",
        ),
        (
            json!({"message": []}),
            "message must be an object, got array",
        ),
        (
            json!({"message": {"tool_calls": [{"function": 1}]}}),
            "message.tool_calls[].function must be an object, got number",
        ),
    ];
    assert_event_errors("ollama", cases);
}

#[test]
fn recorded_stream() {
    let messages = common::recorded(
        "ollama",
        "ollama/generate-qwen3-8b-local-inline-think.jsonl",
        5,
    );
    let message = &messages[0];
    assert_eq!(message["status"], "complete");
    assert_eq!(message["finish_reason"], "stop");
    assert_eq!(message["anomalies"], json!([]));
    let text = message["parts"][0]["text"].as_str().unwrap_or_default();
    assert!(text.starts_with("<think>\n"));
    assert_eq!(message["usage"]["input_tokens"], 15);
    assert!(message["provider_metadata"]["context"].is_array());
}
