//! The batch engine's reading of records (`cargo test --no-default-features --test engine
//! batch_records::`): bad lines at their place with no good line lost, nested key and order
//! paths, records read as strictly as events, a stream that raised ending at its last event,
//! which event ends each provider's stream, typed errors for options and limits, and the split
//! step that cuts records by the CRC-32 of their key.

use crate::common;
use common::batch::*;

use std::io::Write;

use fastmerge::engine::batch::{BatchError, Item, Options};
use fastmerge::engine::chunks::Options as AggOptions;

fn bad(source: &str, line: u64, reason: &str) -> Item {
    Item::Bad {
        source: source.to_owned(),
        line,
        reason: reason.to_owned(),
    }
}

#[test]
fn bad_lines_come_at_their_place_and_lose_no_good_line() {
    let dir = scratch("bad");
    let ev = |n: usize, i: usize| serde_json::to_string(&stream_events(n)[i]).expect("json");
    let events0: Vec<String> = (0..stream_events(0).len()).map(|i| ev(0, i)).collect();
    let mut lines = vec![
        "\u{feff}{\"k\": 7, \"e\": ".to_owned() + &events0[0] + "}",
        "not json".to_owned(),
        "   ".to_owned(),
        "[1, 2]".to_owned(),
        "{\"e\": {}}".to_owned(),
        "{\"k\": true, \"e\": {}}".to_owned(),
        "{\"k\": \"x\"}".to_owned(),
        "{\"k\": null, \"e\": {}}".to_owned(),
    ];
    for event in &events0[1..] {
        lines.push(format!("{{\"k\": 7, \"e\": {event}}}"));
    }
    // the same key after its stream ended, by another response (another id): a new stream
    // (it ends with the input)
    let other = ev(1, 0);
    lines.push(format!("{{\"k\": 7, \"e\": {other}}}"));
    // a string event (a logged `data:` payload) under a float key, ended by `[DONE]`
    lines.push(format!(
        "{{\"k\": 7.0, \"e\": {}}}",
        serde_json::to_string(&events0[0]).expect("s")
    ));
    lines.push("{\"k\": 7.0, \"e\": \"[DONE]\"}".to_owned());
    let path = write(&dir, "bad.jsonl", &joined(&lines));
    let mut options = Options::new(vec![path.clone()]);
    options.group_by = "/k".to_owned();
    options.event = Some("e".to_owned());
    let got = items(options);
    assert_eq!(got.len(), 9);
    assert_eq!(got[0], bad(&path, 2, "not valid JSON"));
    assert_eq!(
        got[1],
        bad(&path, 4, "a record must be a JSON object, not array")
    );
    assert_eq!(got[2], bad(&path, 5, "no stream key at /k"));
    assert_eq!(
        got[3],
        bad(
            &path,
            6,
            "the stream key at /k is a boolean, not a string or a number"
        )
    );
    assert_eq!(got[4], bad(&path, 7, "no event at e"));
    assert_eq!(got[5], bad(&path, 8, "no stream key at /k"));
    let bytes: Vec<Vec<u8>> = events0.iter().map(|e| e.clone().into_bytes()).collect();
    let (provider, result) = alone(&bytes);
    assert_eq!(shown(&got[6]), ("7".to_owned(), provider, result));
    let (provider, result) = alone(&bytes[..1]);
    assert_eq!(shown(&got[7]), ("7.0".to_owned(), provider, result));
    let (provider, result) = alone(&[other.into_bytes()]);
    assert_eq!(shown(&got[8]), ("7".to_owned(), provider, result));
}

