//! A stream's output record written in Rust, with the GIL released: the bytes of
//! `fastmerge.batch.json_line(StreamResult.record())` (compact JSON as Python's
//! `json.dumps(ensure_ascii=False, separators=(",", ":"))` writes it, and a newline) and the
//! typed Parquet columns of `fastmerge.batch.results`' rows. The record's keys are
//! [`RECORD_FIELDS`], the schema `fastmerge.batch.schema` declares (a test holds the two alike). `fastmerge batch` writes these instead of
//! building each message's Python objects only to serialize them again.
//!
//! Nothing here decides a merge: it lays out what the engine gave in the record's shape. When
//! a message is not in the shape the Python record expects (a field missing, a status it does
//! not know), [`record`] gives None and the caller returns the usual item, so Python writes
//! that record itself (the same bytes, or the same error).

use crate::engine::value::Value;
use crate::py::dumps::{string, value};

/// `StreamResult.status` order, best first (`fastmerge.batch.schema.STATUSES`).
pub(crate) const STATUSES: [&str; 4] = ["complete", "incomplete", "failed", "error"];

/// A record's keys in the order its line writes them (`fastmerge.batch.schema.RECORD_FIELDS`);
/// `choices` only for a stream of several choices.
pub(crate) const RECORD_FIELDS: [&str; 7] = [
    "key",
    "provider",
    "status",
    "anomalies",
    "message",
    "choices",
    "error",
];
const KEY: &str = RECORD_FIELDS[0];
const PROVIDER: &str = RECORD_FIELDS[1];
const STATUS: &str = RECORD_FIELDS[2];
const ANOMALIES: &str = RECORD_FIELDS[3];
const MESSAGE: &str = RECORD_FIELDS[4];
const CHOICES: &str = RECORD_FIELDS[5];
const ERROR: &str = RECORD_FIELDS[6];

/// `"name":` after `{` (the first field) or `,`.
fn field(out: &mut Vec<u8>, name: &str, first: bool) {
    out.push(if first { b'{' } else { b',' });
    out.push(b'"');
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b"\":");
}

/// A record's status's place in [`STATUSES`] (a status [`record`] gave).
pub(crate) fn status_index(status: &str) -> usize {
    STATUSES.iter().position(|s| *s == status).unwrap_or(3)
}

/// `to_dict()`'s keys after `parts`, each with the data key it reads (`usage` is
/// `usage_metadata` there).
const ASSISTANT_KEYS: [(&str, &str); 15] = [
    ("content_list", "content_list"),
    ("usage_metadata", "usage"),
    ("finish_reason", "finish_reason"),
    ("parser_content", "parser_content"),
    ("prompt_token_ids", "prompt_token_ids"),
    ("completion_token_ids", "completion_token_ids"),
    ("logprobs", "logprobs"),
    ("response_id", "response_id"),
    ("response_model", "response_model"),
    ("provider_metadata", "provider_metadata"),
    ("provider_content", "provider_content"),
    ("refusal", "refusal"),
    ("status", "status"),
    ("anomalies", "anomalies"),
    ("choice_index", "choice_index"),
];

/// The Parquet columns of a record that are not in the record's own fields
/// (`fastmerge.batch.COLUMNS`): choice 0's model, finish reasons, usage counts, text and
/// number of tool calls, and the record's number of anomalies.
#[derive(Default)]
pub(crate) struct Row {
    pub model: Option<String>,
    pub finish_reason: Option<String>,
    pub finish_reason_normalized: Option<String>,
    pub input_tokens: Option<i64>,
    pub output_tokens: Option<i64>,
    pub total_tokens: Option<i64>,
    pub text: Option<String>,
    pub tool_calls: Option<usize>,
    pub anomalies: usize,
}

/// A stream's record (its JSON line is in the caller's buffer): its status, where its
/// message's JSON is in the line (None: `"message":null`), and its Parquet columns when asked
/// for.
pub(crate) struct Record {
    pub status: &'static str,
    pub message: Option<(usize, usize)>,
    pub row: Option<Row>,
}

