//! The `"gemini"` adapter without Python (`cargo test --no-default-features --test
//! engine_provider_gemini`): the leaves of each event, key order included, streamed arguments,
//! the anomalies and errors, and a recorded Vertex stream through the aggregator.

use crate::common;
use common::*;

use fastmerge::engine::providers::Adapter;
use serde_json::json;

fn adapter() -> Box<dyn Adapter> {
    adapter_for("gemini")
}

#[test]
fn text_signature_usage_and_metadata() {
    let mut a = adapter();
    assert_eq!(
        leaves(
            a.as_mut(),
            json!({"candidates": [{"content": {"parts": [{"text": "hi"}, {"text": "", "thoughtSignature": "S"}], "role": "model"}, "index": 0, "groundingMetadata": {}}], "usageMetadata": {"promptTokenCount": 3, "candidatesTokenCount": 2, "thoughtsTokenCount": 1, "totalTokenCount": 6}, "modelVersion": "m", "responseId": "r", "createTime": "t"})
        ),
        text(
            json!([[0, {"role": "assistant", "parts": [{"part": "text", "text": "hi", "index": 0}, {"part": "text", "text": "", "index": 0, "attributes": {"payload": {"provider": "gemini", "kind": "thought_signature", "data": "S"}}}], "usage": {"input_tokens": 3, "output_tokens": 3, "total_tokens": 6, "reasoning_tokens": 1, "promptTokenCount": 3, "candidatesTokenCount": 2, "thoughtsTokenCount": 1, "totalTokenCount": 6}, "response_id": "r", "response_model": "m", "provider_metadata": {"createTime": "t", "candidate": {"groundingMetadata": {}}}}]])
        )
    );
}

#[test]
fn streamed_arguments() {
    let mut a = adapter();
    assert_eq!(
        leaves(
            a.as_mut(),
            json!({"candidates": [{"content": {"parts": [{"functionCall": {"name": "f", "willContinue": true}, "thoughtSignature": "T"}]}}]})
        ),
        text(
            json!([[0, {"role": "assistant", "parts": [{"part": "tool_call", "name": "f", "provider_index": 0, "payload": {"provider": "gemini", "kind": "thought_signature", "data": "T"}}]}]])
        )
    );
    assert_eq!(
        leaves(
            a.as_mut(),
            json!({"candidates": [{"content": {"parts": [{"functionCall": {"partialArgs": [{"jsonPath": "$.a[0].b", "stringValue": "x", "willContinue": true}], "willContinue": true}}]}}]})
        ),
        text(
            json!([[0, {"role": "assistant", "parts": [{"part": "tool_call", "provider_index": 0, "arguments": "{\"a\":[{\"b\":\"x"}]}]])
        )
    );
    assert_eq!(
        leaves(
            a.as_mut(),
            json!({"candidates": [{"content": {"parts": [{"functionCall": {"partialArgs": [{"jsonPath": "$.n", "numberValue": 0.00001}, {"jsonPath": "$.m", "numberValue": 1e16}], "willContinue": true}}]}}]})
        ),
        text(
            json!([[0, {"role": "assistant", "parts": [{"part": "tool_call", "provider_index": 0, "arguments": "\"}],\"n\":1e-05,\"m\":1e+16"}]}]])
        )
    );
    assert_eq!(
        leaves(
            a.as_mut(),
            json!({"candidates": [{"content": {"parts": [{"functionCall": {}}]}, "finishReason": "STOP"}]})
        ),
        text(
            json!([[0, {"role": "assistant", "parts": [{"part": "tool_call", "provider_index": 0, "arguments": "}"}], "finish_reason": "STOP", "status": "complete"}]])
        )
    );
    assert_eq!(show_leaves(&a.end()), "[]");
}

#[test]
fn cut_streamed_call_is_truncated_at_the_end() {
    let mut a = adapter();
    leaves(
        a.as_mut(),
        json!({"candidates": [{"content": {"parts": [{"functionCall": {"name": "f", "partialArgs": [{"jsonPath": "$.a", "stringValue": "x", "willContinue": true}], "willContinue": true}}]}}]}),
    );
    assert_eq!(
        show_leaves(&a.end()),
        text(
            json!([[0, {"anomalies": [{"code": "truncated", "detail": "call 'f': the stream ended before its streamed arguments did", "tool_call": {"name": "f", "provider_index": 0}}]}]])
        )
    );
}

#[test]
fn errors() {
    let cases = [
        (
            json!({"candidates": "x"}),
            "candidates must be an array, got string",
        ),
        (
            json!({"candidates": [{"index": 1.5}]}),
            "candidates[0].index must be an integer, got number",
        ),
        (
            json!({"candidates": [{"content": {"parts": [{"functionCall": {"name": "f", "partialArgs": [{"jsonPath": "$x"}]}}]}}]}),
            "candidates[0].content.parts[0].functionCall.partialArgs[0].jsonPath '$x' is not a JSON path",
        ),
        (
            json!({"usageMetadata": 3}),
            "usageMetadata must be an object, got number",
        ),
    ];
    assert_event_errors("gemini", cases);
}

#[test]
fn recorded_vertex_stream() {
    let messages = common::recorded(
        "gemini",
        "gemini/vertex-gemini31-pro-partial-args-streaming.jsonl",
        0,
    );
    assert_eq!(messages.len(), 1);
    let message = &messages[0];
    assert_eq!(message["status"], json!("complete"));
    let parts = message["parts"].as_array().expect("parts");
    let args: Vec<&serde_json::Value> = parts.iter().map(|p| &p["arguments"]).collect();
    assert_eq!(
        args,
        [
            &json!("{\"location\":\"Boston\"}"),
            &json!("{\"location\":\"San Francisco\"}")
        ]
    );
    assert_eq!(message["usage"]["total_tokens"], json!(181));
}
