//! Event reading at the edges, without Python: `-0`, Python's `repr` of floats and characters,
//! transports that read on after a bad event, what an input with no event was, and the JSON-values
//! transport's word-at-a-time scan, however its input is split.

use fastmerge::engine::events::parse;
use fastmerge::engine::transport::{diagnose, Transport};
use fastmerge::engine::value::{py_repr, Value};

fn field(text: &str, key: &str) -> Value {
    match parse(text.as_bytes()) {
        Ok(Value::Dict(map)) => map.get(key).cloned().unwrap_or(Value::Null),
        other => panic!("{other:?}"),
    }
}

#[test]
fn minus_zero_is_the_int_zero() {
    assert_eq!(field(r#"{"a": -0}"#, "a"), Value::Int(0));
    assert_eq!(field(r#"{"s": "-0", "a": -0.0}"#, "a"), Value::Float(-0.0));
    let list = field(r#"{"a": [-0, -0.0, -0e1, -1e-400, -0]}"#, "a");
    assert_eq!(py_repr(&list), "[0, -0.0, -0.0, -0.0, 0]");
}

#[test]
fn floats_and_characters_are_written_as_python_repr() {
    for (value, shown) in [
        (1e20, "1e+20"),
        (1e-7, "1e-07"),
        (1e16, "1e+16"),
        (1e15, "1000000000000000.0"),
        (0.0001, "0.0001"),
        (-0.0, "-0.0"),
        (123456789.125, "123456789.125"),
        (5e-324, "5e-324"),
    ] {
        assert_eq!(py_repr(&Value::Float(value)), shown);
    }
    let text = "a\u{2028}\u{feff}\u{a0}\u{85}é\u{e0001}\u{378}👋'";
    assert_eq!(
        py_repr(&Value::Str(text.to_owned())),
        r#""a\u2028\ufeff\xa0\x85é\U000e0001\u0378👋'""#
    );
}

#[test]
fn a_transport_reads_on_after_a_bad_event() {
    let mut transport = Transport::new();
    let mut out = Vec::new();
    let data = b"{\"a\": 1}\n7\n{\"b\": \"cut\n{\"c\": 2}\nx";
    for byte in data.chunks(1) {
        transport.feed(byte, &mut |payload| out.push(payload.to_vec()));
    }
    assert_eq!(
        transport.finish(&mut |payload| out.push(payload.to_vec())),
        None
    );
    let texts: Vec<&[u8]> = out.iter().map(Vec::as_slice).collect();
    assert_eq!(
        texts,
        [
            &b"{\"a\": 1}"[..],
            b"7",
            b"{\"b\": \"cut",
            b"{\"c\": 2}",
            b"x"
        ]
    );
}

#[test]
fn an_input_with_no_event_says_what_it_was() {
    let said = |head: &[u8], total| diagnose(head, total).unwrap_or_default();
    assert_eq!(
        said(b"\x1f\x8b\x08", 3),
        "gzip-compressed input: decompress it first"
    );
    // nothing but blanks: the empty input, which the aggregator words (`EmptyInput`)
    assert_eq!(diagnose(b" \n", 2), None);
    assert_eq!(diagnose(b"", 0), None);
    assert_eq!(said(b"\x00\x01", 2), "binary input, not provider events");
    assert!(said(b"a/b.jsonl", 9).ends_with("pass a pathlib.Path to read a file"));
    assert_eq!(
        said(b"true", 4),
        "an event must be a JSON object, not boolean"
    );
}

#[test]
fn a_transport_hands_over_events_where_they_lie_in_the_block() {
    // a block is read in place: each payload of one data: line or JSON value is a slice of
    // it (no copy), and only an event cut by the block's end is kept for the next block
    for stream in [
        &b"data: {\"a\": 1}\n\ndata: {\"b\": 2}\r\n\r\ndata: {\"c\""[..],
        b"{\"a\": 1}\n{\"b\": 2}\n{\"c\"",
        b"[{\"a\": 1}, {\"b\": 2}, {\"c\"",
    ] {
        let mut transport = Transport::new();
        let range = stream.as_ptr_range();
        let mut seen = Vec::new();
        transport.feed(stream, &mut |payload| {
            assert!(range.contains(&payload.as_ptr()), "{payload:?} was copied");
            seen.push(payload.to_vec());
        });
        assert_eq!(seen, [b"{\"a\": 1}".to_vec(), b"{\"b\": 2}".to_vec()]);
        transport.feed(b": 3}\n\n", &mut |payload| seen.push(payload.to_vec()));
        assert_eq!(seen.last().map(Vec::as_slice), Some(&b"{\"c\": 3}"[..]));
        assert_eq!(
            transport.finish(&mut |payload| seen.push(payload.to_vec())),
            None
        );
        assert_eq!(seen.len(), 3);
    }
}

/// The payloads of a JSON-values stream fed in `pieces` (and what `finish` leaves).
fn payloads(pieces: &[&[u8]]) -> Vec<Vec<u8>> {
    let mut transport = Transport::new();
    let mut seen = Vec::new();
    for piece in pieces {
        transport.feed(piece, &mut |payload| seen.push(payload.to_vec()));
    }
    let tail = transport.finish(&mut |payload| seen.push(payload.to_vec()));
    seen.extend(tail);
    seen
}

#[test]
fn the_json_scan_word_at_a_time_finds_every_quote_backslash_and_newline() {
    // strings whose quotes, escapes and raw newlines fall at every offset of an 8-byte word,
    // with brackets, quotes and non-ASCII text inside them
    let mut stream = Vec::new();
    let mut expected = Vec::new();
    for pad in 0..17 {
        let fill = "é{[x".repeat(pad).chars().take(pad).collect::<String>();
        for body in [
            format!(r#"{{"a":"{fill}"}}"#),
            format!(r#"{{"a":"{fill}\"}}","b":[{{"c":"\\"}}]}}"#),
            format!(r#"{{"a":["{fill}\\\\",{{}}]}}"#),
        ] {
            stream.extend_from_slice(body.as_bytes());
            stream.push(b'\n');
            expected.push(body.into_bytes());
        }
        // a raw newline inside a string ends its value there; the next starts after it
        let broken = format!(r#"{{"a":"{fill}"#);
        stream.extend_from_slice(broken.as_bytes());
        stream.extend_from_slice(b"\n{\"b\":1}\n");
        expected.push(broken.into_bytes());
        expected.push(b"{\"b\":1}".to_vec());
    }
    assert_eq!(payloads(&[&stream]), expected);
    // however it is split (an escape's backslash at a block's end included)
    for cut in 0..stream.len() {
        let (head, rest) = stream.split_at(cut);
        assert_eq!(payloads(&[head, rest]), expected, "cut at {cut}");
    }
    let bytes: Vec<&[u8]> = stream.chunks(1).collect();
    assert_eq!(payloads(&bytes), expected);
}
