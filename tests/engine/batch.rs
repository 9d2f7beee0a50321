//! The batch engine (`cargo test --no-default-features --test engine batch::`): every stream's
//! result equals its own aggregator's, items come in input order whatever the number of jobs,
//! on the corpus (one file, one stream) and on generated interleaved logs (wrapper records),
//! compressed or not; bad lines, limits and unreadable inputs.

use crate::common;

use std::io::Write;
use std::path::PathBuf;

use fastmerge::engine::aggregate::AggregatorCore;
use fastmerge::engine::batch::{
    Batch, BatchError, Item, Next, Options, StreamError, Writer, Written,
};
use fastmerge::engine::chunks::Options as AggOptions;

/// A scratch directory of this test process, removed when the test lets go of it (a test that
/// fails leaves it, to be looked at).
struct Scratch(PathBuf);

impl std::ops::Deref for Scratch {
    type Target = std::path::Path;

    fn deref(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

fn scratch(name: &str) -> Scratch {
    let dir = std::env::temp_dir().join(format!("fastmerge-batch-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    Scratch(dir)
}

fn write(dir: &std::path::Path, name: &str, bytes: &[u8]) -> String {
    let path = dir.join(name);
    std::fs::write(&path, bytes).expect("write");
    path.display().to_string()
}

/// Every item of a batch, or the error it stopped with (and the items before it).
fn run(options: Options) -> (Vec<Item>, Option<BatchError>) {
    let mut batch = match Batch::new(options) {
        Ok(batch) => batch,
        Err(err) => return (Vec::new(), Some(err)),
    };
    let mut items = Vec::new();
    loop {
        match batch.next(None) {
            Ok(Next::Item(item, _)) => items.push(item),
            Ok(Next::Written(item, _, _)) => items.push(item),
            Ok(Next::End) => return (items, None),
            Ok(Next::Timeout) => unreachable!("no timeout was given"),
            Err(err) => return (items, Some(err)),
        }
    }
}

fn items(options: Options) -> Vec<Item> {
    let (items, err) = run(options);
    assert_eq!(err, None);
    items
}

fn wrapper(paths: Vec<String>, jobs: usize) -> Options {
    let mut options = Options::new(paths);
    options.group_by = "stream_id".to_owned();
    options.event = Some("event".to_owned());
    options.jobs = jobs;
    options
}

/// What one aggregator makes of `events` (one `add_text` each).
fn alone(events: &[Vec<u8>]) -> (Option<&'static str>, Result<Vec<serde_json::Value>, String>) {
    let mut core = AggregatorCore::new(None, AggOptions::DEFAULT);
    for event in events {
        if let Err(err) = core.add_text(event) {
            return (core.provider(), Err(format!("{err:?}")));
        }
    }
    let result = core.finish();
    let provider = core.provider();
    (
        provider,
        result
            .map(|m| m.iter().map(common::to_json).collect())
            .map_err(|e| format!("{e:?}")),
    )
}

fn shown(
    item: &Item,
) -> (
    String,
    Option<&'static str>,
    Result<Vec<serde_json::Value>, String>,
) {
    match item {
        Item::Stream {
            key,
            provider,
            result,
        } => (
            key.clone(),
            *provider,
            match result {
                Ok(m) => Ok(m.iter().map(common::to_json).collect()),
                Err(StreamError::Aggregate(e)) => Err(format!("{e:?}")),
                Err(StreamError::Text(t)) => Err(t.clone()),
            },
        ),
        Item::Bad { .. } => panic!("a bad line: {item:?}"),
    }
}

// ---------------------------------------------------------------------------------------------
// A generated gateway log: interleaved OpenAI Chat streams in wrapper records

fn chunk(stream: usize, choices: serde_json::Value, usage: serde_json::Value) -> serde_json::Value {
    serde_json::json!({
        "id": format!("chatcmpl-{stream:06}"), "object": "chat.completion.chunk",
        "created": 1770933892, "model": "gpt-4.1", "choices": choices, "usage": usage,
    })
}

/// The events of stream `n`: a role chunk, `n % 7 + 2` content deltas (every fifth stream:
/// a tool call's arguments), the finish chunk, and the usage chunk that ends it.
fn stream_events(n: usize) -> Vec<serde_json::Value> {
    let choice = |delta: serde_json::Value, finish: serde_json::Value| serde_json::json!([{"index": 0, "delta": delta, "finish_reason": finish}]);
    let null = serde_json::Value::Null;
    let mut events = vec![chunk(
        n,
        choice(
            serde_json::json!({"role": "assistant", "content": ""}),
            null.clone(),
        ),
        null.clone(),
    )];
    let deltas = n % 7 + 2;
    if n % 5 == 4 {
        let head = serde_json::json!({"tool_calls": [{"index": 0, "id": format!("call_{n}"), "type": "function", "function": {"name": "f", "arguments": ""}}]});
        events.push(chunk(n, choice(head, null.clone()), null.clone()));
        for i in 0..deltas {
            let piece = serde_json::json!({"tool_calls": [{"index": 0, "function": {"arguments": format!("{{\"a{i}\":{n}}}")}}]});
            events.push(chunk(n, choice(piece, null.clone()), null.clone()));
        }
        events.push(chunk(
            n,
            choice(serde_json::json!({}), "tool_calls".into()),
            null.clone(),
        ));
    } else {
        for i in 0..deltas {
            events.push(chunk(
                n,
                choice(
                    serde_json::json!({"content": format!(" w{i}.{n}")}),
                    null.clone(),
                ),
                null.clone(),
            ));
        }
        events.push(chunk(
            n,
            choice(serde_json::json!({}), "stop".into()),
            null.clone(),
        ));
    }
    let usage = serde_json::json!({"prompt_tokens": 5, "completion_tokens": deltas, "total_tokens": 5 + deltas});
    events.push(chunk(n, serde_json::json!([]), usage));
    events
}

/// A log of `streams` streams, about `concurrent` in flight at once, in a fixed interleaving:
/// its lines, and each stream's events (by stream number).
fn gen_log(streams: usize, concurrent: usize) -> (Vec<String>, Vec<Vec<Vec<u8>>>) {
    let all: Vec<Vec<serde_json::Value>> = (0..streams).map(stream_events).collect();
    let mut texts: Vec<Vec<Vec<u8>>> = vec![Vec::new(); streams];
    let mut lines = Vec::new();
    let mut next = vec![0usize; streams];
    let mut open: Vec<usize> = Vec::new();
    let mut started = 0;
    let mut tick = 0usize;
    while started < streams || !open.is_empty() {
        while open.len() < concurrent && started < streams {
            open.push(started);
            started += 1;
        }
        tick = tick.wrapping_mul(1103515245).wrapping_add(12345);
        let slot = (tick >> 8) % open.len();
        let n = open[slot];
        let event = &all[n][next[n]];
        let text = serde_json::to_string(event).expect("json");
        lines.push(format!(
            "{{\"ts\":{},\"stream_id\":\"req-{n:05}\",\"seq\":{},\"event\":{text}}}",
            lines.len(),
            next[n]
        ));
        texts[n].push(text.into_bytes());
        next[n] += 1;
        if next[n] == all[n].len() {
            open.remove(slot);
        }
    }
    (lines, texts)
}

fn joined(lines: &[String]) -> Vec<u8> {
    let mut out = lines.join("\n").into_bytes();
    out.push(b'\n');
    out
}

/// The stream numbers in the order their last event appears in `lines`.
fn end_order(lines: &[String], texts: &[Vec<Vec<u8>>]) -> Vec<usize> {
    let mut seen = vec![0usize; texts.len()];
    let mut order = Vec::new();
    for line in lines {
        let n: usize = line[line.find("req-").expect("key") + 4..][..5]
            .parse()
            .expect("n");
        seen[n] += 1;
        if seen[n] == texts[n].len() {
            order.push(n);
        }
    }
    order
}

#[test]
fn generated_log_equals_each_stream_alone_in_end_order() {
    let dir = scratch("gen");
    let (lines, texts) = gen_log(300, 40);
    let path = write(&dir, "log.jsonl", &joined(&lines));
    let order = end_order(&lines, &texts);
    let expected: Vec<_> = order
        .iter()
        .map(|n| {
            let (provider, result) = alone(&texts[*n]);
            (format!("req-{n:05}"), provider, result)
        })
        .collect();
    for jobs in [1, 2, 3] {
        let got: Vec<_> = items(wrapper(vec![path.clone()], jobs))
            .iter()
            .map(shown)
            .collect();
        assert_eq!(got.len(), 300);
        assert_eq!(got, expected, "jobs={jobs}");
    }
    // the same log rotated into three files: the same items
    let third = lines.len() / 3;
    let parts = [
        &lines[..third],
        &lines[third..2 * third],
        &lines[2 * third..],
    ];
    let paths: Vec<String> = parts
        .iter()
        .enumerate()
        .map(|(i, part)| write(&dir, &format!("log.{i}"), &joined(part)))
        .collect();
    let got: Vec<_> = items(wrapper(paths, 2)).iter().map(shown).collect();
    assert_eq!(got, expected);
    let first = &expected[0].2.as_ref().expect("messages")[0];
    assert_eq!(first["status"], "complete");
}

#[test]
fn order_by_sorts_a_shuffled_log_and_streams_end_with_the_input() {
    let dir = scratch("order");
    let (lines, texts) = gen_log(120, 30);
    let mut shuffled = lines.clone();
    // a fixed shuffle: reversed in blocks of seven lines
    for block in shuffled.chunks_mut(7) {
        block.reverse();
    }
    let path = write(&dir, "shuffled.jsonl", &joined(&shuffled));
    // with order_by every stream ends at the end of input: in order of its first record
    let mut firsts: Vec<usize> = Vec::new();
    for line in &shuffled {
        let n: usize = line[line.find("req-").expect("key") + 4..][..5]
            .parse()
            .expect("n");
        if !firsts.contains(&n) {
            firsts.push(n);
        }
    }
    let expected: Vec<_> = firsts
        .iter()
        .map(|n| {
            let (provider, result) = alone(&texts[*n]);
            (format!("req-{n:05}"), provider, result)
        })
        .collect();
    for jobs in [1, 2] {
        let mut options = wrapper(vec![path.clone()], jobs);
        options.order_by = Some("seq".to_owned());
        let got: Vec<_> = items(options).iter().map(shown).collect();
        assert_eq!(got, expected, "jobs={jobs}");
    }
}

#[test]
fn compressed_inputs_are_read_by_their_magic_bytes() {
    let dir = scratch("compressed");
    let (lines, _) = gen_log(50, 10);
    let plain = joined(&lines);
    let half = plain.len() / 2;
    let mut gz = Vec::new();
    // two gzip members, as `cat a.gz b.gz` makes
    for part in [&plain[..half], &plain[half..]] {
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(part).expect("gz");
        gz.extend(enc.finish().expect("gz"));
    }
    let zst = zstd::stream::encode_all(&plain[..], 3).expect("zstd");
    let mut bz = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::fast());
    bz.write_all(&plain).expect("bz2");
    let bz = bz.finish().expect("bz2");
    let mut xz = liblzma::write::XzEncoder::new(Vec::new(), 1);
    xz.write_all(&plain).expect("xz");
    let xz = xz.finish().expect("xz");
    let expected = items(wrapper(vec![write(&dir, "plain.log", &plain)], 2));
    assert_eq!(expected.len(), 50);
    for (name, bytes) in [("a.log", &gz), ("b.log", &zst), ("c.txt", &bz), ("d", &xz)] {
        let path = write(&dir, name, bytes);
        assert_eq!(items(wrapper(vec![path.clone()], 2)), expected, "{name}");
        // cut short: a typed error naming the file and the format
        let cut = write(&dir, &format!("cut-{name}"), &bytes[..bytes.len() * 2 / 3]);
        let (_, err) = run(wrapper(vec![cut.clone()], 2));
        let format = match name {
            "a.log" => "gzip",
            "b.log" => "zstd",
            "c.txt" => "bzip2",
            _ => "xz",
        };
        assert!(
            matches!(
                &err,
                Some(BatchError::Compressed { source, format: f, truncated: true, .. })
                    if *source == cut && *f == format
            ),
            "{name}: {err:?}"
        );
    }
    let mut corrupt = gz.clone();
    for byte in &mut corrupt[20..60] {
        *byte ^= 0x5a;
    }
    let path = write(&dir, "corrupt.gz", &corrupt);
    let (_, err) = run(wrapper(vec![path.clone()], 1));
    assert_eq!(
        err,
        Some(BatchError::Compressed {
            source: path,
            format: "gzip",
            truncated: false,
            // the header's damage is met before anything decodes
            offset: 0,
        })
    );
}

#[test]
fn corpus_files_are_one_stream_each_as_aggregate_reads_them() {
    let dirs = common::corpus_dirs();
    let dirs: Vec<&str> = dirs.iter().map(String::as_str).collect();
    let mut paths = common::corpus_paths(&dirs);
    paths.sort();
    assert!(paths.len() > 50);
    let expected: Vec<_> = paths
        .iter()
        .map(|path| {
            let mut core = AggregatorCore::new(None, AggOptions::DEFAULT);
            let bytes = std::fs::read(path).expect("read");
            let result = core.feed(&bytes).and_then(|()| core.finish());
            (
                path.clone(),
                core.provider(),
                result
                    .map(|m| m.iter().map(common::to_json).collect())
                    .map_err(|e| format!("{e:?}")),
            )
        })
        .collect();
    for jobs in [1, 2] {
        let mut options = Options::new(paths.clone());
        options.jobs = jobs;
        let got: Vec<_> = items(options).iter().map(shown).collect();
        assert_eq!(got, expected, "jobs={jobs}");
    }
}

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
fn close_stops_the_workers_and_next_ends() {
    let dir = scratch("close");
    let (lines, _) = gen_log(200, 20);
    let path = write(&dir, "log.jsonl", &joined(&lines));
    let mut batch = Batch::new(wrapper(vec![path], 2)).expect("batch");
    assert!(matches!(batch.next(None), Ok(Next::Item(..))));
    batch.close();
    batch.close();
    assert!(matches!(batch.next(None), Ok(Next::End)));
    let (read, total, done, bad) = batch.progress();
    assert_eq!(
        (total, done, bad),
        (
            std::fs::metadata(dir.join("log.jsonl"))
                .expect("meta")
                .len(),
            1,
            0
        )
    );
    assert!(read > 0);
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

#[test]
fn items_come_with_the_place_that_decided_them() {
    let dir = scratch("places");
    let chat = |sid: &str, last: bool| {
        let mut lines = vec![
            format!("{{\"stream_id\": \"{sid}\", \"event\": {{\"object\": \"chat.completion.chunk\", \"choices\": [{{\"index\": 0, \"delta\": {{\"content\": \"x\"}}}}]}}}}"),
        ];
        if last {
            lines.push(format!(
                "{{\"stream_id\": \"{sid}\", \"event\": \"[DONE]\"}}"
            ));
        }
        lines
    };
    let mut one = chat("a", false);
    one.push("bad".to_owned());
    one.extend(chat("b", true));
    let mut two = vec![String::new()];
    two.push(chat("a", true)[1].clone());
    two.extend(chat("c", false));
    let paths = vec![
        write(&dir, "1.jsonl", one.join("\n").as_bytes()),
        write(&dir, "2.jsonl", two.join("\n").as_bytes()),
    ];
    for jobs in [1, 2] {
        let mut batch = Batch::new(wrapper(paths.clone(), jobs)).expect("batch");
        let mut places = Vec::new();
        while let Ok(Next::Item(_, place)) = batch.next(None) {
            places.push((place.end, place.file, place.line));
        }
        // bad at 1:2, b ends at 1:4, a (crossing files) at 2:2, c open from 2:3
        assert_eq!(
            places,
            vec![(false, 0, 2), (false, 0, 4), (false, 1, 2), (true, 1, 3)],
            "{jobs}"
        );
    }
}

#[test]
fn a_writer_writes_each_stream_item_on_the_workers() {
    let dir = scratch("writer");
    let (lines, _) = gen_log(200, 20);
    let path = write(&dir, "log.jsonl", &joined(&lines));
    for jobs in [1, 2] {
        let expected = items(wrapper(vec![path.clone()], jobs));
        let mut batch = Batch::new(wrapper(vec![path.clone()], jobs)).expect("batch");
        // what each stream's item was written as: its key's text, made on a worker thread
        let writer: Writer = std::sync::Arc::new(|item: &Item| -> Option<Written> {
            let Item::Stream { key, .. } = item else {
                return None;
            };
            let thread = std::thread::current().name().unwrap_or("").to_owned();
            Some(Box::new((key.clone(), thread)))
        });
        batch.write_items(writer);
        let mut got = Vec::new();
        loop {
            match batch.next(None) {
                Ok(Next::Written(item, _, written)) => {
                    let (key, thread) = *written.downcast::<(String, String)>().expect("ours");
                    let Item::Stream { key: own, .. } = &item else {
                        panic!("a bad line was written");
                    };
                    assert_eq!(&key, own);
                    assert!(thread.starts_with("fastmerge-shard"), "{thread}");
                    got.push(item);
                }
                Ok(Next::Item(item, _)) => {
                    assert!(matches!(item, Item::Bad { .. }), "a stream not written");
                    got.push(item);
                }
                Ok(Next::End) => break,
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(got, expected, "jobs={jobs}");
        assert!(!got.is_empty());
    }
}

#[test]
fn an_input_ended_by_damage_returns_every_stream_read_then_the_error() {
    // E106: 100 streams that nothing ends (a text chunk and a finish chunk, no usage chunk),
    // gzip with its 8-byte trailer cut: every stream comes back, then the error
    let dir = scratch("damage");
    let mut plain = Vec::new();
    for n in 0..100 {
        let delta = serde_json::json!([{"index": 0, "delta": {"content": "hi"}}]);
        let finish = serde_json::json!([{"index": 0, "delta": {}, "finish_reason": "stop"}]);
        for event in [
            chunk(n, delta, serde_json::Value::Null),
            chunk(n, finish, serde_json::Value::Null),
        ] {
            let record = serde_json::json!({"stream_id": format!("s{n}"), "event": event});
            plain.extend(serde_json::to_vec(&record).expect("json"));
            plain.push(b'\n');
        }
    }
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(&plain).expect("gz");
    let gz = enc.finish().expect("gz");
    let path = write(&dir, "cut.gz", &gz[..gz.len() - 8]);
    let whole = items(wrapper(vec![write(&dir, "whole.log", &plain)], 2));
    assert_eq!(whole.len(), 100);
    for jobs in [1, 2] {
        let (got, err) = run(wrapper(vec![path.clone()], jobs));
        assert_eq!(got, whole, "jobs {jobs}");
        assert_eq!(
            err,
            Some(BatchError::Compressed {
                source: path.clone(),
                format: "gzip",
                truncated: true,
                offset: plain.len() as u64,
            })
        );
    }
}
