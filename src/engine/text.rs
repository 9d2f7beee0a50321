//! Text predicates that must agree with Python's `str` methods exactly.

/// Python's `str.isspace()` for one character: Unicode White_Space plus the information
/// separators U+001C..U+001F, which Python counts as whitespace and Rust does not.
pub fn is_py_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n'
            | '\u{0b}'
            | '\u{0c}'
            | '\r'
            | '\u{1c}'..='\u{1f}'
            | ' '
            | '\u{85}'
            | '\u{a0}'
            | '\u{1680}'
            | '\u{2000}'..='\u{200a}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{202f}'
            | '\u{205f}'
            | '\u{3000}'
    )
}

/// "Absent" text (spec, top of merge-rules): empty, whitespace only, or the placeholder `null`.
pub fn is_absent_text(text: &str) -> bool {
    text.is_empty() || text == "null" || text.chars().all(is_py_space)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_whitespace() {
        for c in ['\u{1c}', '\u{1f}', '\u{85}', '\u{3000}', ' ', '\t'] {
            assert!(is_py_space(c), "{c:?}");
        }
        for c in ['a', '\u{200b}', '\u{feff}', '\u{180e}', '0'] {
            assert!(!is_py_space(c), "{c:?}");
        }
    }

    #[test]
    fn absent() {
        assert!(is_absent_text(""));
        assert!(is_absent_text("null"));
        assert!(is_absent_text(" \u{3000}\n"));
        assert!(!is_absent_text("Null"));
        assert!(!is_absent_text(" null "));
        assert!(!is_absent_text("x"));
    }
}
