//! Provider events as JSON values (the twin's `_pure/events.py`, whose docstring states the
//! rules).
//!
//! [`parse`] reads one event's JSON text straight into [`Value`]s: serde_json drives a visitor,
//! so there is no intermediate tree. Cutting a stream into event payloads is
//! [`crate::engine::transport`]'s job: this file only reads one payload.

use std::fmt;
use std::sync::Arc;

use crate::engine::value::Map;
use serde::de::{DeserializeSeed, Error as _, MapAccess, SeqAccess, Visitor};

use crate::engine::json_text;
use crate::engine::value::JsonText;
use crate::engine::value::Value;

/// Deepest nesting of an event (the top-level object is level 1).
pub const MAX_JSON_DEPTH: usize = 100;
/// What every unreadable JSON text is reported as (parsers word their errors differently).
pub const NOT_JSON: &str = "not valid JSON";

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
    match value.resolved() {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Int(_) | Value::Float(_) => "number",
        Value::Str(_) => "string",
        Value::List(_) => "array",
        Value::Dict(_) => "object",
        Value::Json(_) => "object", // never: resolved
    }
}

/// One event from JSON text: [`NOT_JSON`] if it does not parse (or holds a lone surrogate, or
/// nests deeper than [`MAX_JSON_DEPTH`]); valid JSON that is not an object says what it is.
pub fn parse(data: &[u8]) -> Result<Value, EventDataError> {
    let zeros = NegativeZeros::default();
    let mut value = parse_with(data, &zeros, 1)?;
    if zeros.seen.get() {
        // serde_json reads `-0` as the float -0.0, the twin (Python's json) as the int 0: read
        // again knowing which of the text's negative zeros are integers
        let zeros = NegativeZeros {
            ints: Some(negative_zero_ints(data)),
            ..NegativeZeros::default()
        };
        value = parse_with(data, &zeros, 1)?;
    }
    match value {
        Value::Dict(_) => Ok(value),
        other => Err(EventDataError(format!(
            "an event must be a JSON object, not {}",
            kind_name(&other)
        ))),
    }
}

/// The value of one member of an event, at level `depth` (2: a member of the event object),
/// from its JSON text alone, as [`parse`] reads it inside the event: a typed fast path's
/// reading of a member it keeps whole (a gateway's own top-level fields).
pub fn parse_member(data: &[u8], depth: usize) -> Result<Value, EventDataError> {
    let zeros = NegativeZeros::default();
    let value = parse_with(data, &zeros, depth)?;
    if !zeros.seen.get() {
        return Ok(value);
    }
    let zeros = NegativeZeros {
        ints: Some(negative_zero_ints(data)),
        ..NegativeZeros::default()
    };
    parse_with(data, &zeros, depth)
}

fn parse_with(data: &[u8], zeros: &NegativeZeros, depth: usize) -> Result<Value, EventDataError> {
    let mut de = serde_json::Deserializer::from_slice(data);
    let value = Seed { depth, zeros }
        .deserialize(&mut de)
        .map_err(|_| EventDataError::not_json())?;
    de.end().map_err(|_| EventDataError::not_json())?;
    Ok(value)
}

/// The numbers of a text that read as -0.0, in order: whether each is written as an integer
/// (`-0`, the int 0) or not (`-0.0`, `-0e3`, `-1e-400`: the float -0.0).
#[derive(Default)]
struct NegativeZeros {
    /// None on the first read (which only notes that there is one: `seen`).
    ints: Option<Vec<bool>>,
    seen: std::cell::Cell<bool>,
    next: std::cell::Cell<usize>,
}

impl NegativeZeros {
    fn value(&self) -> Value {
        self.seen.set(true);
        let Some(ints) = &self.ints else {
            return Value::Float(-0.0);
        };
        let i = self.next.get();
        self.next.set(i + 1);
        if ints.get(i).copied().unwrap_or(false) {
            Value::Int(0)
        } else {
            Value::Float(-0.0)
        }
    }
}

