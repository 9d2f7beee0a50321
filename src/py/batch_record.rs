//! A stream's output record written in Rust, with the GIL released: the bytes of
//! `fastmerge.batch.json_line(StreamResult.record())` (compact JSON as Python's
//! `json.dumps(ensure_ascii=False, separators=(",", ":"))` writes it, and a newline) and the
//! typed Parquet columns of `fastmerge.batch._row`. `fastmerge batch` writes these instead of
//! building each message's Python objects only to serialize them again.
//!
//! Nothing here decides a merge: it lays out what the engine gave in the record's shape. When
//! a message is not in the shape the Python record expects (a field missing, a status it does
//! not know), [`record`] gives None and the caller returns the usual item, so Python writes
//! that record itself (the same bytes, or the same error).

use crate::engine::value::{py_float, Value};

/// `StreamResult.status` order, best first (`fastmerge.batch.STATUSES`).
const STATUSES: [&str; 4] = ["complete", "incomplete", "failed", "error"];

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

/// A stream's record: its JSON line, its status, where its message's JSON is in the line
/// (None: `"message":null`), and its Parquet columns when asked for.
pub(crate) struct Record {
    pub line: Vec<u8>,
    pub status: &'static str,
    pub message: Option<(usize, usize)>,
    pub row: Option<Row>,
}

/// The record of a stream (`StreamResult.record()` with `to=None`): `messages` are its
/// choices' data (None: it could not be merged, `error` says why). None when a message is not
/// in the shape the Python record reads.
pub(crate) fn record(
    key: &str,
    provider: Option<&str>,
    messages: Option<&[Value]>,
    error: Option<&str>,
    row: bool,
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
    let mut out = Vec::with_capacity(256);
    out.extend_from_slice(b"{\"key\":");
    string(&mut out, key);
    out.extend_from_slice(b",\"provider\":");
    match provider {
        Some(name) => string(&mut out, name),
        None => out.extend_from_slice(b"null"),
    }
    out.extend_from_slice(b",\"status\":\"");
    out.extend_from_slice(STATUSES[worst].as_bytes());
    out.extend_from_slice(b"\",\"anomalies\":[");
    for (index, anomaly) in anomalies.iter().enumerate() {
        if index > 0 {
            out.push(b',');
        }
        value(&mut out, anomaly);
    }
    out.extend_from_slice(b"],\"message\":");
    let mut place = None;
    if let Some(first) = maps.first() {
        let start = out.len();
        message(&mut out, first)?;
        place = Some((start, out.len()));
        if maps.len() > 1 {
            out.extend_from_slice(b",\"choices\":[");
            for (index, map) in maps.iter().enumerate() {
                if index > 0 {
                    out.push(b',');
                }
                message(&mut out, map)?;
            }
            out.push(b']');
        }
    } else {
        out.extend_from_slice(b"null");
    }
    out.extend_from_slice(b",\"error\":");
    match error {
        Some(text) => string(&mut out, text),
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
        line: out,
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

/// `value` as `json.dumps(..., ensure_ascii=False, separators=(",", ":"))` writes the Python
/// data the binding makes of it (kept JSON text is written as the value it reads as).
pub(crate) fn value(out: &mut Vec<u8>, value_: &Value) {
    match value_ {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::Int(number) => {
            let mut buffer = itoa_buffer();
            out.extend_from_slice(int_text(*number, &mut buffer));
        }
        Value::Float(number) => float(out, *number),
        Value::Str(text) => string(out, text),
        Value::List(items) => {
            out.push(b'[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push(b',');
                }
                value(out, item);
            }
            out.push(b']');
        }
        Value::Dict(map) => {
            out.push(b'{');
            for (index, (key, item)) in map.iter().enumerate() {
                if index > 0 {
                    out.push(b',');
                }
                string(out, key);
                out.push(b':');
                value(out, item);
            }
            out.push(b'}');
        }
        Value::Json(text) => value(out, text.value()),
    }
}

fn itoa_buffer() -> [u8; 20] {
    [0; 20]
}

/// The decimal digits of `number` (`int.__repr__`), written at the end of `buffer`.
fn int_text(number: i64, buffer: &mut [u8; 20]) -> &[u8] {
    let mut rest = number.unsigned_abs();
    let mut start = buffer.len();
    loop {
        start -= 1;
        buffer[start] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    if number < 0 {
        // i64::MIN has 19 digits: the sign still fits
        start -= 1;
        buffer[start] = b'-';
    }
    &buffer[start..]
}

/// A float as `json.dumps` writes it: `float.__repr__`, and `NaN` / `Infinity` /
/// `-Infinity` (its `allow_nan` default).
fn float(out: &mut Vec<u8>, number: f64) {
    if number.is_nan() {
        out.extend_from_slice(b"NaN");
    } else if number.is_infinite() {
        out.extend_from_slice(if number > 0.0 {
            b"Infinity"
        } else {
            b"-Infinity"
        });
    } else {
        out.extend_from_slice(py_float(number).as_bytes());
    }
}

/// A string as `json.dumps(ensure_ascii=False)` writes it: `"` and `\` escaped, the control
/// characters below U+0020 as `\n`, `\r`, `\t`, `\b`, `\f` or `\u00XX` (lower-case hex), every
/// other character as itself (UTF-8).
pub(crate) fn string(out: &mut Vec<u8>, text: &str) {
    out.push(b'"');
    let bytes = text.as_bytes();
    let mut start = 0;
    for (index, &byte) in bytes.iter().enumerate() {
        let escape: &[u8] = match byte {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x08 => b"\\b",
            0x0c => b"\\f",
            0x00..=0x1f => b"",
            _ => continue,
        };
        out.extend_from_slice(&bytes[start..index]);
        if escape.is_empty() {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.extend_from_slice(b"\\u00");
            out.push(HEX[usize::from(byte >> 4)]);
            out.push(HEX[usize::from(byte & 0xf)]);
        } else {
            out.extend_from_slice(escape);
        }
        start = index + 1;
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(v: &Value) -> String {
        let mut out = Vec::new();
        value(&mut out, v);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn scalars_as_python_writes_them() {
        assert_eq!(text(&Value::Int(i64::MIN)), "-9223372036854775808");
        assert_eq!(text(&Value::Int(0)), "0");
        assert_eq!(text(&Value::Float(1e16)), "1e+16");
        assert_eq!(text(&Value::Float(1e-5)), "1e-05");
        assert_eq!(text(&Value::Float(100.0)), "100.0");
        assert_eq!(text(&Value::Float(-0.0)), "-0.0");
        assert_eq!(text(&Value::Float(f64::NAN)), "NaN");
        assert_eq!(text(&Value::Float(f64::NEG_INFINITY)), "-Infinity");
        let s = Value::Str("a\"\\\n\r\t\u{8}\u{c}\u{1}\u{1f}\u{7f}é\u{2028}😀".to_owned());
        assert_eq!(
            text(&s),
            "\"a\\\"\\\\\\n\\r\\t\\b\\f\\u0001\\u001f\u{7f}é\u{2028}😀\""
        );
    }
}
