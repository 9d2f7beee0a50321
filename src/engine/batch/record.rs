//! One JSON line of a log: its stream key, the event to fold, and its order-by value, read by
//! borrowing from the line (no tree is built; the event's own text goes to its aggregator).

use std::cmp::Ordering;
use std::ops::Range;

use serde_json::value::RawValue;

use super::path::{lookup, members, Path};
use crate::engine::events::{MAX_JSON_DEPTH, NOT_JSON};
use crate::engine::value::py_float;

/// Where the record's values are.
#[derive(Clone, Debug)]
pub struct Spec {
    pub key: Path,
    /// None: the record is the event.
    pub event: Option<Path>,
    pub order: Option<Path>,
}

/// What a stream's aggregator is given for a record.
#[derive(Clone, Debug, PartialEq)]
pub enum Feed {
    /// The JSON text at these bytes of the line.
    Text(Range<usize>),
    /// A string event, unescaped (a logged SSE `data:` payload).
    Owned(String),
    /// The `[DONE]` sentinel: not an event, the end of the stream.
    Done,
    /// A number, boolean or array: given to the aggregator as an event that is not an
    /// object (an `unreadable_event`, as `Aggregator.add` makes of it); its JSON kind.
    NotObject(&'static str),
}

/// A sequence number or timestamp.
#[derive(Clone, Debug, PartialEq)]
pub enum OrderKey {
    Int(i64),
    Float(f64),
    Str(String),
}

impl OrderKey {
    pub fn is_str(&self) -> bool {
        matches!(self, OrderKey::Str(_))
    }

    /// Numbers numerically (an int and a float exactly, as Python compares them), strings by
    /// code point (the caller never compares the two kinds).
    pub fn order(&self, other: &OrderKey) -> Ordering {
        match (self, other) {
            (OrderKey::Int(a), OrderKey::Int(b)) => a.cmp(b),
            (OrderKey::Float(a), OrderKey::Float(b)) => a.partial_cmp(b).unwrap_or(Ordering::Equal),
            (OrderKey::Int(a), OrderKey::Float(b)) => int_float(*a, *b),
            (OrderKey::Float(a), OrderKey::Int(b)) => int_float(*b, *a).reverse(),
            (OrderKey::Str(a), OrderKey::Str(b)) => a.cmp(b),
            (OrderKey::Str(_), _) => Ordering::Greater,
            (_, OrderKey::Str(_)) => Ordering::Less,
        }
    }
}

/// An int against a float, exactly (the float rounded from the int may equal it).
fn int_float(int: i64, float: f64) -> Ordering {
    match (int as f64).partial_cmp(&float).unwrap_or(Ordering::Equal) {
        Ordering::Equal => i128::from(int).cmp(&(float as i128)),
        other => other,
    }
}

/// A stream key's text: where it is in the line (a string without escapes: not copied), or
/// made (an unescaped string, a number's text).
#[derive(Clone, Debug, PartialEq)]
pub enum Key {
    Text(Range<usize>),
    Owned(String),
}

impl Key {
    /// The key's text; `line` is the record's line.
    pub fn text<'a>(&'a self, line: &'a [u8]) -> &'a str {
        match self {
            // the line is UTF-8 (checked when it was read) and the range is a whole string's
            Key::Text(range) => std::str::from_utf8(&line[range.clone()]).unwrap_or(""),
            Key::Owned(text) => text,
        }
    }
}

/// A record of a stream.
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    pub key: Key,
    pub feed: Feed,
    pub order: Option<OrderKey>,
}

/// A raw value's JSON kind with its article, for reasons ("an array").
fn a_kind(raw: &RawValue) -> &'static str {
    match kind(raw) {
        "null" => "a null",
        "boolean" => "a boolean",
        "string" => "a string",
        "array" => "an array",
        "object" => "an object",
        _ => "a number",
    }
}

/// The JSON name of the kind of a raw value.
fn kind(raw: &RawValue) -> &'static str {
    match raw.get().trim_start().as_bytes().first() {
        Some(b'n') => "null",
        Some(b't' | b'f') => "boolean",
        Some(b'"') => "string",
        Some(b'[') => "array",
        Some(b'{') => "object",
        _ => "number",
    }
}

fn is_integer(text: &str) -> bool {
    !text.bytes().any(|b| matches!(b, b'.' | b'e' | b'E'))
}