/// The record of a stream (`StreamResult.record()` with `to=None`), its line written in `out`
/// (cleared first): `messages` are its choices' data (None: it could not be merged, `error`
/// says why). None when a message is not in the shape the Python record reads.
pub(crate) fn record(
    key: &str,
    provider: Option<&str>,
    messages: Option<&[Value]>,
    error: Option<&str>,
    row: bool,
    out: &mut Vec<u8>,
) -> Option<Record> {
    let messages = messages.unwrap_or(&[]);
    let mut maps = Vec::with_capacity(messages.len());
    for message in messages {
        match message.resolved() {
            Value::Dict(map) => maps.push(map),
            _ => return None,
        }
    }
    // the worst status of the choices; `error` without a message
    let mut worst = if maps.is_empty() { 3 } else { 0 };
    for map in &maps {
        let status = match map.get("status")?.resolved() {
            Value::Null => "incomplete",
            Value::Str(text) => text.as_str(),
            _ => return None,
        };
        worst = worst.max(STATUSES.iter().position(|s| *s == status)?);
    }
    // each anomaly once, compared as Python compares them (`1 == 1.0`)
    let mut anomalies: Vec<&Value> = Vec::new();
    for map in &maps {
        let Value::List(items) = map.get("anomalies")?.resolved() else {
            return None;
        };
        for item in items.iter() {
            if !anomalies.contains(&item) {
                anomalies.push(item);
            }
        }
    }
    out.clear();
    field(out, KEY, true);
    string(out, key);
    field(out, PROVIDER, false);
    match provider {
        Some(name) => string(out, name),
        None => out.extend_from_slice(b"null"),
    }
    field(out, STATUS, false);
    string(out, STATUSES[worst]);
    field(out, ANOMALIES, false);
    out.push(b'[');
    for (index, anomaly) in anomalies.iter().enumerate() {
        if index > 0 {
            out.push(b',');
        }
        value(out, anomaly);
    }
    out.push(b']');
    field(out, MESSAGE, false);
    let mut place = None;
    if let Some(first) = maps.first() {
        let start = out.len();
        message(out, first)?;
        place = Some((start, out.len()));
        if maps.len() > 1 {
            field(out, CHOICES, false);
            out.push(b'[');
            for (index, map) in maps.iter().enumerate() {
                if index > 0 {
                    out.push(b',');
                }
                message(out, map)?;
            }
            out.push(b']');
        }
    } else {
        out.extend_from_slice(b"null");
    }
    field(out, ERROR, false);
    match error {
        Some(text) => string(out, text),
        None => out.extend_from_slice(b"null"),
    }
    out.extend_from_slice(b"}\n");
    let row = if row {
        let mut columns = match maps.first() {
            Some(first) => columns(first)?,
            None => Row::default(),
        };
        columns.anomalies = anomalies.len();
        Some(columns)
    } else {
        None
    };
    Some(Record {
        status: STATUSES[worst],
        message: place,
        row,
    })
}

type Map = crate::engine::value::Map;

/// A message's `to_dict()`: its data's fields in that order (`family` and
/// `finish_reason_normalized` are not among them).
fn message(out: &mut Vec<u8>, map: &Map) -> Option<()> {
    out.extend_from_slice(b"{\"role\":");
    value(out, map.get("role")?);
    out.extend_from_slice(b",\"name\":");
    value(out, map.get("name")?);
    out.extend_from_slice(b",\"metadata\":");
    value(out, map.get("metadata")?);
    out.extend_from_slice(b",\"parts\":");
    value(out, map.get("parts")?);
    for (name, data_key) in ASSISTANT_KEYS {
        out.extend_from_slice(b",\"");
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b"\":");
        value(out, map.get(data_key)?);
    }
    out.push(b'}');
    Some(())
}

/// A text field of a column: a str or None, or None for the whole record (Python would not
/// make a string column of it).
fn text_field(map: &Map, key: &str) -> Option<Option<String>> {
    match map.get(key)?.resolved() {
        Value::Null => Some(None),
        Value::Str(text) => Some(Some(text.clone())),
        _ => None,
    }
}

/// The columns of `_row` read from choice 0's data.
fn columns(map: &Map) -> Option<Row> {
    let usage = map.get("usage")?.resolved();
    let count = |name: &str| match usage {
        Value::Dict(usage) => match usage.get(name).map(Value::resolved) {
            Some(Value::Int(number)) => Some(*number),
            _ => None,
        },
        _ => None,
    };
    let Value::List(parts) = map.get("parts")?.resolved() else {
        return None;
    };
    let mut text = String::new();
    let mut calls = 0;
    for part in parts.iter() {
        let Value::Dict(part) = part.resolved() else {
            return None;
        };
        match part.get("part")?.resolved() {
            Value::Str(kind) if kind == "text" => match part.get("text")?.resolved() {
                Value::Str(piece) => text.push_str(piece),
                _ => return None,
            },
            Value::Str(kind) if kind == "tool_call" => {
                let named = !matches!(part.get("name")?.resolved(), Value::Null);
                if named || !matches!(part.get("id")?.resolved(), Value::Null) {
                    calls += 1;
                }
            }
            _ => {}
        }
    }
    Some(Row {
        model: text_field(map, "response_model")?,
        finish_reason: text_field(map, "finish_reason")?,
        finish_reason_normalized: text_field(map, "finish_reason_normalized")?,
        input_tokens: count("input_tokens"),
        output_tokens: count("output_tokens"),
        total_tokens: count("total_tokens"),
        text: Some(text),
        tool_calls: Some(calls),
        anomalies: 0,
    })
}