/// For each number token of JSON text (outside strings) whose value is -0.0, whether it is
/// written as an integer.
fn negative_zero_ints(data: &[u8]) -> Vec<bool> {
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < data.len() {
        match data[pos] {
            b'"' => {
                pos += 1;
                while pos < data.len() && data[pos] != b'"' {
                    pos += if data[pos] == b'\\' { 2 } else { 1 };
                }
                pos += 1;
            }
            b'-' | b'0'..=b'9' => {
                let start = pos;
                while pos < data.len()
                    && matches!(data[pos], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')
                {
                    pos += 1;
                }
                let token = &data[start..pos];
                let zero = std::str::from_utf8(token)
                    .ok()
                    .and_then(|t| t.parse::<f64>().ok())
                    .is_some_and(|v| v == 0.0 && v.is_sign_negative());
                if zero {
                    out.push(!token.iter().any(|c| matches!(c, b'.' | b'e' | b'E')));
                }
            }
            _ => pos += 1,
        }
    }
    out
}

/// A JSON value nested `DEPTH` levels deep in an event (the top-level object is level 1), for
/// a typed reading of an event that keeps this value whole (a fast path's `logprobs`): the
/// items of each list one key below it (a logprobs `content`) are kept as their text where
/// [`JsonText::accept`] takes them (only what the message keeps is copied, once, and read into
/// objects straight from it); the rest, and every item it declines, is read into [`Value`]s
/// as [`parse`] reads them. A negative zero outside kept text fails it (only [`parse`] tells
/// `-0` from `-0.0`), as does nesting deeper than [`MAX_JSON_DEPTH`] in all.
pub struct KeptItems<const DEPTH: usize>(pub Value);

impl<'de, const DEPTH: usize> serde::Deserialize<'de> for KeptItems<DEPTH> {
    fn deserialize<D: serde::Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
        let zeros = NegativeZeros::default();
        let seed = Seed {
            depth: DEPTH,
            zeros: &zeros,
        };
        let value = de.deserialize_any(Keeping {
            seed,
            items_kept: false,
        })?;
        if zeros.seen.get() {
            return Err(D::Error::custom("a negative zero"));
        }
        Ok(KeptItems(value))
    }
}

/// [`KeptItems`] of the usual shape, read without serde: an object whose keys have no escape
/// and whose values are null or lists of items [`json_text::scan`] keeps (a logprobs object),
/// starting at `pos` in `b` at level `depth` of its event. The value and where it ends; None
/// for anything else, invalid JSON included, which the caller then reads with [`KeptItems`]
/// (where this reads a value, that reads the same value).
pub fn kept_items_at(b: &[u8], pos: usize, depth: usize) -> Option<(Value, usize)> {
    let skip = |pos: usize| json_text::skip_space(b, pos);
    // the items of a list one key below are at `depth + 2`
    let room = (MAX_JSON_DEPTH + 1).checked_sub(depth + 2)?;
    let mut pos = skip(pos);
    if b.get(pos) != Some(&b'{') {
        return None;
    }
    let mut out = Map::with_capacity_and_hasher(2, Default::default());
    pos = skip(pos + 1);
    if b.get(pos) == Some(&b'}') {
        return Some((Value::Dict(Arc::new(out)), pos + 1));
    }
    loop {
        // a key without escapes (nor control characters)
        if b.get(pos) != Some(&b'"') {
            return None;
        }
        let len = memchr::memchr2(b'"', b'\\', b.get(pos + 1..)?)?;
        let key = b.get(pos + 1..pos + 1 + len)?;
        if b.get(pos + 1 + len) != Some(&b'"') || key.iter().any(|&c| c < 0x20) {
            return None;
        }
        let key = std::str::from_utf8(key).ok()?;
        pos = skip(pos + len + 2);
        if b.get(pos) != Some(&b':') {
            return None;
        }
        pos = skip(pos + 1);
        let value = match *b.get(pos)? {
            b'n' if b.get(pos..pos + 4) == Some(b"null") => {
                pos += 4;
                Value::Null
            }
            b'[' => {
                let mut items = Vec::new();
                pos = skip(pos + 1);
                if b.get(pos) == Some(&b']') {
                    pos += 1;
                } else {
                    loop {
                        let end = json_text::scan(b, pos, room)?;
                        let text = simdutf8::basic::from_utf8(&b[pos..end]).ok()?;
                        items.push(Value::Json(Arc::new(JsonText::kept(text))));
                        pos = skip(end);
                        match *b.get(pos)? {
                            b',' => pos = skip(pos + 1),
                            b']' => {
                                pos += 1;
                                break;
                            }
                            _ => return None,
                        }
                    }
                }
                Value::List(Arc::new(items))
            }
            _ => return None,
        };
        out.insert(key.to_owned(), value);
        pos = skip(pos);
        match *b.get(pos)? {
            b',' => pos = skip(pos + 1),
            b'}' => return Some((Value::Dict(Arc::new(out)), pos + 1)),
            _ => return None,
        }
    }
}

