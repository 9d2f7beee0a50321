//! The generic merge rules on the engine's own values, without Python
//! (`cargo test --no-default-features`). Expected values come from docs/edge-cases.md §A.

use crate::common;
use common::*;

use fastmerge::engine::error::{EngineError, OptionError, PathItem};
use fastmerge::engine::generic::config::Config;
use fastmerge::engine::generic::langchain_chunks::add_ai_message_chunks;
use fastmerge::engine::generic::{self, MAX_DEPTH};
use fastmerge::engine::value::{NativeError, NativeHost, Value};
use std::sync::Arc;

fn v(text: &str) -> Value {
    convert(serde_json::from_str(text).expect("test JSON"))
}

fn delta() -> Config {
    Config::parse("delta", "concat", false).unwrap()
}

fn by_index() -> Config {
    Config::parse("delta", "by_index", false).unwrap()
}

fn strict() -> Config {
    Config::parse("delta", "concat", true).unwrap()
}

fn merge(cfg: Config, left: &str, right: &str) -> Value {
    generic::merge(&NativeHost, cfg, v(left), v(right)).expect("merge")
}

fn merge_all(cfg: Config, items: &[&str]) -> Value {
    generic::merge_all(&NativeHost, cfg, items.iter().map(|t| Ok(v(t)))).expect("merge_all")
}

/// Structural equality that also checks exact types (1 and 1.0 differ here).
fn assert_same(actual: &Value, expected: &Value) {
    match (actual, expected) {
        (Value::Int(a), Value::Int(b)) => assert_eq!(a, b),
        (Value::Float(a), Value::Float(b)) => assert_eq!(a.to_bits(), b.to_bits()),
        (Value::Bool(a), Value::Bool(b)) => assert_eq!(a, b),
        (Value::Null, Value::Null) => {}
        (Value::Str(a), Value::Str(b)) => assert_eq!(a, b),
        (Value::List(a), Value::List(b)) => {
            assert_eq!(a.len(), b.len(), "{actual:?} vs {expected:?}");
            a.iter().zip(b.iter()).for_each(|(x, y)| assert_same(x, y));
        }
        (Value::Dict(a), Value::Dict(b)) => {
            let ak: Vec<_> = a.keys().collect();
            let bk: Vec<_> = b.keys().collect();
            assert_eq!(ak, bk, "key order");
            a.values()
                .zip(b.values())
                .for_each(|(x, y)| assert_same(x, y));
        }
        _ => panic!("{actual:?} is not {expected:?}"),
    }
}