/// A key's text: a string as is, a number as Python's `str()` of it as the events parser
/// reads it (an integer beyond 64 bits is a float, as in every event). A number beyond a
/// float's range is no key (never `inf`).
fn key_text(raw: &RawValue, path: &Path, line: &str) -> Result<Key, String> {
    let text = raw.get().trim();
    match kind(raw) {
        "string" if !text.contains('\\') => {
            let start = text.as_ptr() as usize - line.as_ptr() as usize;
            Ok(Key::Text(start + 1..start + text.len() - 1))
        }
        "string" => serde_json::from_str::<String>(text)
            .map(Key::Owned)
            .map_err(|_| NOT_JSON.to_owned()),
        "number" => match number(text)? {
            OrderKey::Int(i) => Ok(Key::Owned(i.to_string())),
            OrderKey::Float(f) if f.is_finite() => Ok(Key::Owned(py_float(f))),
            _ => Err(format!(
                "the stream key at {} is a number too large for a float",
                path.text
            )),
        },
        "null" => Err(format!("no stream key at {}", path.text)),
        _ => Err(format!(
            "the stream key at {} is {}, not a string or a number",
            path.text,
            a_kind(raw)
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

fn order_key(raw: &RawValue, path: &Path) -> Result<OrderKey, String> {
    let text = raw.get().trim();
    match kind(raw) {
        "string" => serde_json::from_str::<String>(text)
            .map(OrderKey::Str)
            .map_err(|_| NOT_JSON.to_owned()),
        "number" => match number(text)? {
            OrderKey::Float(f) if f.is_infinite() => Err(format!(
                "the order_by value at {} is a number too large for a float",
                path.text
            )),
            order => Ok(order),
        },
        "null" => Err(format!("no order_by value at {}", path.text)),
        _ => Err(format!(
            "the order_by value at {} is {}, not a number or a string",
            path.text,
            a_kind(raw)
        )),
    }
}

/// Whether a string event is the `[DONE]` sentinel (blanks around it allowed: space, tab,
/// CR, LF).
fn is_done(text: &str) -> bool {
    text.trim_matches([' ', '\t', '\r', '\n']) == "[DONE]"
}

/// Whether a line nests deeper than [`MAX_JSON_DEPTH`] (the events parser's limit, which the
/// twin applies to a whole record). Counting brackets first keeps the exact scan off the
/// common line.
fn too_deep(line: &[u8]) -> bool {
    if memchr::memchr2_iter(b'{', b'[', line).count() <= MAX_JSON_DEPTH {
        return false;
    }
    let (mut depth, mut in_str, mut esc) = (0usize, false, false);
    for &c in line {
        if in_str {
            match c {
                _ if esc => esc = false,
                b'\\' => esc = true,
                b'"' => in_str = false,
                _ => {}
            }
            continue;
        }
        match c {
            b'"' => in_str = true,
            b'{' | b'[' => {
                depth += 1;
                if depth > MAX_JSON_DEPTH {
                    return true;
                }
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

/// Whether a line holds a `\\u` escape of a lone surrogate (not JSON text to the events
/// parser, as to the twin's; serde_json checks it only in the strings it decodes). Looked for
/// only when the line has a surrogate escape at all.
fn lone_surrogate(line: &[u8]) -> bool {
    let maybe = memchr::memmem::find_iter(line, b"\\u").any(|at| {
        matches!(line.get(at + 2), Some(b'd' | b'D'))
            && matches!(
                line.get(at + 3),
                Some(b'8'..=b'9' | b'a'..=b'f' | b'A'..=b'F')
            )
    });
    if !maybe {
        return false;
    }
    let hex = |at: usize| -> Option<u32> {
        let digits = std::str::from_utf8(line.get(at..at + 4)?).ok()?;
        u32::from_str_radix(digits, 16).ok()
    };
    let (mut i, mut in_str) = (0, false);
    while i < line.len() {
        match line[i] {
            b'"' => in_str = !in_str,
            b'\\' if in_str => {
                if line.get(i + 1) == Some(&b'u') {
                    match hex(i + 2) {
                        Some(0xD800..=0xDBFF) => {
                            let low = line.get(i + 6..i + 8) == Some(b"\\u".as_slice());
                            if !(low && matches!(hex(i + 8), Some(0xDC00..=0xDFFF))) {
                                return true;
                            }
                            i += 12;
                            continue;
                        }
                        Some(0xDC00..=0xDFFF) => return true,
                        _ => {}
                    }
                }
                i += 2;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    false
}

/// The record of `line` (not blank), or the reason it is a bad line.
pub fn read(line: &[u8], spec: &Spec) -> Result<Record, String> {
    let text = std::str::from_utf8(line).map_err(|_| NOT_JSON.to_owned())?;
    if too_deep(line) || lone_surrogate(line) {
        return Err(NOT_JSON.to_owned());
    }
    let head = text.trim_start().as_bytes().first().copied();
    if head != Some(b'{') {
        let raw: &RawValue = serde_json::from_str(text).map_err(|_| NOT_JSON.to_owned())?;
        return Err(format!("a record must be a JSON object, not {}", kind(raw)));
    }
    fn first(path: &Option<Path>) -> Option<&str> {
        path.as_ref().map(|p| p.segments[0].as_str())
    }
    let [key, event, order] = members(
        text,
        [
            Some(spec.key.segments[0].as_str()),
            first(&spec.event),
            first(&spec.order),
        ],
    )
    .map_err(|_| NOT_JSON.to_owned())?;
    fn nested<'a>(raw: Option<&'a RawValue>, path: &Path) -> Option<&'a RawValue> {
        raw.and_then(|r| lookup(r, &path.segments[1..]))
    }
    let key = match nested(key, &spec.key) {
        Some(raw) => key_text(raw, &spec.key, text)?,
        None => return Err(format!("no stream key at {}", spec.key.text)),
    };
    let feed = match &spec.event {
        None => Feed::Text(0..line.len()),
        Some(path) => match nested(event, path) {
            Some(raw) => match kind(raw) {
                "null" => return Err(format!("no event at {}", path.text)),
                "string" => {
                    let event: String =
                        serde_json::from_str(raw.get()).map_err(|_| NOT_JSON.to_owned())?;
                    if is_done(&event) {
                        Feed::Done
                    } else {
                        Feed::Owned(event)
                    }
                }
                "object" => {
                    let start = raw.get().as_ptr() as usize - text.as_ptr() as usize;
                    Feed::Text(start..start + raw.get().len())
                }
                other => Feed::NotObject(other),
            },
            None => return Err(format!("no event at {}", path.text)),
        },
    };
    let order = match &spec.order {
        None => None,
        Some(path) => match nested(order, path) {
            Some(raw) => Some(order_key(raw, path)?),
            None => return Err(format!("no order_by value at {}", path.text)),
        },
    };
    Ok(Record { key, feed, order })
}
