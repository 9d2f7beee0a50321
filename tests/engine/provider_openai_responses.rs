//! The `"openai-responses"` adapter without Python (`cargo test --no-default-features --test
//! engine_provider_openai_responses`): the leaves of item, delta and done events, key order
//! included, truncation at the end, the errors, and a recorded stream through the aggregator.

use crate::common;
use common::*;

use fastmerge::engine::providers::Adapter;
use serde_json::json;

fn adapter() -> Box<dyn Adapter> {
    adapter_for("openai-responses")
}

#[test]
fn message_text_and_done() {
    let mut a = adapter();
    assert_eq!(
        leaves(
            a.as_mut(),
            json!({"type": "response.created", "response": {"id": "r1", "model": "m", "output": [1], "usage": null, "status": "in_progress"}})
        ),
        text(
            json!([[0, {"role": "assistant", "response_id": "r1", "response_model": "m",
            "provider_metadata": {"response": {"id": "r1", "model": "m", "output": [], "usage": null, "status": "in_progress"}}}]])
        )
    );
    assert_eq!(
        leaves(
            a.as_mut(),
            json!({"type": "response.output_item.added", "output_index": 0, "item": {"type": "message", "id": "m0", "status": "in_progress", "content": []}})
        ),
        text(
            json!([[0, {"provider_metadata": {"output_items": {"0": {"type": "message", "id": "m0", "status": "in_progress", "content": []}}}}]])
        )
    );
    assert_eq!(
        leaves(
            a.as_mut(),
            json!({"type": "response.output_text.delta", "output_index": 0, "content_index": 0, "delta": "Hel", "logprobs": [{"token": "Hel"}]})
        ),
        text(
            json!([[0, {"parts": [{"part": "text", "text": "Hel", "index": 0}], "logprobs": {"content": [{"token": "Hel"}]}}]])
        )
    );
    assert_eq!(
        leaves(
            a.as_mut(),
            json!({"type": "response.output_text.done", "output_index": 0, "content_index": 0, "text": "Hello"})
        ),
        text(
            json!([[0, {"parts": [{"part": "text", "text": "lo", "index": 0}], "anomalies": [{"code": "mismatched_delta",
            "detail": "output_text 0:0: the done text extends the streamed deltas (3 of 5 characters); the rest was added"}]}]])
        )
    );
    assert_eq!(
        leaves(
            a.as_mut(),
            json!({"type": "response.output_item.done", "output_index": 0, "item": {"type": "message", "id": "m0", "status": "completed",
                "content": [{"type": "output_text", "text": "Hello", "annotations": []}]}})
        ),
        text(
            json!([[0, {"parts": [{"part": "text", "text": "", "attributes": {"type": "output_text", "annotations": []}, "index": 0}],
            "provider_metadata": {"output_items": {"0": {"type": "message", "id": "m0", "status": "completed", "content": []}}}}]])
        )
    );
    assert!(a.end().is_empty());
}

