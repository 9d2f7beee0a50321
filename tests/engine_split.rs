//! The bucket step of `fastmerge.dask` on local files (`cargo test --no-default-features
//! --test engine_split`): the light key scan finds the key the record reader reads or
//! nothing, and a bucket's text holds its records at their input-wide line numbers.

use fastmerge::engine::batch::path::Path;
use fastmerge::engine::batch::record::{self, Spec};
use fastmerge::engine::batch::split::{bucket_of, write_bucket, Sorter};
use fastmerge::engine::batch::{BatchError, Options};

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

#[test]
fn a_bucket_text_keeps_its_records_at_their_input_wide_lines() {
    let dir = std::env::temp_dir().join(format!("fastmerge-split-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch");
    let text = LINES.join("\n");
    let a = dir.join("a.jsonl");
    let b = dir.join("b.jsonl");
    std::fs::write(&a, format!("\u{feff}{text}\n\n")).expect("write");
    std::fs::write(&b, &text).expect("write");
    let paths = vec![a.display().to_string(), b.display().to_string()];
    let options = || {
        let mut o = Options::new(paths.clone());
        o.group_by = "k".to_owned();
        o.event = Some("event".to_owned());
        o
    };
    let spec = spec("k");
    let sorter = Sorter::new(&spec, 3);
    let mut owners = vec![None; LINES.len()];
    for bucket in 0..3 {
        let mut out = Vec::new();
        let read = write_bucket(options(), bucket, 3, &mut out, "out").expect("bucket");
        let sizes = [text.len() as u64 + 5, text.len() as u64];
        let lines = LINES.len() as u64;
        assert_eq!(read, vec![(lines + 2, sizes[0]), (lines, sizes[1])]);
        let rows: Vec<&[u8]> = out.split(|&c| c == b'\n').collect();
        assert_eq!(rows.len() as u64, 1 + lines + 2 + lines + 1);
        assert!(rows[0].is_empty());
        for (i, line) in LINES.iter().enumerate() {
            let (first, second) = (rows[1 + i], rows[1 + LINES.len() + 2 + i]);
            assert_eq!(first, second);
            if !first.is_empty() {
                assert_eq!(first, line.as_bytes());
                assert!(owners[i].replace(bucket).is_none());
                assert_eq!(sorter.bucket(line.as_bytes()), bucket);
                if let Ok(rec) = record::read(line.as_bytes(), &spec) {
                    assert_eq!(bucket_of(rec.key.text(line.as_bytes()), 3), bucket);
                }
            }
        }
    }
    assert!(owners.iter().all(Option::is_some));
    let mut out = Vec::new();
    assert!(matches!(
        write_bucket(options(), 3, 3, &mut out, "out"),
        Err(BatchError::Option(_))
    ));
    std::fs::remove_dir_all(&dir).ok();
}
