//! One JSON line of a log: its stream key, the event to fold, and its order-by value, read by
//! borrowing from the line (no tree is built; the event's own text goes to its aggregator).

use std::cmp::Ordering;
use std::ops::Range;

use serde_json::value::RawValue;

use super::path::{lookup, members, Path};
use crate::engine::events::{MAX_JSON_DEPTH, NOT_JSON};
use crate::engine::json_text;
use crate::engine::value::py_float;

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

/// A JSON value's kind, told by its first byte.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Null,
    Boolean,
    String,
    Array,
    Object,
    Number,
}

impl Kind {
    /// The kind of a raw value (its text).
    fn of(raw: &str) -> Kind {
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
    fn name(self) -> &'static str {
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
    fn a_name(self) -> &'static str {
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
fn key_text(raw: &str, path: &Path, line: &str) -> Result<Key, String> {
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

fn order_key(raw: &str, path: &Path) -> Result<OrderKey, String> {
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

/// The key of `line` as [`read`] reads it, found by a light scan that checks only the
/// structure of the objects it walks (strings and brackets): so that every worker can tell
/// which lines are its own, and each bucket of `fastmerge.dask` its records. None where the
/// scan cannot be sure (a member name or the key with an escape, a key that is not a string,
/// a path through an array, a name of the path that is not plain ASCII, a later member that
/// could repeat a name of the path), and then [`read`] decides. On a line that [`read`] calls
/// bad, whatever it finds (the line is one worker's, one bucket's, all the same), but always
/// the same: the twin's `Quick` is this scan, step for step, and `split_file` gives each line
/// the bucket of what it finds.
pub fn route_key<'a>(line: &'a [u8], spec: &Spec) -> Option<&'a [u8]> {
    let mut at = json_text::skip_space(line, 0);
    let last = spec.key.segments.len().checked_sub(1)?;
    for (depth, name) in spec.key.segments.iter().enumerate() {
        let quoted = spec.quoted.get(depth)?.as_ref()?;
        let (value, end) = last_named(line, at, name.as_bytes(), quoted, &spec.escape)?;
        match line[value] {
            b'"' if depth == last => {
                let key = &line[value + 1..end - 1];
                return (!key.contains(&b'\\')).then_some(key);
            }
            b'{' if depth < last => at = value,
            _ => return None,
        }
    }
    None
}

/// Where the value of the last member `name` (`quoted`: `"name"`) of the object at `at` (its
/// `{`) starts and ends; None when the object has none, is not one, or a name has an escape.
/// The scan stops at a member of that name after which no other can follow ([`repeats`]).
fn last_named(
    line: &[u8],
    at: usize,
    name: &[u8],
    quoted: &memchr::memmem::Finder,
    escape: &memchr::memmem::Finder,
) -> Option<(usize, usize)> {
    if line.get(at) != Some(&b'{') {
        return None;
    }
    let (mut pos, _) = json_text::past_space(line, at + 1)?;
    let mut found = None;
    loop {
        if line.get(pos) != Some(&b'"') {
            return None;
        }
        // a name read plainly: its text up to the next quote, unless a backslash comes first
        let close = pos + 1 + memchr::memchr2(b'"', b'\\', &line[pos + 1..])?;
        if line[close] != b'"' {
            return None;
        }
        let member = &line[pos + 1..close];
        let (colon, c) = json_text::past_space(line, close + 1)?;
        if c != b':' {
            return None;
        }
        let (value, _) = json_text::past_space(line, colon + 1)?;
        let after = skip_any(line, value)?;
        if member == name {
            found = Some((value, after));
            if !repeats(&line[after..], quoted, escape) {
                return found;
            }
        }
        match json_text::past_space(line, after)? {
            (at, b',') => (pos, _) = json_text::past_space(line, at + 1)?,
            (_, b'}') => return found,
            _ => return None,
        }
    }
}

/// The end of the value at `pos`, by its structure only: a string to its closing quote
/// (escapes passed over), an object or array by its brackets ([`skip_value`]), anything else
/// to the next `,`, `}`, `]` or blank (at least one byte). None at the end of `b`.
fn skip_any(b: &[u8], pos: usize) -> Option<usize> {
    match *b.get(pos)? {
        b'"' => {
            let mut at = pos + 1;
            loop {
                at += memchr::memchr2(b'"', b'\\', b.get(at..)?)?;
                if b[at] == b'"' {
                    return Some(at + 1);
                }
                at += 2;
            }
        }
        b'{' | b'[' => skip_value(b, pos, MAX_JSON_DEPTH),
        _ => {
            let run = b[pos..]
                .iter()
                .position(|c| matches!(c, b',' | b'}' | b']' | b' ' | b'\t' | b'\r' | b'\n'))
                .unwrap_or(b.len() - pos);
            (run > 0).then_some(pos + run)
        }
    }
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

/// The record of a plain line, read in one validating pass with the engine's JSON scanner
/// ([`json_text::scan`]) instead of serde (twice the work per record: most of a small record's
/// cost). None for anything else — a line that is not UTF-8 or not an object, a key with an
/// escape, a path through an array, text the scanner leaves to the generic reader (a
/// surrogate escape, a long number, deep nesting) — which [`read`] reads the thorough way,
/// with the same result.
fn read_plain(line: &[u8], spec: &Spec, take: Take) -> Option<Result<Record, String>> {
    let text = simdutf8::basic::from_utf8(line).ok()?;
    let start = json_text::skip_space(line, 0);
    if line.get(start) != Some(&b'{') {
        return None;
    }
    fn first(path: &Option<Path>) -> Option<&str> {
        path.as_ref().map(|p| p.segments[0].as_str())
    }
    let keys = [
        Some(spec.key.segments[0].as_str()),
        first(&spec.event),
        first(&spec.order),
    ];
    // the event of a plain record (at a top-level key, no order_by) is only skipped here: its
    // aggregator's typed reading checks it as it reads it, and reading it twice was most of
    // a small record's cost
    let lazy = spec.order.is_none() && spec.event.as_ref().is_some_and(|p| p.segments.len() == 1);
    // the record is one level: its values may nest one less than the events parser allows
    let unread = match (spec.quoted.first().and_then(Option::as_ref), take) {
        (Some(key), Take::Guarded) if lazy => Some(Some((key, &spec.escape))),
        (Some(_), Take::Routed) if lazy => Some(None),
        _ => None,
    };
    let (found, end, taken) = object_members(
        line,
        start,
        keys,
        lazy.then_some(1),
        MAX_JSON_DEPTH - 1,
        unread,
    )?;
    if json_text::skip_space(line, end) != line.len() {
        return None;
    }
    let value = |range: Option<Range<usize>>, path: &Path| -> Option<Option<&str>> {
        let Some(mut range) = range else {
            return Some(None);
        };
        for segment in &path.segments[1..] {
            if line[range.start] != b'{' {
                return None; // an array's element or a scalar: the thorough way
            }
            let keys = [Some(segment.as_str())];
            let ([member], _, _) = object_members(line, range.start, keys, None, 127, None)?;
            match member {
                Some(inner) => range = inner,
                None => return Some(None),
            }
        }
        Some(Some(&text[range]))
    };
    let [key, event, order] = found;
    let unchecked = match &event {
        Some(range) if lazy && line[range.start] == b'{' => Some(range.clone()),
        _ => None,
    };
    let key = value(key, &spec.key)?;
    let event = match &spec.event {
        Some(path) => value(event, path)?,
        None => None,
    };
    let order = match &spec.order {
        Some(path) => value(order, path)?,
        None => None,
    };
    match record(text, spec, key, event, order) {
        Ok(record) if unchecked.is_some() => Some(Ok(Record {
            checked: false,
            unread: taken,
            ..record
        })),
        // a line whose event is not JSON is not JSON, whatever else is wrong with it: the
        // thorough reader says so
        Err(_) if unchecked.is_some_and(|range| !event_is_json(&line[range])) => None,
        result => Some(result),
    }
}

/// Whether an event's text that [`read_plain`] only skipped is JSON as the thorough reader
/// reads a line: the scanner's quick yes, else serde's answer with no lone surrogate escape
/// (its nesting was checked as it was skipped).
pub fn event_is_json(text: &[u8]) -> bool {
    json_text::scan(text, 0, MAX_JSON_DEPTH - 1) == Some(text.len())
        || (!lone_surrogate(text) && serde_json::from_slice::<serde::de::IgnoredAny>(text).is_ok())
}

/// The searchers of [`last_member`]: the key's quoted name and the escape that could spell it.
type Guard<'s> = (
    &'s memchr::memmem::Finder<'static>,
    &'s memchr::memmem::Finder<'static>,
);

/// Where the object at `value` ends, and where the line's object then closes, when it is the
/// line's last member, found from the line's end without reading it (skipping it was most of
/// a small record's cost): the line ends with two closing braces. Its text is JSON only if it
/// is that member; whoever reads it finds out, and a line whose event so taken is not JSON is
/// read again ([`read_whole`]): it may hold more members after the event. The key found
/// before it stays the line's key only if no later member can repeat it: with a `guard`, the
/// text must not quote the key's name nor hold a `\u00` escape ([`repeats`]; without one,
/// the caller made sure of it for the whole line). None also where the text could nest
/// deeper than `room` (more brackets than that).
fn last_member(
    b: &[u8],
    value: usize,
    room: usize,
    guard: Option<Guard>,
) -> Option<(usize, usize)> {
    let blank = |c: &u8| matches!(c, b' ' | b'\t' | b'\r' | b'\n');
    let close = b.iter().rposition(|c| !blank(c))?;
    let end = b[..close].iter().rposition(|c| !blank(c))? + 1;
    if b[close] != b'}' || b[end - 1] != b'}' || end <= value {
        return None;
    }
    let text = &b[value..end];
    // a shorter text nests that deep only if it is not JSON, which its reader finds out
    let deep = text.len() > 2 * room && more_open_brackets(text, room);
    let again = guard.is_some_and(|(key, escape)| repeats(text, key, escape));
    (!deep && !again).then_some((end, close))
}

/// Whether `text` could hold a member named as the key (`key`: its quoted name, which a line
/// spells otherwise only with an `escape`, looked for only where there is a backslash).
fn repeats(text: &[u8], key: &memchr::memmem::Finder, escape: &memchr::memmem::Finder) -> bool {
    key.find(text).is_some()
        || (memchr::memchr(b'\\', text).is_some() && escape.find(text).is_some())
}

/// Whether `text` holds more than `most` of `{` and `[`: found by memchr's vector search,
/// which stops at the one past `most` (an event holds a few: counting every byte of it was a
/// tenth of a long record's cost).
fn more_open_brackets(text: &[u8], most: usize) -> bool {
    memchr::memchr2_iter(b'{', b'[', text).nth(most).is_some()
}

/// What [`skip_value`] stops at outside strings: a quote (1), an opening (2) or a closing
/// (3) bracket; 0 for any other byte, passed in a tight loop.
static SKIP_CLASS: [u8; 256] = {
    let mut class = [0u8; 256];
    class[b'"' as usize] = 1;
    class[b'{' as usize] = 2;
    class[b'[' as usize] = 2;
    class[b'}' as usize] = 3;
    class[b']' as usize] = 3;
    class
};

/// The end of the object or array at `pos` (its bracket), found by its brackets and strings
/// only: a text that is JSON ends there; any other is found out by whoever reads it. None
/// past `room` levels or at the end of `b`.
fn skip_value(b: &[u8], mut pos: usize, room: usize) -> Option<usize> {
    let mut depth = 0usize;
    loop {
        let mut class = SKIP_CLASS[*b.get(pos)? as usize];
        while class == 0 {
            pos += 1;
            class = SKIP_CLASS[*b.get(pos)? as usize];
        }
        match class {
            1 => loop {
                pos = json_text::plain_run(b, pos + 1)?;
                match b[pos] {
                    b'"' => break,
                    b'\\' => pos += 1,
                    _ => {}
                }
            },
            2 => {
                depth += 1;
                if depth > room {
                    return None;
                }
            }
            _ => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(pos + 1);
                }
            }
        }
        pos += 1;
    }
}

