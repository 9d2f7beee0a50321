//! The anthropic typed fast path (`content_block_delta`) against its generic path, with the
//! helpers of `fastpath.rs`: on every Anthropic corpus stream and on generated streams, event
//! by event and whole.

use crate::common;
use crate::fastpath::{assert_same_whole_of, lockstep_of};
use common::*;

#[test]
fn anthropic_corpus_fast_path_equals_generic_path() {
    let mut total = 0;
    for (name, bytes) in corpus_streams(&["anthropic_messages"]) {
        total += lockstep_of("anthropic", &bytes);
        assert_same_whole_of("anthropic", &name, &bytes);
    }
    // most events of a stream are block deltas: the fast path reads them
    assert!(total > 300, "fast path read only {total} corpus events");
}

/// An Anthropic stream whose deltas vary around the fast path's shape: every delta type, for
/// its own block, another block kind, a block not started, with null or extra fields,
/// escapes, an empty text, a duplicate key.
fn generated_anthropic(g: &mut Gen) -> String {
    let mut out = String::from(
        r#"{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","model":"c","content":[],"usage":{"input_tokens":1,"output_tokens":1}}}"#,
    );
    out.push('\n');
    let starts = [
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}"#,
        r#"{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}"#,
        r#"{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"t","name":"f","input":{}}}"#,
        r#"{"type":"content_block_start","index":3,"content_block":{"type":"server_thing","x":1}}"#,
    ];
    for start in starts {
        out.push_str(start);
        out.push('\n');
    }
    let deltas = [
        r#"{"type":"text_delta","text":"Hi"}"#,
        r#"{"type":"text_delta","text":"\u00e9\n\"q\""}"#,
        r#"{"type":"text_delta","text":""}"#,
        r#"{"type":"thinking_delta","thinking":"why"}"#,
        r#"{"type":"signature_delta","signature":"sig"}"#,
        r#"{"type":"input_json_delta","partial_json":"{\"a\":"}"#,
        r#"{"type":"input_json_delta","partial_json":""}"#,
        r#"{"type":"citations_delta","citation":{"type":"x"}}"#,
        r#"{"type":"text_delta","text":null}"#,
        r#"{"type":"text_delta","text":"a","extra":1}"#,
        r#"{"type":"thinking_delta","thinking":"b","extra":"\ud800","more":{"a":[-0,-0.0]}}"#,
        r#"{"type":"input_json_delta","partial_json":"1","extra":1e400}"#,
        r#"{"type":"text_delta","thinking":"a"}"#,
        r#"{"type":"text_delta","text":"a","text":"b"}"#,
        r#"{"type":"other_delta","text":"a"}"#,
        r#"{"type":1,"text":"a"}"#,
    ];
    for _ in 0..(1 + g.next() % 16) {
        let index = ["0", "1", "2", "3", "4", "1.0", "null"][(g.next() % 7) as usize];
        let delta = deltas[(g.next() % deltas.len() as u64) as usize];
        // a gateway's key: plain, odd, or nested deeper than the generic parse reads
        let deep = format!(r#","x":{}1{}"#, "[".repeat(99), "]".repeat(99));
        let extra = match g.next() % 24 {
            0 | 1 => r#","x":1"#,
            2 => r#","x":{"b":["\ud800",-0]}"#,
            3 => deep.as_str(),
            _ => "",
        };
        out.push_str(&format!(
            r#"{{"type":"content_block_delta","index":{index},"delta":{delta}{extra}}}"#
        ));
        out.push('\n');
        if g.next() % 10 == 0 {
            out.push_str(&format!(
                r#"{{"type":"content_block_stop","index":{index}}}"#
            ));
            out.push('\n');
        }
    }
    out.push_str(r#"{"type":"message_stop"}"#);
    out.push('\n');
    out
}

#[test]
fn generated_anthropic_streams_fast_path_equals_generic_path() {
    let mut g = Gen(0x2545_f491_4f6c_dd1d);
    let mut hits = 0;
    for _ in 0..300 {
        let stream = generated_anthropic(&mut g);
        hits += lockstep_of("anthropic", stream.as_bytes());
        assert_same_whole_of("anthropic", "generated", stream.as_bytes());
    }
    assert!(hits > 100, "fast path read only {hits} generated events");
}
