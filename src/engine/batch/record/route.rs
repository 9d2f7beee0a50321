//! The light scan of a line for its stream key, which tells every worker (and every bucket of
//! `fastmerge.dask`) which lines are its own without reading them.

use super::skip::{repeats, skip_any};
use super::Spec;
use crate::engine::json_text;

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
