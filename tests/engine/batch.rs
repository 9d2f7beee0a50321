//! The batch engine (`cargo test --no-default-features --test engine batch::`): every stream's
//! result equals its own aggregator's, items come in input order whatever the number of jobs,
//! on the corpus (one file, one stream) and on generated interleaved logs (wrapper records),
//! compressed or not, cut short by damage; closing, writers on the workers, and the places
//! items come with. Bad lines, record paths, options and limits: `batch_records`.

use crate::common;
use common::batch::*;

use std::io::Write;

use fastmerge::engine::aggregate::AggregatorCore;
use fastmerge::engine::batch::{Batch, BatchError, Item, Next, Options, Writer, Written};
use fastmerge::engine::chunks::Options as AggOptions;

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
