//! A stream whose provider is not given: the provider told from the first event's bytes and
//! that event read by the typed path, against the event parsed into values and told from
//! them, on first events at the edges of both readings.

use crate::fastpath::aggregated_as;

const CHUNK: &str = r#"{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"Hi"},"logprobs":null,"finish_reason":null}]}"#;

/// The messages of `stream` with the provider told, on both paths, whole and in pieces,
/// strict or not.
fn assert_told_alike(stream: &str) {
    for piece in [stream.len(), 7] {
        for strict in [false, true] {
            assert_eq!(
                aggregated_as(None, stream.as_bytes(), piece, true, strict),
                aggregated_as(None, stream.as_bytes(), piece, false, strict),
                "piece {piece} strict {strict}: {stream}"
            );
        }
    }
}

#[test]
fn first_events_at_the_edges_are_told_alike() {
    let deep = format!(r#""x":{}1{}"#, "[".repeat(120), "]".repeat(120));
    let firsts = [
        CHUNK.to_owned(),
        // a key twice, an escaped value detect reads, keys no step reads
        CHUNK.replacen(r#""created":1"#, r#""created":1,"created":2"#, 1),
        CHUNK.replacen(r#""object":"chat.completion.chunk","#, r#""object":"chat.completion\u002echunk","#, 1),
        CHUNK.replacen(r#""created":1"#, r#""created":1,"x":{"b":["\ud800",-0]}"#, 1),
        CHUNK.replacen(r#""created":1"#, &format!(r#""created":1,{deep}"#), 1),
        // not an event, not JSON, no provider's keys, an error before any chunk
        "[1]".to_owned(),
        r#"{"choices":[1,}"#.to_owned(),
        r#"{"foo":1}"#.to_owned(),
        r#"{"error":{"message":"overloaded"}}"#.to_owned(),
        // other providers' hot events as the first event
        r#"{"contentBlockDelta":{"contentBlockIndex":0,"delta":{"text":"Hi"},"p":"abc"}}"#.to_owned(),
        r#"{"contentBlockDelta":{"contentBlockIndex":0,"delta":{"toolUse":{"input":"{"}}}}"#.to_owned(),
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}"#.to_owned(),
        r#"{"type":"response.output_text.delta","sequence_number":3,"output_index":0,"content_index":0,"delta":"Hi"}"#.to_owned(),
        r#"{"candidates":[{"content":{"parts":[{"text":"Hi"}],"role":"model"}}]}"#.to_owned(),
    ];
    for first in &firsts {
        for rest in ["", CHUNK] {
            assert_told_alike(&format!("{first}\n{rest}\n{CHUNK}\n"));
        }
    }
}
