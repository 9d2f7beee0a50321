//! A record's values as the stream key, the order-by value and the event's kind: a JSON value
//! told by its first byte, read as the events parser reads it.

use super::{Key, OrderKey};
use crate::engine::batch::path::Path;
use crate::engine::events::NOT_JSON;
use crate::engine::value::py_float;

/// A JSON value's kind, told by its first byte.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Kind {
    Null,
    Boolean,
    String,
    Array,
    Object,
    Number,
}

impl Kind {
    /// The kind of a raw value (its text).
    pub(super) fn of(raw: &str) -> Kind {
        match raw.trim_ascii_start().as_bytes().first() {
            Some(b'n') => Kind::Null,
            Some(b't' | b'f') => Kind::Boolean,
            Some(b'"') => Kind::String,
            Some(b'[') => Kind::Array,
            Some(b'{') => Kind::Object,
            _ => Kind::Number,
        }
    }

    /// Its JSON name.
    pub(super) fn name(self) -> &'static str {
        match self {
            Kind::Null => "null",
            Kind::Boolean => "boolean",
            Kind::String => "string",
            Kind::Array => "array",
            Kind::Object => "object",
            Kind::Number => "number",
        }
    }

    /// Its name with its article, for reasons ("an array").
    pub(super) fn a_name(self) -> &'static str {
        match self {
            Kind::Null => "a null",
            Kind::Boolean => "a boolean",
            Kind::String => "a string",
            Kind::Array => "an array",
            Kind::Object => "an object",
            Kind::Number => "a number",
        }
    }
}

fn is_integer(text: &str) -> bool {
    !text.bytes().any(|b| matches!(b, b'.' | b'e' | b'E'))
}

/// A key's text: a string as is, a number as Python's `str()` of it as the events parser
/// reads it (an integer beyond 64 bits is a float, as in every event). A number beyond a
/// float's range is no key (never `inf`).
pub(super) fn key_text(raw: &str, path: &Path, line: &str) -> Result<Key, String> {
    let text = raw.trim_ascii();
    match Kind::of(raw) {
        Kind::String if !text.contains('\\') => {
            let start = text.as_ptr() as usize - line.as_ptr() as usize;
            Ok(Key::Text(start + 1..start + text.len() - 1))
        }
        Kind::String => serde_json::from_str::<String>(text)
            .map(Key::Owned)
            .map_err(|_| NOT_JSON.to_owned()),
        Kind::Number => match number(text)? {
            OrderKey::Int(i) => Ok(Key::Owned(i.to_string())),
            OrderKey::Float(f) if f.is_finite() => Ok(Key::Owned(py_float(f))),
            _ => Err(format!(
                "the stream key at {} is a number too large for a float",
                path.text
            )),
        },
        Kind::Null => Err(format!("no stream key at {}", path.text)),
        kind => Err(format!(
            "the stream key at {} is {}, not a string or a number",
            path.text,
            kind.a_name()
        )),
    }
}

/// A JSON number: an int when it is an integer within 64 bits, else a float.
fn number(text: &str) -> Result<OrderKey, String> {
    if is_integer(text) {
        if let Ok(i) = text.parse::<i64>() {
            return Ok(OrderKey::Int(i));
        }
    }
    text.parse::<f64>()
        .map(OrderKey::Float)
        .map_err(|_| NOT_JSON.to_owned())
}

pub(super) fn order_key(raw: &str, path: &Path) -> Result<OrderKey, String> {
    let text = raw.trim_ascii();
    match Kind::of(raw) {
        Kind::String => serde_json::from_str::<String>(text)
            .map(OrderKey::Str)
            .map_err(|_| NOT_JSON.to_owned()),
        Kind::Number => match number(text)? {
            OrderKey::Float(f) if f.is_infinite() => Err(format!(
                "the order_by value at {} is a number too large for a float",
                path.text
            )),
            order => Ok(order),
        },
        Kind::Null => Err(format!("no order_by value at {}", path.text)),
        kind => Err(format!(
            "the order_by value at {} is {}, not a number or a string",
            path.text,
            kind.a_name()
        )),
    }
}

/// Whether a string event is the `[DONE]` sentinel (blanks around it allowed: space, tab,
/// CR, LF).
pub(super) fn is_done(text: &str) -> bool {
    text.trim_matches([' ', '\t', '\r', '\n']) == "[DONE]"
}
