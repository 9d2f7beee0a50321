//! The bedrock-converse typed fast path (`contentBlockDelta`) against its generic path, with
//! the helpers of `fastpath.rs`: on every Bedrock corpus stream and on generated streams,
//! event by event and whole.

use crate::common;
use crate::fastpath::{assert_same_whole_of, lockstep_of};
use common::*;

#[test]
fn bedrock_corpus_fast_path_equals_generic_path() {
    let mut total = 0;
    for (name, bytes) in corpus_streams(&["bedrock_converse"]) {
        total += lockstep_of("bedrock-converse", &bytes);
        assert_same_whole_of("bedrock-converse", &name, &bytes);
    }
    // most events of a stream are block deltas: the fast path reads them
    assert!(total > 100, "fast path read only {total} corpus events");
}

/// A Bedrock stream whose deltas vary around the fast path's shape: every delta kind, for a
/// block of its kind, of another kind, not started, with null, empty or extra fields,
/// escapes, padding, a duplicate key, an event of two keys, and deltas after the stop.
fn generated_bedrock(g: &mut Gen) -> String {
    let mut out = String::from(r#"{"messageStart":{"role":"assistant"}}"#);
    out.push('\n');
    if g.next() % 2 == 0 {
        out.push_str(r#"{"contentBlockStart":{"contentBlockIndex":2,"start":{"toolUse":{"toolUseId":"t","name":"f"}}}}"#);
        out.push('\n');
    }
    let deltas = [
        r#"{"text":"Hi"}"#,
        r#"{"text":"\u00e9\n\"q\""}"#,
        r#"{"text":""}"#,
        r#"{"text":null}"#,
        r#"{"text":1}"#,
        r#"{"reasoningContent":{"text":"why"}}"#,
        r#"{"reasoningContent":{"text":""}}"#,
        r#"{"reasoningContent":{"signature":"sig"}}"#,
        r#"{"reasoningContent":{"text":"a","signature":"sig"}}"#,
        r#"{"reasoningContent":{"redactedContent":"blob"}}"#,
        r#"{"toolUse":{"input":"{\"a\":"}}"#,
        r#"{"toolUse":{"input":""}}"#,
        r#"{"toolUse":{"input":{"a":1}}}"#,
        r#"{"toolUse":{"input":"1","x":2}}"#,
        r#"{"text":"a","text":"b"}"#,
        r#"{"text":"a","toolUse":{"input":"1"}}"#,
        r#"{"citation":{"title":"x"}}"#,
        r#"{}"#,
        r#"[]"#,
    ];
    let deep = format!(r#","x":{}1{}"#, "[".repeat(99), "]".repeat(99));
    for _ in 0..(1 + g.next() % 16) {
        let index = ["0", "1", "2", "2", "1.0", "null", "-1"][(g.next() % 7) as usize];
        let delta = deltas[(g.next() % deltas.len() as u64) as usize];
        // the padding, a gateway's key: plain, odd, or nested deeper than the generic parse reads
        let extra = match g.next() % 24 {
            0..=7 => r#","p":"abcdefgh""#,
            8 => r#","p":"a\u00e9""#,
            9 => r#","x":{"b":["\ud800",-0]}"#,
            10 => deep.as_str(),
            11 => r#","contentBlockIndex":0"#,
            _ => "",
        };
        let event = match g.next() % 30 {
            0 => format!(
                r#"{{"contentBlockDelta":{{"delta":{delta},"contentBlockIndex":{index}{extra}}},"p":"x"}}"#
            ),
            1 => format!(r#"{{"contentBlockDelta":[{index}]}}"#),
            _ => format!(
                r#"{{"contentBlockDelta":{{"contentBlockIndex":{index},"delta":{delta}{extra}}}}}"#
            ),
        };
        out.push_str(&event);
        out.push('\n');
        match g.next() % 20 {
            0 => out.push_str(&format!(
                r#"{{"contentBlockStop":{{"contentBlockIndex":{index}}}}}"#
            )),
            1 => out.push_str(r#"{"messageStop":{"stopReason":"end_turn"}}"#),
            _ => continue,
        }
        out.push('\n');
    }
    out.push_str(r#"{"messageStop":{"stopReason":"end_turn"}}"#);
    out.push('\n');
    out.push_str(r#"{"metadata":{"usage":{"inputTokens":1,"outputTokens":2,"totalTokens":3}}}"#);
    out.push('\n');
    out
}

#[test]
fn generated_bedrock_streams_fast_path_equals_generic_path() {
    let mut g = Gen(0x9e37_79b9_7f4a_7c15);
    let mut hits = 0;
    for _ in 0..300 {
        let stream = generated_bedrock(&mut g);
        hits += lockstep_of("bedrock-converse", stream.as_bytes());
        assert_same_whole_of("bedrock-converse", "generated", stream.as_bytes());
    }
    assert!(hits > 100, "fast path read only {hits} generated events");
}
