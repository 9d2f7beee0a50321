//! The chunk merge engine (`engine::chunks`) on the engine's own values, without Python
//! (`cargo test --no-default-features`): leaves parsed with `Leaf::parse`, folded into a
//! `State` with `chunks::fold`, read with `chunks::materialize`. Expected values are what the
//! Python twin (python/fastmerge/_pure/chunks.py, `ChunkCore._data`) gives for the same leaves,
//! key order included; case numbers are those of docs/edge-cases.md.

use crate::common;
use common::*;

use fastmerge::engine::chunks::{self, Family, Leaf, Options, State};
use fastmerge::engine::error::EngineError;
use fastmerge::engine::value::{NativeError, NativeHost, Value};
use serde_json::json;

fn options(signature_merge: &str) -> Options {
    Options::parse(false, signature_merge, "merge").expect("options")
}

fn strict() -> Options {
    Options::parse(true, "replace", "merge").expect("options")
}

/// An assistant leaf: `{"role": "assistant", **fields}`, as the schema layer builds one.
fn leaf(fields: serde_json::Value) -> serde_json::Value {
    let mut out = serde_json::Map::new();
    out.insert("role".into(), json!("assistant"));
    out.extend(fields.as_object().expect("leaf fields").clone());
    serde_json::Value::Object(out)
}

/// A leaf with one part.
fn part_leaf(part: serde_json::Value) -> serde_json::Value {
    leaf(json!({ "parts": [part] }))
}

/// Fold `leaves` into a fresh assistant state.
fn try_fold(opts: Options, leaves: &[serde_json::Value]) -> Result<State<Value>, NativeError> {
    let host = NativeHost;
    let mut state = State::new(&host, Family::Assistant, Value::from("assistant"), opts);
    for item in leaves {
        let parsed = Leaf::parse(&host, Family::Assistant, convert(item.clone()));
        chunks::fold(&host, &mut state, &parsed)?;
    }
    Ok(state)
}

fn fold(opts: Options, leaves: &[serde_json::Value]) -> State<Value> {
    try_fold(opts, leaves).expect("fold")
}

fn read(state: &State<Value>, finish: bool) -> serde_json::Value {
    to_json(&chunks::materialize(&NativeHost, state, finish).expect("materialize"))
}

/// Order-sensitive equality (serde_json's own `==` ignores key order), with a readable diff.
fn assert_json(actual: &serde_json::Value, expected: &serde_json::Value) {
    assert_eq!(
        serde_json::to_string_pretty(actual).unwrap(),
        serde_json::to_string_pretty(expected).unwrap()
    );
}

/// The data of the fold before (`finish=False`) and at the end of the stream
/// (`finish=True`); reading at the end never changes what the state reads as afterwards.
fn check_with(
    opts: Options,
    leaves: &[serde_json::Value],
    before: &serde_json::Value,
    after: &serde_json::Value,
) {
    let state = fold(opts, leaves);
    assert_json(&read(&state, false), before);
    assert_json(&read(&state, true), after);
    assert_json(&read(&state, false), before);
}

/// A fold the end-of-stream rules leave as it is.
fn check(leaves: &[serde_json::Value], expected: &serde_json::Value) {
    check_with(options("replace"), leaves, expected, expected);
}

/// The materialized data of an assistant fold with nothing but a role: `changes` replace
/// fields (each must be one of them), the twin's key order kept.
fn message(changes: serde_json::Value) -> serde_json::Value {
    let mut data = json!({
        "family": "assistant",
        "role": "assistant",
        "name": null,
        "metadata": {},
        "parts": [],
        "content_list": false,
        "usage": null,
        "finish_reason": null,
        "finish_reason_normalized": null,
        "parser_content": null,
        "prompt_token_ids": null,
        "completion_token_ids": null,
        "logprobs": null,
        "response_id": null,
        "response_model": null,
        "provider_metadata": {},
        "provider_content": null,
        "refusal": null,
        "status": null,
        "anomalies": [],
        "choice_index": null,
    });
    let fields = data.as_object_mut().unwrap();
    for (key, value) in changes.as_object().expect("changes").clone() {
        let slot = fields
            .get_mut(&key)
            .unwrap_or_else(|| panic!("no field {key}"));
        *slot = value;
    }
    data
}

fn text_part(text: &str) -> serde_json::Value {
    json!({"part": "text", "text": text, "citations": null, "attributes": null, "index": null})
}

