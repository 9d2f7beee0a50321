//! The bucket step of `fastmerge.dask` on local files (`cargo test --no-default-features
//! --test engine split::`): the light key scan finds the key the record reader reads or
//! nothing, and a batch of one bucket gives that bucket's items where the whole batch does.

use fastmerge::engine::batch::path::Path;
use fastmerge::engine::batch::record::{self, Spec};
use fastmerge::engine::batch::split::{bucket_of, Sorter};
use fastmerge::engine::batch::{Batch, BatchError, Item, Next, Options, Place};

fn spec(key: &str) -> Spec {
    Spec::new(
        Path::parse("group_by", key).expect("path"),
        Some(Path::parse("event", "event").expect("path")),
        None,
    )
}

/// Lines a light scan could misread: duplicates (the last counts), a key after an event
/// that quotes its name, escapes, numbers, nesting, and lines that are not JSON.
const LINES: &[&str] = &[
    r#"{"k": "a", "event": {}}"#,
    r#"{"k": "zz", "event": {"x": "\"k\": \"b\""}, "k": "a"}"#,
    r#"{"k": "b", "k\u0031": "c", "event": {}}"#,
    r#"{"k": "b", "\u006b": "a", "event": {}}"#,
    r#"{"k": "c\u0301", "event": {}}"#,
    r#"{"k": 12, "event": {}}"#,
    r#"{"m": {"k": "x"}, "k": "d", "event": [1, {"k": "]"}]}"#,
    r#"  {"event": {"a": "\\"}, "k" : "e" , "k": "f"}  "#,
    r#"{"k": "a", "event": {"x": tru}}"#,
    r#"{"k": ["a"], "event": {}}"#,
    r#"["k", "a"]"#,
];

#[test]
fn the_light_scan_finds_the_key_the_record_reader_reads_or_nothing() {
    let spec = spec("k");
    for line in LINES {
        let line = line.as_bytes();
        let (Some(key), Ok(rec)) = (record::route_key(line, &spec), record::read(line, &spec))
        else {
            continue; // nothing found (the reader reads it), or a bad line (any bucket)
        };
        assert_eq!(
            key,
            rec.key.text(line).as_bytes(),
            "{}",
            String::from_utf8_lossy(line)
        );
    }
    let keys: Vec<Option<&[u8]>> = LINES
        .iter()
        .map(|l| record::route_key(l.as_bytes(), &spec))
        .collect();
    let text = |k: &'static str| Some(k.as_bytes());
    assert_eq!(keys[..4], [text("a"), text("a"), None, None]); // escaped names: the reader
    assert_eq!(keys[4..8], [None, None, text("d"), text("f")]); // escapes, numbers: the reader
    assert_eq!(keys[9..], [None, None]);
    let nested = Spec::new(
        Path::parse("group_by", "m.k").expect("path"),
        Some(Path::parse("event", "event").expect("path")),
        None,
    );
    assert_eq!(
        record::route_key(LINES[6].as_bytes(), &nested),
        Some(&b"x"[..])
    );
    assert_eq!(record::route_key(LINES[0].as_bytes(), &nested), None);
}

/// Every item of a batch with its place.
fn placed(options: Options) -> Vec<(Place, Item)> {
    let mut batch = Batch::new(options).expect("batch");
    let mut out = Vec::new();
    loop {
        match batch.next(None).expect("next") {
            Next::Item(item, place) | Next::Written(item, place, _) => out.push((place, item)),
            Next::End => return out,
            Next::Timeout => unreachable!("no timeout was given"),
        }
    }
}

#[test]
fn a_batch_of_one_bucket_gives_its_items_where_the_whole_batch_does() {
    let dir = std::env::temp_dir().join(format!("fastmerge-split-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch");
    let text = LINES.join("\n");
    let a = dir.join("a.jsonl");
    let b = dir.join("b.jsonl");
    // a byte order mark and a blank line, and a file without a last line end
    std::fs::write(&a, format!("\u{feff}{text}\n\n")).expect("write");
    std::fs::write(&b, &text).expect("write");
    let paths = vec![a.display().to_string(), b.display().to_string()];
    let options = |bucket: Option<(usize, usize)>, jobs: usize| {
        let mut o = Options::new(paths.clone());
        o.group_by = "k".to_owned();
        o.event = Some("event".to_owned());
        o.bucket = bucket;
        o.jobs = jobs;
        o
    };
    let whole = placed(options(None, 1));
    assert!(whole.len() > 6, "streams and bad lines: {}", whole.len());
    let spec = spec("k");
    let sorter = Sorter::new(&spec, 3);
    for jobs in [1, 2] {
        let mut all = Vec::new();
        for bucket in 0..3 {
            let items = placed(options(Some((bucket, 3)), jobs));
            for (place, item) in &items {
                if let Item::Stream { key, .. } = item {
                    assert_eq!(bucket_of(key, 3), bucket, "{key}");
                }
                // the line that placed it is the bucket's (a stream's deciding record)
                if !place.end {
                    let line = LINES[place.line as usize - 1];
                    assert_eq!(sorter.bucket(line.as_bytes()), bucket, "{line}");
                }
            }
            all.extend(items);
        }
        all.sort_by_key(|(place, _)| *place);
        assert_eq!(all, whole, "jobs={jobs}");
    }
    for wrong in [(3, 3), (0, 0)] {
        assert!(matches!(
            Batch::new(options(Some(wrong), 1)),
            Err(BatchError::Option(_))
        ));
    }
    let mut files = options(Some((0, 2)), 1);
    files.group_by = "file".to_owned();
    files.event = None;
    assert!(matches!(Batch::new(files), Err(BatchError::Option(_))));
    std::fs::remove_dir_all(&dir).ok();
}
