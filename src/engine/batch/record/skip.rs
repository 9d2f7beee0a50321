//! Passing over a value by its structure only (strings and brackets), without checking it:
//! what the light key scan and the plain reader skip; and whether a text could repeat the
//! stream key's member.

use crate::engine::events::MAX_JSON_DEPTH;
use crate::engine::json_text;

/// The end of the value at `pos`, by its structure only: a string to its closing quote
/// (escapes passed over), an object or array by its brackets ([`skip_value`]), anything else
/// to the next `,`, `}`, `]` or blank (at least one byte). None at the end of `b`.
pub(super) fn skip_any(b: &[u8], pos: usize) -> Option<usize> {
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

/// Whether `text` could hold a member named as the key (`key`: its quoted name, which a line
/// spells otherwise only with an `escape`, looked for only where there is a backslash).
pub(super) fn repeats(
    text: &[u8],
    key: &memchr::memmem::Finder,
    escape: &memchr::memmem::Finder,
) -> bool {
    key.find(text).is_some()
        || (memchr::memchr(b'\\', text).is_some() && escape.find(text).is_some())
}

/// Whether `text` holds more than `most` of `{` and `[`: found by memchr's vector search,
/// which stops at the one past `most` (an event holds a few: counting every byte of it was a
/// tenth of a long record's cost).
pub(super) fn more_open_brackets(text: &[u8], most: usize) -> bool {
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
pub(super) fn skip_value(b: &[u8], mut pos: usize, room: usize) -> Option<usize> {
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
