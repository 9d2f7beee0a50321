//! Provider events as JSON values, and the transports that carry them (the twin's
//! `_pure/events.py`, whose docstring states the rules).
//!
//! [`parse`] reads one event's JSON text straight into [`Value`]s: serde_json drives a visitor,
//! so there is no intermediate tree. [`Transport`] turns raw stream bytes, split anywhere, into
//! event payloads: server-sent events, JSON values one after another, or a JSON array.

use std::fmt;
use std::sync::Arc;

use crate::engine::value::Map;
use serde::de::{DeserializeSeed, Error as _, MapAccess, SeqAccess, Visitor};

use crate::engine::value::Value;

/// Deepest nesting of an event (the top-level object is level 1).
pub const MAX_JSON_DEPTH: usize = 100;
/// What every unreadable JSON text is reported as (parsers word their errors differently).
pub const NOT_JSON: &str = "not valid JSON";
const BOM: &[u8] = b"\xef\xbb\xbf";

/// An event that is not a JSON object; the text of the error (the aggregator adds the event's
/// number).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventDataError(pub String);

impl EventDataError {
    fn not_json() -> Self {
        EventDataError(NOT_JSON.to_owned())
    }
}

/// The JSON name of a value's kind (the twin's `kind_name`).
pub fn kind_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Int(_) | Value::Float(_) => "number",
        Value::Str(_) => "string",
        Value::List(_) => "array",
        Value::Dict(_) => "object",
    }
}

/// One event from JSON text: [`NOT_JSON`] if it does not parse (or holds a lone surrogate, or
/// nests deeper than [`MAX_JSON_DEPTH`]); valid JSON that is not an object says what it is.
pub fn parse(data: &[u8]) -> Result<Value, EventDataError> {
    let mut de = serde_json::Deserializer::from_slice(data);
    let value = Seed { depth: 1 }
        .deserialize(&mut de)
        .map_err(|_| EventDataError::not_json())?;
    de.end().map_err(|_| EventDataError::not_json())?;
    match value {
        Value::Dict(_) => Ok(value),
        other => Err(EventDataError(format!(
            "an event must be a JSON object, not {}",
            kind_name(&other)
        ))),
    }
}

#[derive(Clone, Copy)]
struct Seed {
    depth: usize,
}