#[test]
fn e01_nested_strings_concatenate_under_both_policies() {
    for cfg in [Config::OPENJIUWEN, delta()] {
        let out = merge(cfg, r#"{"a":{"b":"x"}}"#, r#"{"a":{"b":"y","c":1}}"#);
        assert_same(&out, &v(r#"{"a":{"b":"xy","c":1}}"#));
    }
}

#[test]
fn e02_right_null() {
    assert_same(
        &merge(Config::OPENJIUWEN, r#"{"a":"x"}"#, r#"{"a":null}"#),
        &v(r#"{"a":null}"#),
    );
    assert_same(
        &merge(delta(), r#"{"a":"x"}"#, r#"{"a":null}"#),
        &v(r#"{"a":"x"}"#),
    );
}

#[test]
fn e03_to_e07_scalars_take_the_right_value() {
    let cases = [
        (r#"{"n":1}"#, r#"{"n":2}"#, r#"{"n":2}"#),
        (
            r#"{"index":1,"created":5}"#,
            r#"{"index":1,"created":6}"#,
            r#"{"index":1,"created":6}"#,
        ),
        (r#"{"b":true}"#, r#"{"b":false}"#, r#"{"b":false}"#),
        (r#"{"p":0.5}"#, r#"{"p":0.7}"#, r#"{"p":0.7}"#),
        (r#"{"x":1}"#, r#"{"x":1.5}"#, r#"{"x":1.5}"#),
    ];
    for (left, right, expected) in cases {
        for cfg in [Config::OPENJIUWEN, delta()] {
            assert_same(&merge(cfg, left, right), &v(expected));
        }
    }
}

#[test]
fn e08_e09_mismatched_kinds() {
    assert_same(
        &merge(delta(), r#"{"x":"a"}"#, r#"{"x":1}"#),
        &v(r#"{"x":1}"#),
    );
    assert_same(
        &merge(delta(), r#"{"a":{"k":1}}"#, r#"{"a":[1]}"#),
        &v(r#"{"a":[1]}"#),
    );
    let err =
        generic::merge(&NativeHost, strict(), v(r#"{"x":"a"}"#), v(r#"{"x":1}"#)).unwrap_err();
    assert_eq!(
        err,
        NativeError::Engine(EngineError::MergeType {
            path: vec![PathItem::Key(v(r#""x""#))],
            left_kind: "str".into(),
            right_kind: "number".into(),
        })
    );
    let err = generic::merge(
        &NativeHost,
        strict(),
        v(r#"{"a":{"k":1}}"#),
        v(r#"{"a":[1]}"#),
    )
    .unwrap_err();
    assert!(
        matches!(err, NativeError::Engine(EngineError::MergeType { ref left_kind, ref right_kind, .. })
        if left_kind == "dict" && right_kind == "list")
    );
}

#[test]
fn e10_lists_concatenate() {
    assert_same(
        &merge(Config::OPENJIUWEN, r#"{"ids":[1,2]}"#, r#"{"ids":[3]}"#),
        &v(r#"{"ids":[1,2,3]}"#),
    );
}

#[test]
fn e11_index_lists_concat_by_default_merge_by_index_on_request() {
    let (l, r) = (r#"[{"index":0,"t":"a"}]"#, r#"[{"index":0,"t":"b"}]"#);
    assert_same(
        &merge(delta(), l, r),
        &v(r#"[{"index":0,"t":"a"},{"index":0,"t":"b"}]"#),
    );
    assert_same(&merge(by_index(), l, r), &v(r#"[{"index":0,"t":"ab"}]"#));
}

#[test]
fn e12_by_index_matches_by_value_not_position() {
    let out = merge_all(
        by_index(),
        &["[]", r#"[{"index":1,"v":"a"}]"#, r#"[{"index":1,"v":"b"}]"#],
    );
    assert_same(&out, &v(r#"[{"index":1,"v":"ab"}]"#));
}

#[test]
fn e13_by_index_conflicting_ids_stay_apart() {
    let out = merge(
        by_index(),
        r#"[{"index":0,"id":"a","x":"1"}]"#,
        r#"[{"index":0,"id":"b","x":"2"}]"#,
    );
    assert_same(
        &out,
        &v(r#"[{"index":0,"id":"a","x":"1"},{"index":0,"id":"b","x":"2"}]"#),
    );
}

#[test]
fn e14_duplicate_index_inside_one_list() {
    let chunk1 = r#"{"tool_calls":[
        {"index":0,"id":"c1","type":"function","function":{"name":"f","arguments":"{"}},
        {"index":0,"function":{"arguments":"\"a\":1"}}]}"#;
    let chunk2 = r#"{"tool_calls":[{"index":0,"function":{"arguments":"}"}}]}"#;
    let out = merge(by_index(), chunk1, chunk2);
    let expected = r#"{"tool_calls":[
        {"index":0,"id":"c1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]}"#;
    assert_same(&out, &v(expected));
}

#[test]
fn e15_atomic_keys_are_never_concatenated_under_delta() {
    let chunk = r#"{"id":"x","model":"m","system_fingerprint":"fp","role":"assistant"}"#;
    assert_same(&merge(delta(), chunk, chunk), &v(chunk));
    // openjiuwen (drop-in) concatenates them, as openJiuwen does.
    assert_same(
        &merge(Config::OPENJIUWEN, r#"{"id":"x"}"#, r#"{"id":"x"}"#),
        &v(r#"{"id":"xx"}"#),
    );
    // An absent right value ("", "null", blank) keeps the left one; a real one replaces.
    for absent in [r#""""#, r#""null""#, r#"" \t""#] {
        let right = format!(r#"{{"finish_reason":{absent}}}"#);
        assert_same(
            &merge(delta(), r#"{"finish_reason":"stop"}"#, &right),
            &v(r#"{"finish_reason":"stop"}"#),
        );
    }
    assert_same(
        &merge(
            delta(),
            r#"{"model":"router"}"#,
            r#"{"model":"gpt-4.1-nano"}"#,
        ),
        &v(r#"{"model":"gpt-4.1-nano"}"#),
    );
}

fn nested(depth: usize, leaf: &str) -> Value {
    let mut value = Value::Str(leaf.into());
    for _ in 0..depth {
        let mut map = fastmerge::engine::value::Map::default();
        map.insert("a".to_owned(), value);
        value = Value::Dict(Arc::new(map));
    }
    value
}

#[test]
fn e16_depth_limit_is_a_typed_error_not_a_stack_overflow() {
    let ok = generic::merge(
        &NativeHost,
        Config::OPENJIUWEN,
        nested(MAX_DEPTH, "x"),
        nested(MAX_DEPTH, "y"),
    );
    assert_same(&ok.unwrap(), &nested(MAX_DEPTH, "xy"));
    for depth in [MAX_DEPTH + 1, 2000] {
        let err = generic::merge(&NativeHost, delta(), nested(depth, "x"), nested(depth, "y"))
            .unwrap_err();
        assert_eq!(
            err,
            NativeError::Engine(EngineError::DepthLimit { limit: MAX_DEPTH })
        );
        let err = generic::merge_all(
            &NativeHost,
            delta(),
            [Ok(nested(depth, "x")), Ok(nested(depth, "y"))],
        )
        .unwrap_err();
        assert_eq!(
            err,
            NativeError::Engine(EngineError::DepthLimit { limit: MAX_DEPTH })
        );
    }
}

#[test]
fn e17_inputs_are_not_changed() {
    let (left, right) = (
        v(r#"{"a":{"b":"x"},"l":[1]}"#),
        v(r#"{"a":{"b":"y"},"l":[2]}"#),
    );
    let (left_copy, right_copy) = (left.clone(), right.clone());
    let out = generic::merge(&NativeHost, Config::OPENJIUWEN, left.clone(), right.clone()).unwrap();
    assert_same(&out, &v(r#"{"a":{"b":"xy"},"l":[1,2]}"#));
    assert_same(&left, &left_copy);
    assert_same(&right, &right_copy);
}

#[test]
fn merge_all_equals_pairwise_merges() {
    let items = [
        r#"{"id":"c","choices":[{"index":0,"delta":{"content":"He"}}],"usage":null}"#,
        r#"{"id":"c","choices":[{"index":0,"delta":{"content":"llo"}}],"usage":null}"#,
        r#"{"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"total_tokens":3}}"#,
    ];
    for cfg in [Config::OPENJIUWEN, delta(), by_index()] {
        let mut acc = v(items[0]);
        for item in &items[1..] {
            acc = generic::merge(&NativeHost, cfg, acc, v(item)).unwrap();
        }
        assert_same(&merge_all(cfg, &items), &acc);
    }
    assert_same(&merge_all(Config::OPENJIUWEN, &[]), &Value::Null);
    assert_same(&merge_all(delta(), &[r#"{"a":1}"#]), &v(r#"{"a":1}"#));
}

#[test]
fn merge_all_of_many_text_deltas() {
    let piece = "x".repeat(200);
    let items = (0..20_000).map(|_| Ok(Value::Str(piece.clone())));
    let out = generic::merge_all(&NativeHost, Config::OPENJIUWEN, items).unwrap();
    assert_same(&out, &Value::Str(piece.repeat(20_000)));
}

#[test]
fn options_are_checked_in_order() {
    assert_eq!(
        Config::parse("openjiuwen", "concat", false),
        Ok(Config::OPENJIUWEN)
    );
    assert!(matches!(
        Config::parse("bogus", "bogus", true),
        Err(OptionError::Invalid { name: "policy", .. })
    ));
    assert!(matches!(
        Config::parse("delta", "bogus", false),
        Err(OptionError::Invalid {
            name: "list_merge",
            ..
        })
    ));
    assert_eq!(
        Config::parse("openjiuwen", "by_index", false),
        Err(OptionError::RequiresDelta { name: "list_merge" })
    );
    assert_eq!(
        Config::parse("openjiuwen", "concat", true),
        Err(OptionError::RequiresDelta { name: "strict" })
    );
}

#[test]
fn helpers_follow_openjiuwen() {
    let ids = |l: &str, r: &str| generic::concat_token_ids(&NativeHost, v(l), v(r)).unwrap();
    assert_same(&ids("[1,2]", "[3]"), &v("[1,2,3]"));
    assert_same(&ids("[]", "[3]"), &v("[3]"));
    assert_same(&ids("[1]", "null"), &v("[1]"));
    assert_same(&ids("[1]", "7"), &v("7"));
    let lp = |l: &str, r: &str| generic::merge_logprobs(&NativeHost, v(l), v(r)).unwrap();
    assert_same(
        &lp(
            r#"{"content":[{"t":"a"}],"x":1}"#,
            r#"{"content":[{"t":"b"}],"refusal":[]}"#,
        ),
        &v(r#"{"content":[{"t":"a"},{"t":"b"}],"x":1,"refusal":[]}"#),
    );
    assert_same(&lp("null", "[1]"), &v("[1]"));
    assert_same(&lp("[1]", "[2]"), &v("[1,2]"));
}

fn langchain() -> Config {
    Config::parse("langchain", "concat", false).unwrap()
}

#[test]
fn langchain_policy_merge_dicts_lists_and_content() {
    // merge_dicts: strings concatenate, ints add (index / created / timestamp: the right one),
    // equal values stay, a None takes the other side, id / output_version kept when equal
    let out = merge_all(
        langchain(),
        &[
            r#"{"s":"a","n":1,"index":1,"e":1.5,"id":"x","o":null,"d":{"t":"p"}}"#,
            r#"{"s":"b","n":2,"index":2,"e":1.5,"id":"x","o":"v","d":{"t":"q","u":null}}"#,
        ],
    );
    assert_same(
        &out,
        &v(r#"{"s":"ab","n":3,"index":2,"e":1.5,"id":"x","o":"v","d":{"t":"pq","u":null}}"#),
    );
    // merge_lists: an int or lc_ index merges into the first equal one whose id agrees; the
    // right element's type is left out
    let out = merge_all(
        langchain(),
        &[
            r#"[{"index":0,"type":"text","t":"a"},{"index":"x","t":"a"}]"#,
            r#"[{"index":0,"type":"delta","t":"b"},{"index":"x","t":"b"},{"index":0,"id":"i","t":"c"}]"#,
            r#"[{"index":0,"id":"j","t":"d"}]"#,
        ],
    );
    assert_same(
        &out,
        &v(
            r#"[{"index":0,"type":"text","t":"abc","id":"i"},{"index":"x","t":"a"},{"index":"x","t":"b"},{"index":0,"id":"j","t":"d"}]"#,
        ),
    );
    // merge_content: str then list puts the str first; list then str extends a last str item;
    // a str into an empty list is dropped, as LangChain does
    assert_same(
        &merge_all(langchain(), &[r#""a""#, r#"["b"]"#, r#""c""#]),
        &v(r#"["a","bc"]"#),
    );
    assert_same(
        &merge_all(langchain(), &[r#"[]"#, r#""lost""#]),
        &v(r#"[]"#),
    );
}

#[test]
fn langchain_policy_conflicts() {
    for (left, right, code) in [
        (r#"{"a":1}"#, r#"{"a":"x"}"#, "kwargs_type"),
        (r#"{"a":1.5}"#, r#"{"a":2.5}"#, "kwargs_unsupported"),
        (r#"{"a":true}"#, r#"{"a":false}"#, "kwargs_unsupported"),
        (r#""a""#, r#"1"#, "types"),
        (r#"1"#, r#"2"#, "unequal"),
    ] {
        match generic::merge(&NativeHost, langchain(), v(left), v(right)) {
            Err(NativeError::Engine(EngineError::Conflict { code: got, .. })) => {
                assert_eq!(got, code, "{left} + {right}")
            }
            other => panic!("{left} + {right}: {other:?}"),
        }
    }
}

#[test]
fn langchain_chunk_fields() {
    let items = [
        r#"{"content":"a","usage_metadata":{"input_tokens":1,"d":{"r":1}},"id":"lc_x","tool_call_chunks":[{"index":0,"args":"{","name":"f","type":"tool_call_chunk"}]}"#,
        r#"{"content":"b","usage_metadata":null,"id":"lc_run-1","tool_call_chunks":[{"index":0,"args":"}","name":null,"type":"tool_call_chunk"}]}"#,
        r#"{"content":"c","usage_metadata":{"input_tokens":2,"d":{"r":2,"s":1}},"id":"msg_1","chunk_position":"last"}"#,
        r#"{"content":"","id":"msg_2"}"#,
    ];
    let out = add_ai_message_chunks(&NativeHost, items.iter().map(|t| Ok(v(t)))).unwrap();
    assert_same(
        &out,
        &v(
            r#"{"content":"abc","additional_kwargs":null,"response_metadata":null,
              "tool_call_chunks":[{"index":0,"args":"{}","name":"f","type":"tool_call_chunk"}],
              "usage_metadata":{"input_tokens":3,"d":{"r":3,"s":1}},"id":"msg_1","chunk_position":"last"}"#,
        ),
    );
    let none = add_ai_message_chunks(&NativeHost, std::iter::empty()).unwrap();
    assert_same(&none, &Value::Null);
}