fn call_part(
    id: serde_json::Value,
    name: &str,
    arguments: &str,
    provider_index: serde_json::Value,
) -> serde_json::Value {
    json!({
        "part": "tool_call",
        "id": id,
        "type": "function",
        "name": name,
        "arguments": arguments,
        "provider_index": provider_index,
        "payload": null,
        "response_item_id": null,
        "extra": null,
        "call_index": null,
    })
}

fn anomaly(code: &str, detail: &str) -> serde_json::Value {
    json!({"code": code, "detail": detail})
}

/// The code of the anomaly a strict fold or read raises.
fn anomaly_code<T>(result: Result<T, NativeError>) -> &'static str {
    match result {
        Err(NativeError::Engine(EngineError::Anomaly { code, .. })) => code,
        Err(other) => panic!("not an anomaly: {other:?}"),
        Ok(_) => panic!("no anomaly raised"),
    }
}

// ---------------------------------------------------------------------------------------------
// B. Text and content

#[test]
fn e24_text_call_text_keep_their_order() {
    let leaves = [
        leaf(json!({"content": "a", "parts": [{"part": "text", "text": "a"}]})),
        part_leaf(
            json!({"part": "tool_call", "id": "c1", "name": "f", "arguments": "{}", "provider_index": 0}),
        ),
        leaf(json!({"content": "b", "parts": [{"part": "text", "text": "b"}]})),
    ];
    let parts = [
        text_part("a"),
        call_part(json!("c1"), "f", "{}", json!(0)),
        text_part("b"),
    ];
    check(&leaves, &message(json!({ "parts": parts })));
}

#[test]
fn e24_text_call_text_keep_their_order_without_index() {
    let leaves = [
        leaf(json!({"content": "a", "parts": [{"part": "text", "text": "a"}]})),
        part_leaf(json!({"part": "tool_call", "id": "c1", "name": "f", "arguments": "{}"})),
        leaf(json!({"content": "b", "parts": [{"part": "text", "text": "b"}]})),
    ];
    let parts = [
        text_part("a"),
        call_part(json!("c1"), "f", "{}", json!(null)),
        text_part("b"),
    ];
    check(&leaves, &message(json!({ "parts": parts })));
}

// ---------------------------------------------------------------------------------------------
// C. Tool calls

fn tc(index: i64, id: serde_json::Value, name: serde_json::Value, args: &str) -> serde_json::Value {
    part_leaf(json!({
        "part": "tool_call", "id": id, "name": name, "arguments": args, "provider_index": index,
    }))
}

