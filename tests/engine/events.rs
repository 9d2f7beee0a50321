//! Event reading at the edges, without Python: `-0`, Python's `repr` of floats and characters,
//! transports that read on after a bad event, and what an input with no event was.

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
