//! The plain reader: a record read in one validating pass with the engine's JSON scanner,
//! its event only skipped (its aggregator's typed reading checks it) or, when it ends the
//! line, taken unread.

use std::ops::Range;

use super::checks::lone_surrogate;
use super::skip::{more_open_brackets, repeats, skip_value};
use super::{record, Record, Spec, Take};
use crate::engine::batch::path::Path;
use crate::engine::events::MAX_JSON_DEPTH;
use crate::engine::json_text;

/// The record of a plain line, read in one validating pass with the engine's JSON scanner
/// ([`json_text::scan`]) instead of serde (twice the work per record: most of a small record's
/// cost). None for anything else — a line that is not UTF-8 or not an object, a key with an
/// escape, a path through an array, text the scanner leaves to the generic reader (a
/// surrogate escape, a long number, deep nesting) — which [`read`] reads the thorough way,
/// with the same result.
pub(super) fn read_plain(line: &[u8], spec: &Spec, take: Take) -> Option<Result<Record, String>> {
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