/// [`KeptItems`]' reading of a value at `seed.depth`: an object's values are read keeping
/// their lists' items (`items_kept` then), a list's items are kept if `items_kept`; anything
/// else is [`Seed`]'s.
#[derive(Clone, Copy)]
struct Keeping<'z> {
    seed: Seed<'z>,
    items_kept: bool,
}

impl<'de> DeserializeSeed<'de> for Keeping<'_> {
    type Value = Value;
    fn deserialize<D: serde::Deserializer<'de>>(self, de: D) -> Result<Value, D::Error> {
        de.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Keeping<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E: serde::de::Error>(self) -> Result<Value, E> {
        self.seed.visit_unit()
    }
    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Value, E> {
        self.seed.visit_bool(v)
    }
    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Value, E> {
        self.seed.visit_i64(v)
    }
    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Value, E> {
        self.seed.visit_u64(v)
    }
    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Value, E> {
        self.seed.visit_f64(v)
    }
    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Value, E> {
        self.seed.visit_str(v)
    }
    fn visit_string<E: serde::de::Error>(self, v: String) -> Result<Value, E> {
        self.seed.visit_string(v)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        if !self.items_kept {
            return self.seed.visit_seq(seq);
        }
        if self.seed.depth > MAX_JSON_DEPTH {
            return Err(A::Error::custom("too deep"));
        }
        let depth = self.seed.depth + 1;
        let room = (MAX_JSON_DEPTH + 1).saturating_sub(depth);
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(raw) = seq.next_element::<&'de serde_json::value::RawValue>()? {
            let text = raw.get();
            items.push(match JsonText::accept(text, room) {
                Some(kept) => Value::Json(Arc::new(kept)),
                None => {
                    let mut de = serde_json::Deserializer::from_str(text);
                    Seed {
                        depth,
                        zeros: self.seed.zeros,
                    }
                    .deserialize(&mut de)
                    .map_err(A::Error::custom)?
                }
            });
        }
        Ok(Value::List(Arc::new(items)))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        if self.items_kept {
            return self.seed.visit_map(map);
        }
        if self.seed.depth > MAX_JSON_DEPTH {
            return Err(A::Error::custom("too deep"));
        }
        let inner = Keeping {
            seed: Seed {
                depth: self.seed.depth + 1,
                zeros: self.seed.zeros,
            },
            items_kept: true,
        };
        let mut out =
            Map::with_capacity_and_hasher(map.size_hint().unwrap_or(4), Default::default());
        while let Some(key) = map.next_key::<String>()? {
            let value = map.next_value_seed(inner)?;
            out.insert(key, value);
        }
        Ok(Value::Dict(Arc::new(out)))
    }
}

#[derive(Clone, Copy)]
struct Seed<'z> {
    depth: usize,
    zeros: &'z NegativeZeros,
}

impl<'de> DeserializeSeed<'de> for Seed<'_> {
    type Value = Value;
    fn deserialize<D: serde::Deserializer<'de>>(self, de: D) -> Result<Value, D::Error> {
        de.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Seed<'_> {
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
        if v == 0.0 && v.is_sign_negative() {
            Ok(self.zeros.value())
        } else if v.is_finite() {
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
            zeros: self.zeros,
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
            zeros: self.zeros,
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
