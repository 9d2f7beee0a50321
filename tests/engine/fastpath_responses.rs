//! The openai-responses typed fast path (its delta events) against its generic path, with the
//! helpers of `fastpath.rs`: on every Responses corpus stream and on generated streams, event
//! by event and whole.

use crate::common;
use crate::fastpath::{assert_same_whole_of, lockstep_of};
use common::*;

#[test]
fn responses_corpus_fast_path_equals_generic_path() {
    let mut total = 0;
    for (name, bytes) in corpus_streams(&["openai_responses"]) {
        total += lockstep_of("openai-responses", &bytes);
        assert_same_whole_of("openai-responses", &name, &bytes);
    }
    // most events of a stream are deltas: the fast path reads them
    assert!(total > 1000, "fast path read only {total} corpus events");
}

fn pick<'a>(g: &mut Gen, from: &[&'a str]) -> &'a str {
    from[(g.next() % from.len() as u64) as usize]
}

/// A Responses stream whose deltas vary around the fast path's shape: every delta type, for
/// an item of its kind, of another kind, not added; indexes missing, null, out of range or
/// not ints; empty, null or escaped deltas; logprobs; sequence numbers in order, repeated,
/// late, after a gap, missing or null; keys no step reads; duplicate keys; a stream without
/// its `response.created`; items done and the response completed between the deltas.
fn generated_responses(g: &mut Gen) -> String {
    let mut lines: Vec<String> = Vec::new();
    if g.next() % 4 != 0 {
        lines.push(r#"{"type":"response.created","response":{"id":"r","object":"response","status":"in_progress","model":"m","output":[]}}"#.to_owned());
    }
    let items = [
        r#"{"id":"msg","type":"message","status":"in_progress","content":[],"role":"assistant"}"#,
        r#"{"id":"rs","type":"reasoning","summary":[]}"#,
        r#"{"id":"fc","type":"function_call","call_id":"c","name":"f","arguments":""}"#,
        r#"{"id":"ct","type":"custom_tool_call","call_id":"d","name":"g","input":""}"#,
    ];
    for (index, item) in items.iter().enumerate() {
        if g.next() % 5 != 0 {
            lines.push(format!(
                r#"{{"type":"response.output_item.added","output_index":{index},"item":{item}}}"#
            ));
        }
    }
    let kinds = [
        "output_text.delta",
        "output_text.delta",
        "reasoning_text.delta",
        "reasoning_summary_text.delta",
        "function_call_arguments.delta",
        "custom_tool_call_input.delta",
        "refusal.delta",
    ];
    let deep = format!(r#","x":{}1{}"#, "[".repeat(99), "]".repeat(99));
    for _ in 0..(1 + g.next() % 20) {
        let kind = pick(g, &kinds);
        // mostly the index of an item of the delta's kind
        let own = match kind {
            "output_text.delta" | "refusal.delta" => "0",
            "function_call_arguments.delta" => "2",
            "custom_tool_call_input.delta" => "3",
            _ => "1",
        };
        let index = match g.next() % 2 {
            0 => own,
            _ => pick(g, &["0", "1", "2", "3", "4", "null", "1.5", "-1"]),
        };
        let delta = pick(
            g,
            &[
                r#""Hi""#,
                r#""a b""#,
                r#""Hi""#,
                r#""""#,
                r#""\u00e9\n\"q\"""#,
                "null",
                "1",
            ],
        );
        let mut event = format!(r#"{{"type":"response.{kind}","output_index":{index}"#);
        for key in ["content_index", "summary_index"] {
            let value = pick(g, &["", "", "", "", "", "0", "1", "null", "600", r#""x""#]);
            if !value.is_empty() {
                event.push_str(&format!(r#","{key}":{value}"#));
            }
        }
        event.push_str(&format!(r#","delta":{delta}"#));
        let logprobs = pick(
            g,
            &[
                "",
                "",
                "",
                "",
                ",\"logprobs\":[]",
                ",\"logprobs\":null",
                ",\"logprobs\":{}",
                r#","logprobs":[{"token":"a","logprob":-0.1,"bytes":[97],"top_logprobs":[]}]"#,
            ],
        );
        event.push_str(logprobs);
        // keys no step reads: plain, odd, or nested deeper than the generic parse reads
        let extra = match g.next() % 24 {
            0..=9 => r#","item_id":"msg","obfuscation":"abc""#,
            10 => r#","x":{"b":["\ud800",-0]}"#,
            11 => deep.as_str(),
            12 => r#","delta":"twice""#,
            _ => "",
        };
        event.push_str(extra);
        event.push('}');
        lines.push(event);
        match g.next() % 25 {
            0 => lines.push(format!(
                r#"{{"type":"response.output_item.done","output_index":{index},"item":{}}}"#,
                items[0]
            )),
            1 => lines.push(r#"{"type":"response.completed","response":{"id":"r","status":"completed","output":[]}}"#.to_owned()),
            _ => {}
        }
    }
    lines.push(
        r#"{"type":"response.completed","response":{"id":"r","status":"completed","output":[]}}"#
            .to_owned(),
    );
    // sequence numbers: mostly in order; some repeated, late, after a gap, missing or null
    let mut seq: i64 = 0;
    let mut out = String::new();
    for line in lines {
        let number = match g.next() % 20 {
            0 => String::new(),
            1 => ",\"sequence_number\":null".to_owned(),
            2 => format!(",\"sequence_number\":{seq}"),
            3 => format!(",\"sequence_number\":{}", seq - 2),
            4 => {
                seq += 3;
                format!(",\"sequence_number\":{seq}")
            }
            _ => {
                seq += 1;
                format!(",\"sequence_number\":{seq}")
            }
        };
        out.push_str(&line[..line.len() - 1]);
        out.push_str(&number);
        out.push_str("}\n");
    }
    out
}

#[test]
fn generated_responses_streams_fast_path_equals_generic_path() {
    let mut g = Gen(0x51_7cc1_b727_220a);
    let mut hits = 0;
    for _ in 0..400 {
        let stream = generated_responses(&mut g);
        hits += lockstep_of("openai-responses", stream.as_bytes());
        assert_same_whole_of("openai-responses", "generated", stream.as_bytes());
    }
    assert!(hits > 300, "fast path read only {hits} generated events");
}
