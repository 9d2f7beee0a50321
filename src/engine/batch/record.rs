//! One JSON line of a log: its stream key, the event to fold, and its order-by value, read by
//! borrowing from the line (no tree is built; the event's own text goes to its aggregator).
//!
//! This file holds the record's shape and its thorough reader (serde); the parts are in
//! `record/`: `values` (the key, the order-by value, the event's kind), `checks` (what serde
//! would let pass), `skip` (passing over a value by its structure), `route` (the light key
//! scan) and `plain` (the one-pass reader most lines take).

use std::cmp::Ordering;
use std::ops::Range;

use serde_json::value::RawValue;

use super::path::{lookup, members, Path};
use crate::engine::events::NOT_JSON;

mod checks;
mod plain;
mod route;
mod skip;
mod values;
use checks::{lone_surrogate, too_deep};
pub use plain::event_is_json;
use plain::read_plain;
pub use route::route_key;
use values::{is_done, key_text, order_key, Kind};

/// Where the record's values are.
#[derive(Clone, Debug)]
pub struct Spec {
    pub key: Path,
    /// None: the record is the event.
    pub event: Option<Path>,
    pub order: Option<Path>,
    /// Each name of the key's path as it is written in a line (quoted), where it is a plain
    /// ASCII name, which a line can spell otherwise only with a `\u00` escape: so a text can
    /// be known to hold no member of that name ([`repeats`]). The first one lets an event
    /// that ends the line be taken unread ([`last_member`]), all of them [`route_key`] find
    /// the key.
    quoted: Vec<Option<memchr::memmem::Finder<'static>>>,
    /// `\u00`, the escape that could spell it
    escape: memchr::memmem::Finder<'static>,
}

impl Spec {
    pub fn new(key: Path, event: Option<Path>, order: Option<Path>) -> Spec {
        let plain = |name: &String| {
            !name.is_empty()
                && name
                    .bytes()
                    .all(|c| (0x20..0x7f).contains(&c) && !matches!(c, b'"' | b'\\' | b'/'))
        };
        let quoted = key
            .segments
            .iter()
            .map(|name| {
                plain(name)
                    .then(|| memchr::memmem::Finder::new(&format!("\"{name}\"")).into_owned())
            })
            .collect();
        Spec {
            key,
            event,
            order,
            quoted,
            escape: memchr::memmem::Finder::new(b"\\u00").into_owned(),
        }
    }
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

    /// The key's text as bytes (no UTF-8 check: the hot path's lookups hash bytes).
    pub fn bytes<'a>(&'a self, line: &'a [u8]) -> &'a [u8] {
        match self {
            Key::Text(range) => &line[range.clone()],
            Key::Owned(text) => text.as_bytes(),
        }
    }
}

impl Feed {
    /// The event's text as the stream is given it (`line`: the record's line; none for
    /// `[DONE]` or an event that is not an object).
    pub fn text<'a>(&'a self, line: &'a [u8]) -> &'a [u8] {
        match self {
            Feed::Text(range) => &line[range.clone()],
            Feed::Owned(text) => text.as_bytes(),
            Feed::Done | Feed::NotObject(_) => b"",
        }
    }
}

/// A record of a stream.
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    pub key: Key,
    pub feed: Feed,
    pub order: Option<OrderKey>,
    /// whether the event's text (a [`Feed::Text`]) is known to be JSON; when not, the line
    /// is a bad line unless [`event_is_json`] (or the aggregator's typed reading) says it is
    pub checked: bool,
    /// whether the event was taken as the line's last member without being read
    /// (`last_member`): when its text is not JSON, the line is read again by [`read_whole`]
    /// (it may have had more members after the event), not called bad
    pub unread: bool,
}

/// The record of `line` (not blank), or the reason it is a bad line.
pub fn read(line: &[u8], spec: &Spec) -> Result<Record, String> {
    read_line(line, spec, Take::Guarded)
}

/// [`read`] of a line whose key [`route_key`] found: no later member repeats it, so an event
/// that ends the line is taken without looking for one.
pub fn read_routed(line: &[u8], spec: &Spec) -> Result<Record, String> {
    read_line(line, spec, Take::Routed)
}

/// [`read`] without taking an event unread ([`Record::unread`]): the record of a line whose
/// event, so taken, was not JSON.
pub fn read_whole(line: &[u8], spec: &Spec) -> Result<Record, String> {
    read_line(line, spec, Take::Never)
}

/// Whether [`read_plain`] may take an event that ends the line unread ([`last_member`]), and
/// whether it must first make sure that no later member repeats the key.
#[derive(Clone, Copy, PartialEq)]
enum Take {
    Never,
    Guarded,
    Routed,
}

fn read_line(line: &[u8], spec: &Spec, take: Take) -> Result<Record, String> {
    if let Some(record) = read_plain(line, spec, take) {
        return record;
    }
    let text = std::str::from_utf8(line).map_err(|_| NOT_JSON.to_owned())?;
    if too_deep(line) || lone_surrogate(line) {
        return Err(NOT_JSON.to_owned());
    }
    let head = text.trim_start().as_bytes().first().copied();
    if head != Some(b'{') {
        let raw: &RawValue = serde_json::from_str(text).map_err(|_| NOT_JSON.to_owned())?;
        return Err(format!(
            "a record must be a JSON object, not {}",
            Kind::of(raw.get()).name()
        ));
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
    fn nested<'a>(raw: Option<&'a RawValue>, path: Option<&Path>) -> Option<&'a str> {
        let path = path?;
        raw.and_then(|r| lookup(r, &path.segments[1..]))
            .map(RawValue::get)
    }
    let key = nested(key, Some(&spec.key));
    let event = nested(event, spec.event.as_ref());
    record(text, spec, key, event, nested(order, spec.order.as_ref()))
}

/// The record of a line from the texts of its values (each a slice of `line`, the record's
/// text), as both readers found them.
fn record(
    line: &str,
    spec: &Spec,
    key: Option<&str>,
    event: Option<&str>,
    order: Option<&str>,
) -> Result<Record, String> {
    let key = match key {
        Some(raw) => key_text(raw, &spec.key, line)?,
        None => return Err(format!("no stream key at {}", spec.key.text)),
    };
    let feed = match &spec.event {
        None => Feed::Text(0..line.len()),
        Some(path) => match event {
            Some(raw) => match Kind::of(raw) {
                Kind::Null => return Err(format!("no event at {}", path.text)),
                Kind::String => {
                    let event: String =
                        serde_json::from_str(raw).map_err(|_| NOT_JSON.to_owned())?;
                    if is_done(&event) {
                        Feed::Done
                    } else {
                        Feed::Owned(event)
                    }
                }
                Kind::Object => {
                    let start = raw.as_ptr() as usize - line.as_ptr() as usize;
                    Feed::Text(start..start + raw.len())
                }
                other => Feed::NotObject(other.name()),
            },
            None => return Err(format!("no event at {}", path.text)),
        },
    };
    let order = match &spec.order {
        None => None,
        Some(path) => match order {
            Some(raw) => Some(order_key(raw, path)?),
            None => return Err(format!("no order_by value at {}", path.text)),
        },
    };
    Ok(Record {
        key,
        feed,
        order,
        checked: true,
        unread: false,
    })
}