/// What [`object_members`] finds: the ranges of the named members' values, where the object
/// ends, and whether the last of them was taken unread ([`last_member`]).
type Members<const N: usize> = ([Option<Range<usize>>; N], usize, bool);

/// The object at `pos` of `b` (its `{`), read and checked: the ranges of the values of the
/// members named by `keys` (the last of duplicates, as Python's json keeps), and where the
/// object ends; values may nest `room` levels. The value of key number `lazy`, when an
/// object, is skipped unchecked ([`skip_value`]), or with `unread` (after the key, number 0)
/// taken unread when it ends the line ([`last_member`]). None for invalid JSON, a key with
/// an escape or anything [`json_text::scan`] leaves to the generic reader.
fn object_members<const N: usize>(
    b: &[u8],
    pos: usize,
    keys: [Option<&str>; N],
    lazy: Option<usize>,
    room: usize,
    unread: Option<Option<Guard>>,
) -> Option<Members<N>> {
    let mut found: [Option<Range<usize>>; N] = std::array::from_fn(|_| None);
    let (mut pos, mut next) = json_text::past_space(b, pos + 1)?;
    if next == b'}' {
        return Some((found, pos + 1, false));
    }
    loop {
        if next != b'"' {
            return None;
        }
        let key_end = json_text::scan_string(b, pos)?;
        let key = &b[pos + 1..key_end - 1];
        if key.contains(&b'\\') {
            return None;
        }
        let (colon, c) = json_text::past_space(b, key_end)?;
        if c != b':' {
            return None;
        }
        let (value, head) = json_text::past_space(b, colon + 1)?;
        let named = |i: usize| keys[i].is_some_and(|name| name.as_bytes() == key);
        let end = match lazy {
            // a repeated key: the value skipped first would go unread (the thorough way)
            Some(i) if named(i) && found[i].is_some() => return None,
            Some(i) if head == b'{' && named(i) => {
                // the key found first (and not the event's own name), the event may be the
                // line's last member
                let taken = unread
                    .filter(|_| found[0].is_some() && !named(0))
                    .and_then(|guard| last_member(b, value, room, guard));
                if let Some((end, close)) = taken {
                    found[i] = Some(value..end);
                    return Some((found, close + 1, true));
                }
                skip_value(b, value, room)?
            }
            _ => json_text::scan(b, value, room)?,
        };
        for (i, slot) in found.iter_mut().enumerate() {
            if named(i) {
                *slot = Some(value..end);
            }
        }
        let (at, c) = json_text::past_space(b, end)?;
        match c {
            b',' => (pos, next) = json_text::past_space(b, at + 1)?,
            b'}' => return Some((found, at + 1, false)),
            _ => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn more_open_brackets_is_the_plain_count_against_the_bound() {
        // every byte value, at every offset, and runs of brackets about the bound
        let all: Vec<u8> = (0..=255u8).chain(b"{[{[}]".iter().copied()).collect();
        let plain = |t: &[u8]| t.iter().filter(|&&c| c == b'{' || c == b'[').count();
        for start in 0..40 {
            let text = &all[start..];
            for most in 0..6 {
                assert_eq!(
                    more_open_brackets(text, most),
                    plain(text) > most,
                    "{start} {most}"
                );
            }
        }
        let mut deep = vec![b' '; 300];
        for (i, at) in (0..300).step_by(3).enumerate() {
            deep[at] = if i % 2 == 0 { b'{' } else { b'[' };
        }
        let count = plain(&deep);
        assert_eq!(count, 100);
        assert!(more_open_brackets(&deep, 99));
        assert!(!more_open_brackets(&deep, 100));
        assert!(!more_open_brackets(b"", 0));
    }
}