#[test]
fn nested_paths_and_mixed_order_values() {
    let dir = scratch("paths");
    let ev = serde_json::to_string(&stream_events(1)[1]).expect("json");
    let lines = vec![
        format!("{{\"meta\": {{\"ids\": [\"a\", \"s/1\"]}}, \"w\": {{\"o\": 2, \"ev\": {ev}}}}}"),
        format!(
            "{{\"meta\": {{\"ids\": [\"a\", \"s/1\"]}}, \"w\": {{\"o\": \"x\", \"ev\": {ev}}}}}"
        ),
        format!("{{\"meta\": {{\"ids\": [\"a\", \"s/2\"]}}, \"w\": {{\"o\": 1, \"ev\": {ev}}}}}"),
        format!("{{\"meta\": {{\"ids\": [\"a\"]}}, \"w\": {{\"o\": 1, \"ev\": {ev}}}}}"),
        format!("{{\"meta\": {{\"ids\": [\"a\", \"s/3\"]}}, \"w\": {{\"o\": [], \"ev\": {ev}}}}}"),
    ];
    let path = write(&dir, "nested.jsonl", &joined(&lines));
    let mut options = Options::new(vec![path.clone()]);
    options.group_by = "meta.ids.1".to_owned();
    options.event = Some("/w/ev".to_owned());
    options.order_by = Some("w.o".to_owned());
    let got = items(options);
    assert_eq!(got[0], bad(&path, 4, "no stream key at meta.ids.1"));
    assert_eq!(
        got[1],
        bad(
            &path,
            5,
            "the order_by value at w.o is an array, not a number or a string"
        )
    );
    assert_eq!(
        shown(&got[2]),
        (
            "s/1".to_owned(),
            None,
            Err("order_by values of stream s/1 mix numbers and strings".to_owned())
        )
    );
    let (provider, result) = alone(&[ev.into_bytes()]);
    assert_eq!(shown(&got[3]), ("s/2".to_owned(), provider, result));
    assert_eq!(got.len(), 4);
}

#[test]
fn options_and_limits_are_typed_errors() {
    let dir = scratch("limits");
    let (lines, _) = gen_log(20, 6);
    let path = write(&dir, "log.jsonl", &joined(&lines));
    let mut options = Options::new(vec![path.clone()]);
    options.event = Some("event".to_owned());
    assert_eq!(
        run(options).1,
        Some(BatchError::Option(
            "wrapper records need a stream key: pass group_by (e.g. group_by='stream_id')"
                .to_owned()
        ))
    );
    let mut options = Options::new(vec![path.clone()]);
    options.group_by = "file".to_owned();
    options.order_by = Some("seq".to_owned());
    assert_eq!(
        run(options).1,
        Some(BatchError::Option(
            "order_by sorts the records of a stream: pass group_by (e.g. group_by='stream_id'); \
             a file read as one stream is read in its order"
                .to_owned()
        ))
    );
    for (group_by, why) in [
        (
            "",
            "group_by is empty: pass a dotted path or a JSON pointer",
        ),
        ("a..b", "group_by 'a..b' has an empty segment"),
        (
            "/a~2",
            "group_by '/a~2' is not a valid JSON pointer: '~' must be followed by 0 or 1",
        ),
    ] {
        let mut options = wrapper(vec![path.clone()], 1);
        options.group_by = group_by.to_owned();
        assert_eq!(run(options).1, Some(BatchError::Option(why.to_owned())));
    }
    // at most 5 open: the 7th line opens a 6th stream (gen_log keeps 6 in flight)
    let mut options = wrapper(vec![path.clone()], 2);
    options.max_open_streams = 5;
    let (got, err) = run(options);
    let opened_at = lines
        .iter()
        .position(|l| l.contains("req-00005"))
        .expect("sixth stream")
        + 1;
    assert_eq!(
        err,
        Some(BatchError::TooManyStreams {
            limit: 5,
            source: path.clone(),
            line: opened_at as u64
        })
    );
    assert!(got.is_empty());
    let mut options = wrapper(vec![path.clone()], 2);
    options.max_open_streams = 6;
    assert_eq!(items(options).len(), 20);
    // inputs are checked at the start: missing (ENOENT), a directory (EISDIR)
    let missing = dir.join("missing.jsonl").display().to_string();
    let (got, err) = run(wrapper(vec![path.clone(), missing.clone()], 2));
    assert!(got.is_empty());
    assert_eq!(
        err,
        Some(BatchError::File {
            source: missing,
            errno: 2
        })
    );
    let folder = dir.display().to_string();
    let (_, err) = run(wrapper(vec![folder.clone()], 2));
    assert_eq!(
        err,
        Some(BatchError::File {
            source: folder,
            errno: 21
        })
    );
}

