//! Shared by the cargo integration tests: JSON (serde_json, insertion order kept) to and from
//! the engine's native `Value`; the batch tests' helpers are in `common::batch`.

#![allow(dead_code)] // each test module uses part of it

pub mod batch;

use fastmerge::engine::aggregate::AggregatorCore;
use fastmerge::engine::chunks::Options;
use fastmerge::engine::providers::{self, Adapter};
use fastmerge::engine::value::Value;
use serde_json::json;
use std::sync::Arc;

pub fn convert(json: serde_json::Value) -> Value {
    match json {
        serde_json::Value::Null => Value::Null,
        serde_json::Value::Bool(b) => Value::Bool(b),
        serde_json::Value::Number(n) => match n.as_i64() {
            Some(i) => Value::Int(i),
            None => Value::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        serde_json::Value::String(s) => Value::Str(s),
        serde_json::Value::Array(items) => {
            Value::List(Arc::new(items.into_iter().map(convert).collect()))
        }
        serde_json::Value::Object(map) => Value::Dict(Arc::new(
            map.into_iter()
                .map(|(k, v)| (k, convert(v)))
                .collect::<fastmerge::engine::value::Map>(),
        )),
    }
}

pub fn to_json(value: &Value) -> serde_json::Value {
    match value.resolved() {
        Value::Null => serde_json::Value::Null,
        Value::Bool(b) => json!(b),
        Value::Int(i) => json!(i),
        Value::Float(f) => {
            serde_json::Value::Number(serde_json::Number::from_f64(*f).expect("a finite float"))
        }
        Value::Str(s) => json!(s),
        Value::List(items) => serde_json::Value::Array(items.iter().map(to_json).collect()),
        Value::Dict(map) => {
            serde_json::Value::Object(map.iter().map(|(k, v)| (k.clone(), to_json(v))).collect())
        }
        Value::Json(text) => panic!("resolved: {}", text.text()),
    }
}

/// The repository's copy of the conformance corpus.
pub fn corpus_root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus")
}

/// The corpus's folders (one per wire format), sorted.
pub fn corpus_dirs() -> Vec<String> {
    let mut dirs: Vec<String> = std::fs::read_dir(corpus_root())
        .expect("corpus")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.is_dir())
        .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .collect();
    dirs.sort();
    dirs
}

/// Every corpus stream (`.jsonl`) of the folders `dirs`, folder by folder in the order given,
/// each folder's streams sorted.
pub fn corpus_paths(dirs: &[&str]) -> Vec<String> {
    let root = corpus_root();
    let mut out = Vec::new();
    for dir in dirs {
        let mut paths: Vec<_> = std::fs::read_dir(root.join(dir))
            .expect("corpus dir")
            .map(|e| e.expect("entry").path())
            .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
            .collect();
        paths.sort();
        out.extend(paths.iter().map(|path| path.display().to_string()));
    }
    out
}

/// [`corpus_paths`] with each stream's bytes.
pub fn corpus_streams(dirs: &[&str]) -> Vec<(String, Vec<u8>)> {
    corpus_paths(dirs)
        .into_iter()
        .map(|path| {
            let bytes = std::fs::read(&path).expect("read");
            (path, bytes)
        })
        .collect()
}

/// Each event of `cases` fails on a new adapter for `provider` with its error text.
pub fn assert_event_errors<const N: usize>(provider: &str, cases: [(serde_json::Value, &str); N]) {
    for (event, detail) in cases {
        let mut a = adapter_for(provider);
        assert_eq!(
            a.event(&convert(event)),
            Err(detail.to_owned()),
            "{provider}: {detail}"
        );
    }
}

/// The messages (as JSON) of the corpus stream `path` (below `tests/corpus`, the repository's
/// copy of the conformance corpus), aggregated by the engine from its bytes fed `piece` bytes
/// at a time (0: all at once).
pub fn recorded(provider: &str, path: &str, piece: usize) -> Vec<serde_json::Value> {
    let file = corpus_root().join(path);
    let bytes = std::fs::read(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let mut core = AggregatorCore::new(Some(provider), Options::DEFAULT);
    for chunk in bytes.chunks(if piece == 0 {
        bytes.len().max(1)
    } else {
        piece
    }) {
        core.feed(chunk).expect("feed");
    }
    core.finish().expect("finish").iter().map(to_json).collect()
}

/// A new adapter for the wire format `name`.
pub fn adapter_for(name: &str) -> Box<dyn Adapter> {
    providers::adapter(name).expect("registered")
}

/// Leaves with their choice indexes as JSON text (key order is part of the result).
pub fn show_leaves(out: &[(i64, Value)]) -> String {
    let items: Vec<serde_json::Value> = out
        .iter()
        .map(|(choice, leaf)| json!([choice, to_json(leaf)]))
        .collect();
    serde_json::to_string(&items).expect("json")
}

/// The leaves of one event as JSON text.
pub fn leaves(adapter: &mut dyn Adapter, event: serde_json::Value) -> String {
    let out = adapter.event(&convert(event)).expect("event maps");
    show_leaves(&out)
}

/// A JSON value as text, to compare with [`leaves`].
pub fn text(value: serde_json::Value) -> String {
    serde_json::to_string(&value).expect("json")
}

/// A small deterministic generator (xorshift) for generated test inputs.
pub struct Gen(pub u64);

impl Gen {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}
