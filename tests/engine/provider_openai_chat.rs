//! The `"openai-chat"` adapter without Python (`cargo test --no-default-features --test
//! engine_provider_openai_chat`): the leaves of chunks, key order included, what repeats and
//! is not sent again, the anomalies, the errors, and hostile values without a panic.

use crate::common;
use common::*;

use fastmerge::engine::providers::Adapter;
use serde_json::json;

fn adapter() -> Box<dyn Adapter> {
    adapter_for("openai-chat")
}

#[test]
fn text_chunks_send_repeated_fields_once() {
    let mut a = adapter();
    let top = |delta: serde_json::Value, finish: serde_json::Value| {
        json!({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
               "system_fingerprint": null, "obfuscation": "zz",
               "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}]})
    };
    assert_eq!(
        leaves(
            a.as_mut(),
            top(json!({"role": "assistant", "content": ""}), json!(null))
        ),
        text(
            json!([[0, {"role": "assistant", "response_id": "c", "response_model": "m",
                         "provider_metadata": {"created": 1, "object": "chat.completion.chunk"}}]])
        )
    );
    assert_eq!(
        leaves(a.as_mut(), top(json!({"content": "Hi"}), json!(null))),
        text(json!([[0, {"parts": [{"part": "text", "text": "Hi"}]}]]))
    );
    assert_eq!(
        leaves(a.as_mut(), top(json!({}), json!("stop"))),
        text(json!([[0, {"finish_reason": "stop", "status": "complete"}]]))
    );
    // the usage chunk: normalized keys, the provider's others verbatim
    assert_eq!(
        leaves(
            a.as_mut(),
            json!({"id": "c", "choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 2,
                   "total_tokens": 5, "prompt_tokens_details": {"cached_tokens": 1}}})
        ),
        text(
            json!([[0, {"usage": {"input_tokens": 3, "output_tokens": 2, "total_tokens": 5,
                                   "prompt_tokens_details": {"cached_tokens": 1},
                                   "cache_read_tokens": 1},
                         "response_id": "c"}]])
        )
    );
    assert_eq!(a.end().len(), 0);
}

#[test]
fn reasoning_details_and_mistral_content() {
    let mut a = adapter();
    assert_eq!(
        leaves(
            a.as_mut(),
            json!({"choices": [{"index": 0, "delta": {"reasoning": "hm", "reasoning_details": [
                {"type": "reasoning.text", "text": "hm", "signature": "S", "format": "f", "index": 0}]}}]})
        ),
        text(json!([[0, {"parts": [{"part": "reasoning", "text": "hm",
                                    "index": 0,
                                    "payload": {"provider": "openai-chat", "kind": "reasoning.text", "data": "S"}}],
                         "provider_metadata": {"reasoning_field": "reasoning",
                                               "reasoning_details": {"0": {"type": "reasoning.text", "format": "f"}}}}]]))
    );
    assert_eq!(
        leaves(
            a.as_mut(),
            json!({"choices": [{"index": 0, "delta": {"content": [
                {"type": "thinking", "thinking": [{"type": "text", "text": "t"}]},
                {"type": "text", "text": "x"}, {"type": "image_url", "u": 1}]}}]})
        ),
        text(json!([[0, {"content_list": true, "parts": [
            {"part": "reasoning", "text": "t"}, {"part": "text", "text": "x"},
            {"part": "unknown", "provider": "openai-chat", "kind": "image_url",
             "raw": {"type": "image_url", "u": 1}}]}]]))
    );
}

#[test]
fn tool_call_anomalies_and_truncation() {
    let mut a = adapter();
    let call = |call: serde_json::Value| json!({"choices": [{"index": 1, "delta": {"tool_calls": [call]}}]});
    assert_eq!(
        leaves(
            a.as_mut(),
            call(json!({"index": 0, "function": {"arguments": "{"}}))
        ),
        text(
            json!([[1, {"parts": [{"part": "tool_call", "provider_index": 0, "arguments": "{"}],
                         "anomalies": [{"code": "delta_before_start",
                                        "detail": "choice 1: tool call index 0: arguments before the call's id and name"}]}]])
        )
    );
    leaves(
        a.as_mut(),
        call(json!({"index": 0, "id": "c1", "type": "function", "function": {"name": "f"}})),
    );
    assert_eq!(
        leaves(
            a.as_mut(),
            call(json!({"index": 0, "id": "c2", "function": {"name": "g", "arguments": "}"}}))
        ),
        text(
            json!([[1, {"parts": [{"part": "tool_call", "provider_index": 0, "id": "c2", "name": "g", "arguments": "}"}],
                         "anomalies": [{"code": "index_collision",
                                        "detail": "choice 1: tool call index 0 reused: call 'c2' after 'c1'"}]}]])
        )
    );
    assert_eq!(
        show_leaves(&a.end()),
        text(json!([[1, {"anomalies": [{"code": "truncated",
            "detail": "choice 1: the stream ended inside tool call 'c2' ('g') without a finish_reason; its arguments are kept as streamed",
            "tool_call": {"id": "c2", "name": "g"}}]}]]))
    );
}

#[test]
fn custom_body_without_type_is_a_custom_call() {
    let mut a = adapter();
    let chunk = |calls: serde_json::Value| json!({"id": "c", "model": "m", "choices": [{"index": 0, "delta": {"tool_calls": calls}}]});
    assert_eq!(
        leaves(
            a.as_mut(),
            chunk(
                json!([{"index": 0, "id": "t", "custom": {"name": "ApplyPatch", "input": "*** Begin"}}])
            )
        ),
        text(
            json!([[0, {"parts": [{"part": "tool_call", "provider_index": 0, "id": "t", "type": "custom", "name": "ApplyPatch", "arguments": "*** Begin"}], "response_id": "c", "response_model": "m"}]])
        )
    );
    assert_eq!(
        leaves(
            a.as_mut(),
            chunk(json!([{"index": 0, "custom": {"input": " Patch"}}]))
        ),
        text(
            json!([[0, {"parts": [{"part": "tool_call", "provider_index": 0, "type": "custom", "arguments": " Patch"}]}]])
        )
    );
}

#[test]
fn errors_name_the_field() {
    let cases = [
        (json!({"choices": 1}), "choices is not a list"),
        (json!({"usage": []}), "usage is not an object"),
        (
            json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"function": []}]}}]}),
            "choices[0].delta.tool_calls[0].function is not an object",
        ),
        (
            json!({"choices": [{"index": 0, "delta": {"content": [{"type": "thinking", "thinking": [1]}]}}]}),
            "choices[0].delta.content[0].thinking[0] is not an object",
        ),
    ];
    assert_event_errors("openai-chat", cases);
}

#[test]
fn hostile_values_never_panic() {
    let junk = [
        json!(null),
        json!(true),
        json!(-1),
        json!(1.5),
        json!(""),
        json!("null"),
        json!([]),
        json!({}),
        json!([null, 1, "x", {}]),
        json!({"type": "text", "text": 1}),
    ];
    let keys = [
        "index",
        "delta",
        "content",
        "tool_calls",
        "reasoning_details",
        "finish_reason",
        "token_ids",
        "usage",
        "choices",
        "x_groq",
        "error",
    ];
    for value in &junk {
        for key in keys {
            let mut a = adapter();
            let delta = json!({ key: value.clone() });
            let choice = json!({"index": 0, "delta": delta.clone(), key: value.clone()});
            for event in [
                json!({ key: value.clone() }),
                json!({"choices": [choice]}),
                json!({"choices": [{"index": 0, "delta": {"tool_calls": [delta.clone()]}}]}),
                json!({"choices": [{"index": 0, "delta": {"content": [delta.clone()], "reasoning_details": [delta]}}]}),
            ] {
                let _ = a.event(&convert(event));
            }
            let _ = a.end();
        }
    }
}