#[test]
fn records_are_read_as_strictly_as_events() {
    let dir = scratch("strict");
    let ev = serde_json::to_string(&stream_events(2)[1]).expect("json");
    let nest = |levels: usize| "[".repeat(levels) + &"]".repeat(levels);
    let lines = vec![
        // 100 levels (the record and 99 arrays) are read; 101 are not JSON to the events parser
        format!("{{\"k\": \"a\", \"e\": {ev}, \"x\": {}}}", nest(99)),
        format!("{{\"k\": \"a\", \"e\": {ev}, \"x\": {}}}", nest(100)),
        // brackets in strings do not count
        format!("{{\"k\": \"a\", \"e\": {ev}, \"x\": \"{}\"}}", nest(150)),
        // a lone surrogate is not JSON text (the twin's parser rejects it too)
        format!("{{\"k\": \"a\", \"e\": {ev}, \"x\": \"\\ud800\"}}"),
        format!("{{\"k\": \"a\\ud800\", \"e\": {ev}}}"),
    ];
    let path = write(&dir, "strict.jsonl", &joined(&lines));
    let mut options = Options::new(vec![path.clone()]);
    options.group_by = "k".to_owned();
    options.event = Some("e".to_owned());
    let got = items(options);
    assert_eq!(got[0], bad(&path, 2, "not valid JSON"));
    assert_eq!(got[1], bad(&path, 4, "not valid JSON"));
    assert_eq!(got[2], bad(&path, 5, "not valid JSON"));
    let texts = vec![ev.clone().into_bytes(), ev.clone().into_bytes()];
    let (provider, result) = alone(&texts);
    assert_eq!(shown(&got[3]), ("a".to_owned(), provider, result));
    assert_eq!(got.len(), 4);
}

#[test]
fn a_stream_that_raised_still_ends_at_its_last_event() {
    let dir = scratch("strict-end");
    let events: Vec<String> = stream_events(3)
        .iter()
        .map(|e| serde_json::to_string(e).expect("json"))
        .collect();
    let mut lines = vec![format!("{{\"k\": \"a\", \"e\": {}}}", events[0])];
    // a number is an unreadable event: with strict=True the stream's aggregator raises
    lines.push("{\"k\": \"a\", \"e\": 5}".to_owned());
    lines.push("{\"k\": \"a\", \"e\": null}".to_owned());
    for event in &events[1..] {
        lines.push(format!("{{\"k\": \"a\", \"e\": {event}}}"));
    }
    // "b" is whole and ends at its own usage chunk, after "a"'s
    for event in &events {
        lines.push(format!("{{\"k\": \"b\", \"e\": {event}}}"));
    }
    let path = write(&dir, "strict.jsonl", &joined(&lines));
    let mut options = Options::new(vec![path.clone()]);
    options.group_by = "k".to_owned();
    options.event = Some("e".to_owned());
    options.aggregate = AggOptions::parse(true, "replace", "merge").expect("options");
    let got = items(options);
    assert_eq!(got[0], bad(&path, 3, "no event at e"));
    // "a" ends at its usage chunk, not with the input (after "b")
    let (key, provider, result) = shown(&got[1]);
    assert_eq!((key.as_str(), provider), ("a", Some("openai-chat")));
    assert_eq!(
        result,
        Err(
            "Event { event: 2, detail: \"an event must be a JSON object, not number\" }".to_owned()
        )
    );
    assert_eq!(shown(&got[2]).0, "b");
    assert_eq!(got.len(), 3);
}