#[test]
fn reasoning_and_call() {
    let mut a = adapter();
    assert_eq!(
        leaves(
            a.as_mut(),
            json!({"type": "response.reasoning_summary_text.delta", "output_index": 0, "summary_index": 0, "delta": "S"})
        ),
        text(
            json!([[0, {"role": "assistant", "parts": [{"part": "reasoning", "text": "", "summary": "S", "index": 500}],
            "anomalies": [{"code": "delta_before_start", "detail": "response.reasoning_summary_text.delta at output_index 0 before its output_item.added"}]}]])
        )
    );
    assert_eq!(
        leaves(
            a.as_mut(),
            json!({"type": "response.output_item.done", "output_index": 0, "item": {"id": "rs", "type": "reasoning", "encrypted_content": "E",
                "summary": [{"type": "summary_text", "text": "S"}]}})
        ),
        text(
            json!([[0, {"parts": [{"part": "reasoning", "text": "", "payload": {"provider": "openai-responses", "kind": "encrypted_content", "data": "E"}, "index": 500}],
            "provider_metadata": {"output_items": {"0": {"id": "rs", "type": "reasoning", "encrypted_content": null, "summary": []}}}}]])
        )
    );
    assert_eq!(
        leaves(
            a.as_mut(),
            json!({"type": "response.output_item.added", "output_index": 1, "item": {"type": "function_call", "id": "fc", "call_id": "c1", "name": "f", "arguments": ""}})
        ),
        text(
            json!([[0, {"parts": [{"part": "tool_call", "id": "c1", "name": "f", "provider_index": 1, "response_item_id": "fc"}],
            "provider_metadata": {"output_items": {"1": {"type": "function_call", "id": "fc", "call_id": "c1", "name": "f", "arguments": ""}}}}]])
        )
    );
    assert_eq!(
        leaves(
            a.as_mut(),
            json!({"type": "response.function_call_arguments.delta", "output_index": 1, "delta": "{\"a\""})
        ),
        text(
            json!([[0, {"parts": [{"part": "tool_call", "provider_index": 1, "arguments": "{\"a\""}]}]])
        )
    );
    let end = a.end();
    assert_eq!(end.len(), 1);
    assert_eq!(
        text(to_json(&end[0].1)),
        text(
            json!({"anomalies": [{"code": "truncated", "detail": "output_index 1: function_call 'c1' ended before its output_item.done", "tool_call": {"id": "c1", "provider_index": 1}}]})
        )
    );
}

#[test]
fn status_leaves() {
    let mut a = adapter();
    assert_eq!(
        leaves(
            a.as_mut(),
            json!({"type": "error", "sequence_number": 1, "code": "E", "message": "m"})
        ),
        text(
            json!([[0, {"role": "assistant", "finish_reason_normalized": "error", "provider_metadata": {"error": {"code": "E", "message": "m"}}, "status": "failed"}]])
        )
    );
    let mut a = adapter();
    assert_eq!(
        leaves(
            a.as_mut(),
            json!({"type": "response.incomplete", "response": {"id": "r", "incomplete_details": {"reason": "max_output_tokens"},
                "usage": {"input_tokens": 1, "output_tokens": 2, "input_tokens_details": {"cached_tokens": 1}}}})
        ),
        text(
            json!([[0, {"role": "assistant", "usage": {"input_tokens": 1, "output_tokens": 2, "input_tokens_details": {"cached_tokens": 1}, "cache_read_tokens": 1},
            "finish_reason": "max_output_tokens", "finish_reason_normalized": "length", "response_id": "r",
            "provider_metadata": {"response": {"id": "r", "incomplete_details": {"reason": "max_output_tokens"}, "usage": null}}}]])
        )
    );
    assert!(a.end().is_empty());
}

#[test]
fn errors() {
    let cases = [
        (
            json!({"type": 1}),
            "an event's 'type' must be a str, not int",
        ),
        (
            json!({"type": "response.completed", "response": []}),
            "response.completed: 'response' must be a dict, not list",
        ),
        (
            json!({"type": "response.output_text.delta", "output_index": true, "delta": "x"}),
            "response.output_text.delta: 'output_index' must be an int, not bool",
        ),
        (
            json!({"type": "response.output_text.delta", "output_index": 0}),
            "response.output_text.delta: 'delta' must be a str, not NoneType",
        ),
        (
            json!({"type": "response.output_item.done", "output_index": 0, "item": {"type": "reasoning", "summary": [1]}}),
            "response.output_item.done: 'item.summary[0]' must be a dict, not int",
        ),
    ];
    assert_event_errors("openai-responses", cases);
}

#[test]
fn recorded_stream() {
    let messages = common::recorded(
        "openai-responses",
        "openai_responses/gpt55-phase-text-then-function-call.jsonl",
        7,
    );
    let message = &messages[0];
    assert_eq!(message["status"], "complete");
    assert_eq!(message["anomalies"], json!([]));
    let parts = message["parts"].as_array().cloned().unwrap_or_default();
    let kinds: Vec<&str> = parts.iter().filter_map(|p| p["part"].as_str()).collect();
    assert_eq!(kinds, ["reasoning", "text", "tool_call"]);
    assert_eq!(parts[0]["payload"]["kind"], "encrypted_content");
    assert_eq!(parts[2]["arguments"], "{\"country\":\"PotatoLand\"}");
    assert_eq!(message["usage"]["reasoning_tokens"], 26);
    assert_eq!(
        message["provider_metadata"]["output_items"]["1"]["phase"],
        "commentary"
    );
}

