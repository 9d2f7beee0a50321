//! What a line must not hold to be JSON to the events parser, where serde would read it: a
//! nesting deeper than the parser's limit, a `\\u` escape of a lone surrogate.

use crate::engine::events::MAX_JSON_DEPTH;

/// Whether a line nests deeper than [`MAX_JSON_DEPTH`] (the events parser's limit, which the
/// twin applies to a whole record). Counting brackets first keeps the exact scan off the
/// common line.
pub(super) fn too_deep(line: &[u8]) -> bool {
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
pub(super) fn lone_surrogate(line: &[u8]) -> bool {
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