#[test]
fn each_adapter_says_which_event_ends_its_stream() {
    let cases: [(&str, serde_json::Value, bool); 14] = [
        (
            "openai-chat",
            serde_json::json!({"choices": [], "usage": {"total_tokens": 3}}),
            true,
        ),
        (
            "openai-chat",
            serde_json::json!({"choices": [], "usage": null}),
            false,
        ),
        (
            "openai-chat",
            serde_json::json!({"choices": [{"index": 0}], "usage": {}}),
            false,
        ),
        (
            "anthropic",
            serde_json::json!({"type": "message_stop"}),
            true,
        ),
        (
            "anthropic",
            serde_json::json!({"type": "message_delta"}),
            false,
        ),
        (
            "openai-responses",
            serde_json::json!({"type": "response.completed"}),
            true,
        ),
        (
            "openai-responses",
            serde_json::json!({"type": "response.failed"}),
            true,
        ),
        (
            "openai-responses",
            serde_json::json!({"type": "response.incomplete"}),
            true,
        ),
        (
            "openai-responses",
            serde_json::json!({"type": "response.output_text.delta"}),
            false,
        ),
        (
            "bedrock-converse",
            serde_json::json!({"metadata": {"usage": {}}}),
            true,
        ),
        (
            "bedrock-converse",
            serde_json::json!({"metadata": {}, "messageStop": {}}),
            false,
        ),
        (
            "ollama",
            serde_json::json!({"done": true, "response": ""}),
            true,
        ),
        (
            "ollama",
            serde_json::json!({"done": false, "response": "x"}),
            false,
        ),
        (
            "gemini",
            serde_json::json!({"candidates": [{"finishReason": "STOP"}]}),
            false,
        ),
    ];
    for (provider, event, ends) in cases {
        let adapter = common::adapter_for(provider);
        assert_eq!(
            adapter.ends_stream(&common::convert(event.clone())),
            ends,
            "{provider} {event}"
        );
    }
}

#[test]
fn split_file_cuts_records_by_the_crc32_of_their_key_as_the_batch_reads_them() {
    use fastmerge::engine::batch::split::{bucket_of, split_file, Fragment};
    // the IEEE CRC-32, as zlib.crc32 in the twin
    assert_eq!(bucket_of("k1", 1 << 31), 2_517_541_033 % (1 << 31));
    assert_eq!(bucket_of("stream-7", 1000), 333_504_032 % 1000);
    let dir = scratch("split");
    let log = b"\xef\xbb\xbf{\"stream_id\": \"k1\", \"event\": {\"a\": 1}}\n\
        \n\
        nope\n\
        {\"stream_id\": 7, \"event\": \"[DONE]\"}\n\
        {\"stream_id\": \"k1\", \"event\": \" [DONE]\"}\n";
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(log).expect("gz");
    let path = write(&dir, "log.gz", &gz.finish().expect("gz"));
    let (lines, fragments) = split_file(wrapper(vec![path.clone()], 1), 1).expect("split");
    assert_eq!(lines, 6, "five line ends, plus one");
    assert_eq!(
        fragments,
        vec![Fragment {
            bucket: 0,
            // the text without its mark: the blank line stays, so each record keeps its line
            data: log[3..log.len() - 1].to_vec(),
            lines: vec![1, 3, 4, 5],
        }]
    );
    let (_, many) = split_file(wrapper(vec![path.clone()], 1), 5).expect("split");
    let buckets: Vec<usize> = many.iter().map(|f| f.bucket).collect();
    let mut expected = vec![0, bucket_of("k1", 5), bucket_of("7", 5)];
    expected.sort_unstable();
    expected.dedup();
    assert_eq!(buckets, expected);
    // a key's lines together, wherever the quick scan or the record reader found it
    let of = |bucket: usize| {
        let lines = many
            .iter()
            .filter(|f| f.bucket == bucket)
            .flat_map(|f| f.lines.clone());
        lines.collect::<Vec<u64>>()
    };
    assert_eq!((bucket_of("k1", 5), bucket_of("7", 5)), (3, 1));
    assert_eq!((of(3), of(1), of(0)), (vec![1, 5], vec![4], vec![3]));
    // typed errors, never a panic
    assert!(matches!(
        split_file(wrapper(vec![path.clone()], 1), 0),
        Err(BatchError::Option(_))
    ));
    assert!(matches!(
        split_file(Options::new(vec![path.clone()]), 2),
        Err(BatchError::Option(_))
    ));
    let missing = dir.join("missing").display().to_string();
    assert!(matches!(
        split_file(wrapper(vec![missing], 1), 2),
        Err(BatchError::File { .. })
    ));
}