#[test]
fn cut_tool_items_keep_their_deltas() {
    // E99: a cut MCP call keeps its arguments, with its status, flagged truncated
    let mut a = adapter();
    for event in [
        json!({"type": "response.output_item.added", "output_index": 0, "item": {"type": "mcp_call", "id": "mc", "arguments": ""}}),
        json!({"type": "response.mcp_call.in_progress", "output_index": 0, "item_id": "mc"}),
        json!({"type": "response.mcp_call_arguments.delta", "output_index": 0, "item_id": "mc", "delta": "{\"q\":\"is:open"}),
        json!({"type": "response.mcp_call_arguments.delta", "item_id": "mc", "delta": " label:bug"}),
        json!({"type": "response.shell_call_command.delta", "output_index": 1, "command_index": 0, "delta": "ls"}),
    ] {
        a.event(&convert(event)).unwrap();
    }
    assert_eq!(
        show_leaves(&a.end()),
        text(json!([[0, {"parts": [
            {"part": "unknown", "provider": "openai-responses", "kind": "mcp_call",
             "raw": {"type": "mcp_call", "id": "mc", "arguments": "{\"q\":\"is:open label:bug", "status": "in_progress"}, "index": 999},
            {"part": "unknown", "provider": "openai-responses", "kind": "shell_call",
             "raw": {"type": "shell_call", "action": {"commands": ["ls"]}}, "index": 1999}],
          "anomalies": [
            {"code": "truncated", "detail": "output_index 0: mcp_call 'mc' ended before its output_item.done"},
            {"code": "truncated", "detail": "output_index 1: shell_call None ended before its output_item.done"}]}]]))
    );
}

#[test]
fn swapped_deltas_wait_for_the_gap() {
    // E97: sequence numbers 6 then 5: the deltas are read in their order, out_of_order
    let mut a = adapter();
    a.event(&convert(
        json!({"type": "response.output_item.added", "sequence_number": 4, "output_index": 0,
        "item": {"type": "message", "id": "m", "content": []}}),
    ))
    .unwrap();
    assert_eq!(
        leaves(
            a.as_mut(),
            json!({"type": "response.output_text.delta", "sequence_number": 6, "output_index": 0, "delta": "lo"})
        ),
        "[]"
    );
    assert_eq!(
        leaves(
            a.as_mut(),
            json!({"type": "response.output_text.delta", "sequence_number": 5, "output_index": 0, "delta": "Hel"})
        ),
        text(json!([
            [0, {"anomalies": [{"code": "out_of_order", "detail": "response.output_text.delta: sequence_number 5 after 6"}]}],
            [0, {"parts": [{"part": "text", "text": "Hel", "index": 0}]}],
            [0, {"parts": [{"part": "text", "text": "lo", "index": 0}]}]]))
    );
}

#[test]
fn audio_joins_at_the_end() {
    // E100: the transcript and the base64 pieces joined, one part
    let mut a = adapter();
    for event in [
        json!({"type": "response.audio.transcript.delta", "delta": "Hi "}),
        json!({"type": "response.audio.delta", "delta": "UklG"}),
        json!({"type": "response.audio.transcript.delta", "delta": "there"}),
        json!({"type": "response.audio.delta", "delta": "RiQA"}),
        json!({"type": "response.audio.done"}),
    ] {
        assert!(a.event(&convert(event)).unwrap().is_empty());
    }
    assert_eq!(
        show_leaves(&a.end()),
        text(
            json!([[0, {"parts": [{"part": "unknown", "provider": "openai-responses", "kind": "audio",
            "raw": {"data": "UklGRiQA", "transcript": "Hi there"}}],
          "anomalies": [{"code": "truncated", "detail": "audio transcript ended before its response.audio.transcript.done"}]}]])
        )
    );
}