#[test]
fn e25_interleaved_parallel_calls_stay_apart() {
    let leaves = [
        tc(0, json!("c1"), json!("f"), r#"{"a""#),
        tc(1, json!("c2"), json!("g"), r#"{"b""#),
        tc(0, json!(null), json!(null), ":1}"),
        tc(1, json!(null), json!(null), ":2}"),
    ];
    let parts = [
        call_part(json!("c1"), "f", r#"{"a":1}"#, json!(0)),
        call_part(json!("c2"), "g", r#"{"b":2}"#, json!(1)),
    ];
    check(&leaves, &message(json!({ "parts": parts })));
}

#[test]
fn e27_same_index_distinct_ids_are_two_calls() {
    let leaves = [
        tc(0, json!("c1"), json!("f"), "{}"),
        tc(0, json!("c2"), json!("g"), "{}"),
    ];
    let parts = [
        call_part(json!("c1"), "f", "{}", json!(0)),
        call_part(json!("c2"), "g", "{}", json!(0)),
    ];
    check(&leaves, &message(json!({ "parts": parts })));
}

#[test]
fn e29_repeated_name_is_not_concatenated() {
    let leaves = [
        tc(0, json!("c1"), json!("f"), "{"),
        tc(0, json!(null), json!("f"), "}"),
    ];
    let parts = [call_part(json!("c1"), "f", "{}", json!(0))];
    check(&leaves, &message(json!({ "parts": parts })));
}

#[test]
fn e29_another_name_is_a_name_conflict() {
    let leaves = [
        tc(0, json!("c1"), json!("f"), "{"),
        tc(0, json!("c1"), json!("g"), "}"),
    ];
    let expected = message(json!({
        "parts": [call_part(json!("c1"), "f", "{}", json!(0))],
        "anomalies": [anomaly("name_conflict", "call 'c1': name 'g' after 'f' ignored")],
    }));
    check(&leaves, &expected);
    assert_eq!(anomaly_code(try_fold(strict(), &leaves)), "name_conflict");
}

const AMBIGUOUS: &str =
    "a fragment with no index and no name among 2 calls went to the most recent one";

#[test]
fn e34_anonymous_continuation_goes_to_the_most_recent_call() {
    let leaves = [
        tc(0, json!("c1"), json!("f"), "{"),
        tc(1, json!("c2"), json!("g"), "{"),
        part_leaf(json!({"part": "tool_call", "arguments": "}"})),
    ];
    let expected = message(json!({
        "parts": [
            call_part(json!("c1"), "f", "{", json!(0)),
            call_part(json!("c2"), "g", "{}", json!(1)),
        ],
        "anomalies": [anomaly("ambiguous_fragment", AMBIGUOUS)],
    }));
    check(&leaves, &expected);
}

#[test]
fn e34_anonymous_continuation_without_indexes() {
    let leaves = [
        part_leaf(json!({"part": "tool_call", "id": "c1", "name": "f", "arguments": "{"})),
        part_leaf(json!({"part": "tool_call", "id": "c2", "name": "g", "arguments": "{"})),
        part_leaf(json!({"part": "tool_call", "id": null, "name": null, "arguments": "}"})),
    ];
    let expected = message(json!({
        "parts": [
            call_part(json!("c1"), "f", "{", json!(null)),
            call_part(json!("c2"), "g", "{}", json!(null)),
        ],
        "anomalies": [anomaly("ambiguous_fragment", AMBIGUOUS)],
    }));
    check(&leaves, &expected);
    assert_eq!(
        anomaly_code(try_fold(strict(), &leaves)),
        "ambiguous_fragment"
    );
}

#[test]
fn e36_placeholder_ids_and_names_are_absent() {
    for placeholder in ["", "null", " ", "\t\n"] {
        for name in [json!(null), json!(placeholder)] {
            let leaves = [
                tc(0, json!("call_1"), json!("f"), "{"),
                tc(0, json!(placeholder), name, "}"),
            ];
            let parts = [call_part(json!("call_1"), "f", "{}", json!(0))];
            check(&leaves, &message(json!({ "parts": parts })));
        }
    }
}

#[test]
fn e36_placeholder_ids_and_names_are_absent_without_index() {
    for placeholder in ["", "null", " ", "\t\n"] {
        for name in [json!(null), json!(placeholder)] {
            let leaves = [
                part_leaf(
                    json!({"part": "tool_call", "id": "call_1", "name": "f", "arguments": "{"}),
                ),
                part_leaf(
                    json!({"part": "tool_call", "id": placeholder, "name": name, "arguments": "}"}),
                ),
            ];
            let parts = [call_part(json!("call_1"), "f", "{}", json!(null))];
            check(&leaves, &message(json!({ "parts": parts })));
        }
    }
}

#[test]
fn e37_a_call_without_id_gets_a_synthetic_id_at_finish() {
    let leaves = [
        tc(0, json!(null), json!("f"), "{}"),
        tc(1, json!(null), json!("g"), "{}"),
    ];
    let before = message(json!({
        "parts": [
            call_part(json!(null), "f", "{}", json!(0)),
            call_part(json!(null), "g", "{}", json!(1)),
        ],
    }));
    let after = message(json!({
        "parts": [
            call_part(json!("call_fm_0"), "f", "{}", json!(0)),
            call_part(json!("call_fm_1"), "g", "{}", json!(1)),
        ],
        "anomalies": [
            anomaly("synthetic_id", "tool call 'f' had no id; generated 'call_fm_0'"),
            anomaly("synthetic_id", "tool call 'g' had no id; generated 'call_fm_1'"),
        ],
    }));
    check_with(options("replace"), &leaves, &before, &after);
}

#[test]
fn e37_a_call_without_id_or_index_gets_a_synthetic_id_at_finish() {
    let leaves = [part_leaf(
        json!({"part": "tool_call", "name": "f", "arguments": "{}"}),
    )];
    let before = message(json!({"parts": [call_part(json!(null), "f", "{}", json!(null))]}));
    let after = message(json!({
        "parts": [call_part(json!("call_fm_0"), "f", "{}", json!(null))],
        "anomalies": [anomaly("synthetic_id", "tool call 'f' had no id; generated 'call_fm_0'")],
    }));
    check_with(options("replace"), &leaves, &before, &after);
    // strict raises it when the stream ends, not while folding
    let state = fold(strict(), &leaves);
    assert_json(&read(&state, false), &before);
    assert_eq!(
        anomaly_code(chunks::materialize(&NativeHost, &state, true)),
        "synthetic_id"
    );
}

// ---------------------------------------------------------------------------------------------
// D. Finish reasons

fn finish_reasons(reasons: &[&str]) -> Vec<serde_json::Value> {
    reasons
        .iter()
        .map(|r| leaf(json!({ "finish_reason": r })))
        .collect()
}

#[test]
fn e45_e46_empty_and_null_finish_reasons_never_overwrite() {
    let stop = message(json!({"finish_reason": "stop", "finish_reason_normalized": "stop"}));
    check(&finish_reasons(&["stop", ""]), &stop);
    check(&finish_reasons(&["stop", "null"]), &stop);
    check(&finish_reasons(&["stop", " "]), &stop);
    // alone, a placeholder is no reason at all
    check(&finish_reasons(&["null"]), &message(json!({})));
    check(&finish_reasons(&[""]), &message(json!({})));
    // E47: None after a value
    let leaves = [
        leaf(json!({"finish_reason": "stop"})),
        leaf(json!({"finish_reason": null})),
    ];
    check(&leaves, &stop);
}

// ---------------------------------------------------------------------------------------------
// E. Usage

#[test]
fn e54_zero_usage_never_overwrites() {
    let full = json!({"input_tokens": 10, "output_tokens": 5, "total_tokens": 15});
    let leaves = [
        leaf(json!({ "usage": full })),
        leaf(json!({"usage": {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0}})),
    ];
    let state = fold(options("replace"), &leaves);
    assert_json(&read(&state, false), &message(json!({ "usage": full })));
}

#[test]
fn e54_zero_usage_never_overwrites_at_finish() {
    let full = json!({"input_tokens": 10, "output_tokens": 5, "total_tokens": 15});
    let leaves = [
        leaf(json!({ "usage": full })),
        leaf(json!({"usage": {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0}})),
    ];
    check(&leaves, &message(json!({ "usage": full })));
}

#[test]
fn e57_usage_total_is_kept_before_finish() {
    let reported = json!({"input_tokens": 10, "output_tokens": 5, "total_tokens": 99});
    let state = fold(options("replace"), &[leaf(json!({ "usage": reported }))]);
    assert_json(&read(&state, false), &message(json!({ "usage": reported })));
    let partial = json!({"input_tokens": 10, "output_tokens": 5});
    let state = fold(options("replace"), &[leaf(json!({ "usage": partial }))]);
    assert_json(&read(&state, false), &message(json!({ "usage": partial })));
}

#[test]
fn e78_per_chunk_totals_are_recomputed_at_finish() {
    let leaves = [
        leaf(json!({"usage": {"input_tokens": 50, "output_tokens": 0, "total_tokens": 50}})),
        leaf(json!({"usage": {"input_tokens": 0, "output_tokens": 27, "total_tokens": 27}})),
    ];
    check_with(
        options("replace"),
        &leaves,
        &message(json!({"usage": {"input_tokens": 50, "output_tokens": 27, "total_tokens": 27}})),
        &message(json!({"usage": {"input_tokens": 50, "output_tokens": 27, "total_tokens": 77}})),
    );
    // the zero record keeps an earlier disagreeing total, which stays flagged
    let leaves = [
        leaf(json!({"usage": {"input_tokens": 10, "output_tokens": 5, "total_tokens": 99}})),
        leaf(json!({"usage": {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0}})),
    ];
    let state = fold(strict(), &leaves);
    assert_eq!(
        anomaly_code(chunks::materialize(&NativeHost, &state, true)),
        "total_mismatch"
    );
}

#[test]
fn e79_final_usage_replaces_zeros_included() {
    let leaves = [
        leaf(json!({"usage": {"input_tokens": 12, "output_tokens": 1}})),
        leaf(json!({"final_usage": {"output_tokens": 0}})),
    ];
    check_with(
        options("replace"),
        &leaves,
        &message(json!({"usage": {"input_tokens": 12, "output_tokens": 0}})),
        &message(json!({"usage": {"input_tokens": 12, "output_tokens": 0, "total_tokens": 12}})),
    );
}

#[test]
fn e57_total_mismatch_at_finish_and_missing_total_computed() {
    let reported = json!({"input_tokens": 10, "output_tokens": 5, "total_tokens": 99});
    let after = message(json!({
        "usage": reported,
        "anomalies": [anomaly("total_mismatch", "reported total_tokens 99 != input 10 + output 5")],
    }));
    let leaves = [leaf(json!({ "usage": reported }))];
    check_with(
        options("replace"),
        &leaves,
        &message(json!({ "usage": reported })),
        &after,
    );
    let state = fold(strict(), &leaves);
    assert_eq!(
        anomaly_code(chunks::materialize(&NativeHost, &state, true)),
        "total_mismatch"
    );
    let partial = json!({"input_tokens": 10, "output_tokens": 5});
    check_with(
        options("replace"),
        &[leaf(json!({ "usage": partial }))],
        &message(json!({ "usage": partial })),
        &message(json!({"usage": {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}})),
    );
}

// ---------------------------------------------------------------------------------------------
// F. Logprobs and token ids

fn token(text: &str, logprob: f64, byte: u8) -> serde_json::Value {
    json!({"token": text, "logprob": logprob, "bytes": [byte], "top_logprobs": []})
}

#[test]
fn e60_logprobs_content_lists_concatenate() {
    let (a, b) = (token("a", -0.1, 97), token("b", -0.2, 98));
    let leaves = [
        leaf(json!({"logprobs": {"content": [a]}})),
        leaf(json!({"logprobs": {"content": [b]}})),
    ];
    check(&leaves, &message(json!({"logprobs": {"content": [a, b]}})));
}

#[test]
fn e61_refusal_logprobs_concatenate_separately() {
    let (a, b) = (token("a", -0.1, 97), token("b", -0.2, 98));
    let leaves = [
        leaf(json!({"logprobs": {"content": [a], "refusal": null}})),
        leaf(json!({"logprobs": {"content": null, "refusal": [b]}})),
        leaf(json!({"logprobs": {"refusal": [a], "content": [b]}})),
    ];
    let expected = message(json!({"logprobs": {"content": [a, b], "refusal": [b, a]}}));
    check(&leaves, &expected);
}

#[test]
fn e62_a_null_never_resets_logprobs() {
    let (a, b) = (token("a", -0.1, 97), token("b", -0.2, 98));
    let expected = message(json!({"logprobs": {"content": [a, b]}}));
    for middle in [
        json!({"logprobs": null}),
        json!({"logprobs": {"content": null}}),
    ] {
        let leaves = [
            leaf(json!({"logprobs": {"content": [a]}})),
            leaf(middle),
            leaf(json!({"logprobs": {"content": [b]}})),
        ];
        check(&leaves, &expected);
    }
}

#[test]
fn e63_prompt_ids_first_non_empty_completion_ids_concatenate() {
    let leaves = [
        leaf(json!({"prompt_token_ids": [1, 2], "completion_token_ids": [1, 2]})),
        leaf(json!({"prompt_token_ids": [9], "completion_token_ids": [3]})),
    ];
    let expected = message(json!({"prompt_token_ids": [1, 2], "completion_token_ids": [1, 2, 3]}));
    check(&leaves, &expected);
    let leaves = [
        leaf(json!({"prompt_token_ids": []})),
        leaf(json!({"prompt_token_ids": [9]})),
        leaf(json!({"prompt_token_ids": [7]})),
    ];
    check(&leaves, &message(json!({"prompt_token_ids": [9]})));
}

// ---------------------------------------------------------------------------------------------
// G. Reasoning and opaque payloads

#[test]
fn e64_no_reasoning_part_unless_one_is_given() {
    let leaves = [
        leaf(json!({"content": "a", "parts": [{"part": "text", "text": "a"}]})),
        leaf(json!({"content": "b", "parts": [{"part": "text", "text": "b"}]})),
    ];
    check(&leaves, &message(json!({"parts": [text_part("ab")]})));
    // an empty reasoning delta creates no part [E22]
    let leaves = [
        part_leaf(
            json!({"part": "reasoning", "text": "", "summary": null, "payload": null,
                         "redacted": false, "index": null}),
        ),
        leaf(json!({"content": "b", "parts": [{"part": "text", "text": "b"}]})),
    ];
    check(&leaves, &message(json!({"parts": [text_part("b")]})));
}

fn reasoning(text: &str, data: Option<&str>) -> serde_json::Value {
    let payload = data.map(|d| json!({"provider": "anthropic", "kind": "signature", "data": d}));
    part_leaf(
        json!({"part": "reasoning", "text": text, "summary": null, "payload": payload,
                     "redacted": false, "index": 0}),
    )
}

fn reasoning_message(text: &str, data: &str) -> serde_json::Value {
    message(json!({"parts": [{
        "part": "reasoning",
        "text": text,
        "summary": null,
        "payload": {"provider": "anthropic", "kind": "signature", "data": data},
        "redacted": false,
        "index": 0,
    }]}))
}

#[test]
fn e65_signature_payload_replaces_or_concatenates_on_request() {
    let leaves = [
        reasoning("hmm", None),
        reasoning("", Some("A")),
        reasoning("", Some("B")),
    ];
    check(&leaves[..2], &reasoning_message("hmm", "A"));
    check(&leaves, &reasoning_message("hmm", "B"));
    let concat = reasoning_message("hmm", "AB");
    check_with(options("concat"), &leaves, &concat, &concat);
}

// ---------------------------------------------------------------------------------------------
// H. Metadata

#[test]
fn e72_metadata_deep_merges_last_leaf_wins() {
    let leaves = [
        leaf(json!({"metadata": {"a": {"x": 1}, "b": "k"}})),
        leaf(json!({"metadata": {"a": {"y": 2}}})),
        leaf(json!({"metadata": {"b": "j", "a": {"x": 3}}})),
    ];
    // strings never concatenate; keys keep their first position
    check(
        &leaves,
        &message(json!({"metadata": {"a": {"x": 3, "y": 2}, "b": "j"}})),
    );
    let leaves = [
        leaf(json!({"provider_metadata": {"a": {"x": 1}, "b": "k"}})),
        leaf(json!({"provider_metadata": {"a": {"y": 2}, "b": "z"}})),
    ];
    let expected = message(json!({"provider_metadata": {"a": {"x": 1, "y": 2}, "b": "z"}}));
    check(&leaves, &expected);
}

/// `append_bare_text` (what `+` does for a bare text delta) gives what `fold` gives, and
/// declines whatever is not a bare text delta after a plain text part.
#[test]
fn bare_text_shortcut_equals_fold() {
    let host = NativeHost;
    let stream = [
        part_leaf(json!({"part": "text", "text": "a"})),
        leaf(json!({"content": "b", "parts": [{"part": "text", "text": "b"}]})),
        part_leaf(json!({"part": "reasoning", "text": "r"})),
        part_leaf(json!({"part": "reasoning", "text": "s"})),
        part_leaf(json!({"part": "text", "text": "c"})),
        part_leaf(json!({"part": "text", "text": "d", "index": 3})),
        part_leaf(json!({"part": "text", "text": "e"})),
        leaf(json!({"parts": [{"part": "text", "text": "f"}], "finish_reason": "stop"})),
        part_leaf(json!({"part": "text", "text": "g"})),
    ];
    let expected = fold(Options::DEFAULT, &stream);
    let mut state = State::new(
        &host,
        Family::Assistant,
        Value::from("assistant"),
        Options::DEFAULT,
    );
    let mut shortcuts = 0;
    for item in &stream {
        let parsed = Leaf::parse(&host, Family::Assistant, convert(item.clone()));
        let taken = match parsed.bare_text(Family::Assistant) {
            Some((text, reasoning)) => chunks::append_bare_text(&mut state, text, reasoning),
            None => false,
        };
        if taken {
            shortcuts += 1;
        } else {
            chunks::fold(&host, &mut state, &parsed).expect("fold");
        }
    }
    // "b" after "a", "s" after "r", "g" after "f"'s text; not "r" or "c" (another kind before
    // them), "e" (after an indexed part) or "f" (it carries a finish reason)
    assert_eq!(shortcuts, 3);
    assert_json(&read(&state, false), &read(&expected, false));
    let base = Leaf::parse(
        &host,
        Family::Base,
        convert(part_leaf(json!({"part": "text", "text": "x"}))),
    );
    assert!(base.bare_text(Family::Base).is_none());
}

/// The index a chunk's `tool_calls=` gave a call (`call_index`) reads back from that chunk
/// alone; once a second leaf is folded in, every call reads by position (null here).
#[test]
fn call_index_shows_only_in_one_leaf() {
    let given = |index: i64| json!({"part": "tool_call", "id": "c1", "name": "f", "arguments": "{", "provider_index": index, "call_index": index});
    let mut one = call_part(json!("c1"), "f", "{", json!(5));
    one["call_index"] = json!(5);
    let state = fold(options("replace"), &[part_leaf(given(5))]);
    assert_json(&read(&state, false)["parts"], &json!([one]));
    let more = json!({"part": "tool_call", "arguments": "}", "provider_index": 5, "call_index": 5});
    let state = fold(options("replace"), &[part_leaf(given(5)), part_leaf(more)]);
    assert_json(
        &read(&state, false)["parts"],
        &json!([call_part(json!("c1"), "f", "{}", json!(5))]),
    );
}