impl<'de> DeserializeSeed<'de> for Seed {
    type Value = Value;
    fn deserialize<D: serde::Deserializer<'de>>(self, de: D) -> Result<Value, D::Error> {
        de.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Seed {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Int(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        // outside the signed 64-bit range: the nearest float (the twin: float(text))
        Ok(i64::try_from(v).map_or(Value::Float(v as f64), Value::Int))
    }
    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Value, E> {
        if v.is_finite() {
            Ok(Value::Float(v))
        } else {
            Err(E::custom("out of range"))
        }
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::Str(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::Str(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        if self.depth > MAX_JSON_DEPTH {
            return Err(A::Error::custom("too deep"));
        }
        let inner = Seed {
            depth: self.depth + 1,
        };
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(item) = seq.next_element_seed(inner)? {
            items.push(item);
        }
        Ok(Value::List(Arc::new(items)))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        if self.depth > MAX_JSON_DEPTH {
            return Err(A::Error::custom("too deep"));
        }
        let inner = Seed {
            depth: self.depth + 1,
        };
        // serde_json gives no size hint: room for a provider event's usual keys up front
        let mut out =
            Map::with_capacity_and_hasher(map.size_hint().unwrap_or(8), Default::default());
        while let Some(key) = map.next_key::<String>()? {
            let value = map.next_value_seed(inner)?;
            out.insert(key, value);
        }
        Ok(Value::Dict(Arc::new(out)))
    }
}

// ---------------------------------------------------------------------------------------------
// Transports

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TransportKind {
    Sse,
    Json,
    Array,
}

/// Raw stream bytes in, complete event payloads out (the twin's `Transport`).
#[derive(Debug, Default)]
pub struct Transport {
    pub kind: Option<TransportKind>,
    buf: Vec<u8>,
    pos: usize,
    data: Vec<Vec<u8>>,
    has_data: bool,
    depth: i64,
    in_str: bool,
    esc: bool,
    start: Option<usize>,
    bom_checked: bool,
}

fn is_ws(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\r' | b'\n')
}

fn trim_ws(mut s: &[u8]) -> &[u8] {
    while let [first, rest @ ..] = s {
        if is_ws(*first) {
            s = rest;
        } else {
            break;
        }
    }
    while let [rest @ .., last] = s {
        if is_ws(*last) {
            s = rest;
        } else {
            break;
        }
    }
    s
}

impl Transport {
    pub fn new() -> Self {
        Self::default()
    }

    /// Bytes as they arrive; complete payloads are appended to `out` (also on error: the
    /// payloads before the bad byte are still read).
    pub fn feed(&mut self, data: &[u8], out: &mut Vec<Vec<u8>>) -> Result<(), EventDataError> {
        self.buf.extend_from_slice(data);
        if !self.bom_checked {
            if self.buf.len() < 3 && BOM.starts_with(&self.buf) {
                return Ok(());
            }
            self.bom_checked = true;
            if self.buf.starts_with(BOM) {
                self.buf.drain(..3);
            }
        }
        if self.kind.is_none() {
            let Some(first) = self.buf.iter().copied().find(|c| !is_ws(*c)) else {
                return Ok(());
            };
            self.kind = Some(match first {
                b'{' => TransportKind::Json,
                b'[' => TransportKind::Array,
                _ => TransportKind::Sse,
            });
        }
        if self.kind == Some(TransportKind::Sse) {
            self.sse(out, false);
            Ok(())
        } else {
            self.scan(out)
        }
    }

    /// The end of the stream: the events still in the buffer go to `out`; the result is the
    /// *tail*, the last event when the stream ended inside it (an SSE event without its blank
    /// line, a JSON value not closed), or None (the twin's `finish`).
    pub fn finish(&mut self, out: &mut Vec<Vec<u8>>) -> Result<Option<Vec<u8>>, EventDataError> {
        let result = match self.kind {
            Some(TransportKind::Sse) => {
                self.sse(out, true);
                Ok(if self.has_data { self.take() } else { None })
            }
            Some(_) => self
                .scan(out)
                .map(|()| self.start.is_some().then(|| self.buf.clone())),
            None => Ok(None),
        };
        self.buf.clear();
        self.pos = 0;
        result
    }

    // -- server-sent events

    fn sse(&mut self, out: &mut Vec<Vec<u8>>, last: bool) {
        let buf = std::mem::take(&mut self.buf);
        let n = buf.len();
        let mut pos = 0;
        while pos < n {
            let end = memchr::memchr2(b'\n', b'\r', &buf[pos..]).map_or(n, |i| pos + i);
            if end == n {
                if !last {
                    break;
                }
                self.line(&buf[pos..end], out);
                pos = n;
                break;
            }
            if buf[end] == b'\r' && end + 1 == n && !last {
                break; // a \r at the end: maybe the first half of \r\n
            }
            self.line(&buf[pos..end], out);
            pos = if buf[end] == b'\r' && end + 1 < n && buf[end + 1] == b'\n' {
                end + 2
            } else {
                end + 1
            };
        }
        self.buf = buf[pos..].to_vec();
    }

    fn line(&mut self, line: &[u8], out: &mut Vec<Vec<u8>>) {
        if line.is_empty() {
            if self.has_data {
                self.dispatch(out);
            }
            return;
        }
        if line[0] == b':' {
            return; // a comment
        }
        let (field, value) = match line.iter().position(|c| *c == b':') {
            None => (line, &b""[..]),
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
        };
        if field == b"data" {
            self.data.push(value.to_vec());
            self.has_data = true;
        }
    }

    fn dispatch(&mut self, out: &mut Vec<Vec<u8>>) {
        if let Some(payload) = self.take() {
            out.push(payload);
        }
    }

    /// The event being read, or None for an empty one or `[DONE]` (the twin's `_take`).
    fn take(&mut self) -> Option<Vec<u8>> {
        let payload = std::mem::take(&mut self.data).join(&b'\n');
        self.has_data = false;
        let stripped = trim_ws(&payload);
        (!stripped.is_empty() && stripped != b"[DONE]").then_some(payload)
    }

    // -- JSON values one after another, or the elements of one array

    fn scan(&mut self, out: &mut Vec<Vec<u8>>) -> Result<(), EventDataError> {
        let array = self.kind == Some(TransportKind::Array);
        let buf = &self.buf;
        let n = buf.len();
        // the scanner's state in locals (the loop runs per byte outside strings)
        let (mut pos, mut depth, mut in_str, mut esc, mut start) =
            (self.pos, self.depth, self.in_str, self.esc, self.start);
        let mut result = Ok(());
        while pos < n {
            let c = buf[pos];
            if start.is_none() {
                if is_ws(c) || (array && matches!(c, b',' | b'[' | b']')) {
                    pos += 1;
                    continue;
                }
                if c != b'{' {
                    result = Err(EventDataError::not_json());
                    break;
                }
                start = Some(pos);
                depth = 0;
            }
            if in_str {
                if esc {
                    esc = false;
                } else {
                    // to the string's next quote or backslash (provider strings are short:
                    // a plain loop beats a SIMD search's set-up)
                    while pos < n && buf[pos] != b'"' && buf[pos] != b'\\' {
                        pos += 1;
                    }
                    if pos == n {
                        break;
                    }
                    if buf[pos] == b'\\' {
                        esc = true;
                    } else {
                        in_str = false;
                    }
                }
            } else {
                match c {
                    b'"' => in_str = true,
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            let first = start.take().unwrap_or(pos);
                            out.push(buf[first..=pos].to_vec());
                        }
                    }
                    _ => {}
                }
            }
            pos += 1;
        }
        let keep = start.unwrap_or(pos);
        self.buf.drain(..keep);
        self.pos = pos - keep;
        self.start = start.map(|_| 0);
        self.depth = depth;
        self.in_str = in_str;
        self.esc = esc;
        result
    }
}
