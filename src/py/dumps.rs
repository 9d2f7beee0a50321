//! JSON as Python's `json.dumps(value, ensure_ascii=False, separators=(",", ":"))` writes the
//! data the binding makes of engine values: scalars, strings, engine values and kept JSON text.
//! The writers of a batch record (`batch/record.rs`) and of `json_line` (`json_line.rs`) share it.

use crate::engine::value::Value;
use smallvec::SmallVec;

/// `value` as `json.dumps(..., ensure_ascii=False, separators=(",", ":"))` writes the Python
/// data the binding makes of it (kept JSON text is written as the value it reads as).
pub(crate) fn value(out: &mut Vec<u8>, value_: &Value) {
    match value_ {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::Int(number) => {
            let mut buffer = itoa_buffer();
            out.extend_from_slice(int_text(*number, &mut buffer));
        }
        Value::Float(number) => float(out, *number),
        Value::Str(text) => string(out, text),
        Value::List(items) => {
            out.push(b'[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push(b',');
                }
                value(out, item);
            }
            out.push(b']');
        }
        Value::Dict(map) => {
            out.push(b'{');
            for (index, (key, item)) in map.iter().enumerate() {
                if index > 0 {
                    out.push(b',');
                }
                string(out, key);
                out.push(b':');
                value(out, item);
            }
            out.push(b'}');
        }
        Value::Json(text) => {
            if !kept_text(out, text.text()) {
                value(out, text.value());
            }
        }
    }
}

/// Kept JSON text written as [`value`] writes the value it reads as (its tree never built):
/// spaces dropped, strings without escapes copied, the others decoded and written again,
/// numbers read as the engine reads them (an integer that fits 64 bits is an int, any other
/// number the nearest float). False, with nothing written, for text this walk does not write
/// alike: a key written with an escape or repeated in its object (Python keeps its first
/// place and last value), a surrogate escape, anything unexpected; the caller then writes the
/// tree.
fn kept_text(out: &mut Vec<u8>, text: &str) -> bool {
    let start = out.len();
    let mut walk = Walk {
        b: text.as_bytes(),
        pos: 0,
        scratch: String::new(),
    };
    let done = walk.value(out, 0).is_some() && {
        walk.space();
        walk.pos == walk.b.len()
    };
    if !done {
        out.truncate(start);
    }
    done
}

/// The deepest nesting [`kept_text`] walks (kept text is far shallower: the event's limit).
const WALK_DEPTH: usize = 512;
/// The most keys of one object [`kept_text`] compares for repeats (more: the tree is written).
const WALK_KEYS: usize = 32;

struct Walk<'t> {
    b: &'t [u8],
    pos: usize,
    scratch: String,
}

impl Walk<'_> {
    fn space(&mut self) {
        while matches!(self.b.get(self.pos), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    fn value(&mut self, out: &mut Vec<u8>, depth: usize) -> Option<()> {
        if depth > WALK_DEPTH {
            return None;
        }
        self.space();
        match *self.b.get(self.pos)? {
            b'{' => self.object(out, depth),
            b'[' => self.array(out, depth),
            b'"' => {
                match self.plain_string() {
                    (start, Some(end)) => out.extend_from_slice(self.b.get(start - 1..=end)?),
                    (_, None) => {
                        self.escaped_string()?;
                        string(out, &self.scratch);
                    }
                }
                Some(())
            }
            b't' => self.word(out, b"true"),
            b'f' => self.word(out, b"false"),
            b'n' => self.word(out, b"null"),
            b'-' | b'0'..=b'9' => self.number(out),
            _ => None,
        }
    }

    fn array(&mut self, out: &mut Vec<u8>, depth: usize) -> Option<()> {
        self.pos += 1;
        out.push(b'[');
        self.space();
        if self.b.get(self.pos) == Some(&b']') {
            self.pos += 1;
            out.push(b']');
            return Some(());
        }
        loop {
            self.value(out, depth + 1)?;
            self.space();
            match *self.b.get(self.pos)? {
                b',' => out.push(b','),
                b']' => {
                    self.pos += 1;
                    out.push(b']');
                    return Some(());
                }
                _ => return None,
            }
            self.pos += 1;
        }
    }

    fn object(&mut self, out: &mut Vec<u8>, depth: usize) -> Option<()> {
        self.pos += 1;
        out.push(b'{');
        self.space();
        if self.b.get(self.pos) == Some(&b'}') {
            self.pos += 1;
            out.push(b'}');
            return Some(());
        }
        // an object's keys held inline: kept objects are small (a logprob entry has four)
        let mut keys: SmallVec<[(usize, usize); 8]> = SmallVec::new();
        loop {
            if self.b.get(self.pos) != Some(&b'"') {
                return None;
            }
            // a key with an escape could repeat another written otherwise: the tree decides
            let (start, end) = self.plain_string();
            let end = end?;
            let key = self.b.get(start..end)?;
            if keys.len() >= WALK_KEYS || keys.iter().any(|&(s, e)| self.b.get(s..e) == Some(key)) {
                return None;
            }
            keys.push((start, end));
            if keys.len() > 1 {
                out.push(b',');
            }
            out.extend_from_slice(self.b.get(start - 1..=end)?);
            self.space();
            if self.b.get(self.pos) != Some(&b':') {
                return None;
            }
            self.pos += 1;
            out.push(b':');
            self.value(out, depth + 1)?;
            self.space();
            match *self.b.get(self.pos)? {
                b',' => {
                    self.pos += 1;
                    self.space();
                }
                b'}' => {
                    self.pos += 1;
                    out.push(b'}');
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// The string at `pos` (its opening quote): `(start, Some(end))`, where its text between
    /// the quotes lies, and `pos` past it, when it has no escape (nor a control character:
    /// not JSON); `(start, None)` and `pos` unmoved otherwise.
    fn plain_string(&mut self) -> (usize, Option<usize>) {
        let start = self.pos + 1;
        let mut at = start;
        while let Some(&byte) = self.b.get(at) {
            match byte {
                b'"' => {
                    self.pos = at + 1;
                    return (start, Some(at));
                }
                b'\\' | 0x00..=0x1f => return (start, None),
                _ => at += 1,
            }
        }
        (start, None)
    }

    /// The string at `pos` decoded into `scratch`, `pos` past it; None for a surrogate escape
    /// (kept text holds none) or text that is not a JSON string.
    fn escaped_string(&mut self) -> Option<()> {
        self.scratch.clear();
        let mut at = self.pos + 1;
        loop {
            let run = at;
            while !matches!(self.b.get(at), Some(b'"' | b'\\' | 0x00..=0x1f) | None) {
                at += 1;
            }
            let plain = std::str::from_utf8(self.b.get(run..at)?).ok()?;
            self.scratch.push_str(plain);
            match *self.b.get(at)? {
                b'"' => {
                    self.pos = at + 1;
                    return Some(());
                }
                b'\\' => {}
                _ => return None, // a control character: not JSON
            }
            let decoded = match *self.b.get(at + 1)? {
                b'"' => '"',
                b'\\' => '\\',
                b'/' => '/',
                b'b' => '\u{8}',
                b'f' => '\u{c}',
                b'n' => '\n',
                b'r' => '\r',
                b't' => '\t',
                b'u' => {
                    let hex = std::str::from_utf8(self.b.get(at + 2..at + 6)?).ok()?;
                    let code = char::from_u32(u32::from_str_radix(hex, 16).ok()?)?;
                    self.scratch.push(code);
                    at += 6;
                    continue;
                }
                _ => return None,
            };
            self.scratch.push(decoded);
            at += 2;
        }
    }

    fn word(&mut self, out: &mut Vec<u8>, word: &[u8]) -> Option<()> {
        if self.b.get(self.pos..self.pos + word.len())? != word {
            return None;
        }
        self.pos += word.len();
        out.extend_from_slice(word);
        Some(())
    }

    /// A number as the engine reads it (`json_text::read`), written as Python writes it.
    fn number(&mut self, out: &mut Vec<u8>) -> Option<()> {
        let start = self.pos;
        let mut is_int = true;
        while let Some(&byte) = self.b.get(self.pos) {
            match byte {
                b'0'..=b'9' | b'-' | b'+' => {}
                b'.' | b'e' | b'E' => is_int = false,
                _ => break,
            }
            self.pos += 1;
        }
        let bytes = self.b.get(start..self.pos)?;
        if !is_int && is_float_repr(bytes) {
            out.extend_from_slice(bytes);
            return Some(());
        }
        let token = std::str::from_utf8(bytes).ok()?;
        if is_int {
            if let Ok(number) = token.parse::<i64>() {
                let mut buffer = itoa_buffer();
                out.extend_from_slice(int_text(number, &mut buffer));
                return Some(());
            }
        }
        match token.parse::<f64>() {
            Ok(number) if number.is_finite() => {
                float(out, number);
                Some(())
            }
            _ => None,
        }
    }
}

/// Whether a number's text is already what `float.__repr__` writes for the float it reads
/// as, so it is copied, not read and written again: a plain decimal `-?I.F` from 1e-4 to
/// 1e16 (`I` without leading zeros, at most three zeros opening `F` when `I` is 0), `F`
/// ending in a non-zero digit or being `0`, with at most 15 significant digits. Any decimal
/// of 15 digits or fewer reads back from its float unchanged, and no shorter one reads as
/// that float (two such decimals never share a float), so these are `repr`'s digits.
/// Logprobs as providers send them (about 8 digits) take this path.
fn is_float_repr(text: &[u8]) -> bool {
    let unsigned = text.strip_prefix(b"-").unwrap_or(text);
    let Some(point) = memchr::memchr(b'.', unsigned) else {
        return false;
    };
    let (whole, fraction) = (&unsigned[..point], &unsigned[point + 1..]);
    let digits = |part: &[u8]| !part.is_empty() && part.iter().all(u8::is_ascii_digit);
    if !digits(whole) || !digits(fraction) || (whole.len() > 1 && whole[0] == b'0') {
        return false;
    }
    if fraction != b"0" && fraction[fraction.len() - 1] == b'0' {
        return false;
    }
    let significant = if whole == b"0" {
        let zeros = fraction.iter().take_while(|&&d| d == b'0').count();
        if zeros > 3 && zeros < fraction.len() {
            return false; // below 1e-4: written with an exponent
        }
        fraction.len() - zeros
    } else if fraction == b"0" {
        whole.len()
    } else {
        whole.len() + fraction.len()
    };
    significant <= 15
}

pub(crate) fn itoa_buffer() -> [u8; 20] {
    [0; 20]
}

/// The decimal digits of `number` (`int.__repr__`), written at the end of `buffer`.
pub(crate) fn int_text(number: i64, buffer: &mut [u8; 20]) -> &[u8] {
    let mut rest = number.unsigned_abs();
    let mut start = buffer.len();
    loop {
        start -= 1;
        buffer[start] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    if number < 0 {
        // i64::MIN has 19 digits: the sign still fits
        start -= 1;
        buffer[start] = b'-';
    }
    &buffer[start..]
}

/// A float as `json.dumps` writes it: `float.__repr__` (the engine's `push_py_float`), and
/// `NaN` / `Infinity` / `-Infinity` (its `allow_nan` default).
pub(crate) fn float(out: &mut Vec<u8>, number: f64) {
    if number.is_nan() {
        out.extend_from_slice(b"NaN");
        return;
    }
    if number.is_infinite() {
        out.extend_from_slice(if number > 0.0 {
            b"Infinity"
        } else {
            b"-Infinity"
        });
        return;
    }
    crate::engine::value::push_py_float(out, number);
}

/// A string as `json.dumps(ensure_ascii=False)` writes it: `"` and `\` escaped, the control
/// characters below U+0020 as `\n`, `\r`, `\t`, `\b`, `\f` or `\u00XX` (lower-case hex), every
/// other character as itself (UTF-8).
pub(crate) fn string(out: &mut Vec<u8>, text: &str) {
    let bytes = text.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let mut start = 0;
    // the runs between bytes to escape copied whole (found eight bytes a step)
    while let Some(index) = crate::engine::json_text::plain_run(bytes, start) {
        out.extend_from_slice(&bytes[start..index]);
        let byte = bytes[index];
        let escape: &[u8] = match byte {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x08 => b"\\b",
            0x0c => b"\\f",
            _ => b"",
        };
        if escape.is_empty() {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.extend_from_slice(b"\\u00");
            out.push(HEX[usize::from(byte >> 4)]);
            out.push(HEX[usize::from(byte & 0xf)]);
        } else {
            out.extend_from_slice(escape);
        }
        start = index + 1;
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kept(json: &str) -> Option<String> {
        let mut out = b"x".to_vec();
        kept_text(&mut out, json).then(|| String::from_utf8(out[1..].to_vec()).unwrap())
    }

    #[test]
    fn kept_text_as_python_writes_its_value() {
        assert_eq!(
            kept(r#" { "a" : [ 1 , -0 , 2.50 , 1E2 , 12345678901234567890 , true , null ] } "#)
                .as_deref(),
            Some(r#"{"a":[1,0,2.5,100.0,1.2345678901234567e+19,true,null]}"#)
        );
        assert_eq!(
            kept(r#"["\u00e9\/\"\n\u0001", "plain é"]"#).as_deref(),
            Some(r#"["é/\"\n\u0001","plain é"]"#)
        );
        let empty = r#"{"b":{},"c":[],"d":""}"#;
        assert_eq!(kept(empty).as_deref(), Some(empty));
        // left to the tree: a repeated key, a key with an escape, a surrogate escape
        assert_eq!(kept(r#"{"a":1,"b":2,"a":3}"#), None);
        assert_eq!(kept(r#"{"\u0061":1}"#), None);
        assert_eq!(kept(r#""\ud83d\ude00""#), None);
        assert_eq!(kept("[1,"), None);
        assert_eq!(kept("\"a\\n\u{1}\""), None);
    }

    #[test]
    fn a_float_already_in_repr_form_is_copied_as_repr_writes_it() {
        for token in [
            "0.0",
            "-0.0",
            "0.1",
            "-0.0001",
            "1.0",
            "-0.26638845",
            "999999999999999.0",
        ] {
            assert!(is_float_repr(token.as_bytes()), "{token}");
        }
        let not = [
            "0.00001",
            "1.50",
            "1234567890123456.0",
            "01.5",
            "1.",
            ".5",
            "1e5",
            "-",
            "0.1234567890123456",
        ];
        for token in not {
            assert!(!is_float_repr(token.as_bytes()), "{token}");
        }
        // every token the fast path copies is what reading it and writing it again gives
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut copied = 0;
        for _ in 0..200_000 {
            let digits = 1 + (next() % 17) as usize;
            let mut token: Vec<u8> = (0..digits).map(|_| b'0' + (next() % 10) as u8).collect();
            let point = (next() % digits as u64) as usize + 1;
            let (whole, fraction) = token.split_at(point);
            let whole = if whole.len() > 1 && next() % 2 == 0 {
                &whole[whole.len() - 1..]
            } else {
                whole
            };
            let fraction = if fraction.is_empty() {
                &b"0"[..]
            } else {
                fraction
            };
            token = [&b"-"[..(next() % 2) as usize], whole, b".", fraction].concat();
            if is_float_repr(&token) {
                copied += 1;
                let number: f64 = std::str::from_utf8(&token).unwrap().parse().unwrap();
                let mut written = Vec::new();
                float(&mut written, number);
                assert_eq!(
                    String::from_utf8(written).unwrap(),
                    std::str::from_utf8(&token).unwrap()
                );
            }
        }
        assert!(copied > 50_000, "{copied}");
    }

    fn text(v: &Value) -> String {
        let mut out = Vec::new();
        value(&mut out, v);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn scalars_as_python_writes_them() {
        assert_eq!(text(&Value::Int(i64::MIN)), "-9223372036854775808");
        assert_eq!(text(&Value::Int(0)), "0");
        assert_eq!(text(&Value::Float(1e16)), "1e+16");
        assert_eq!(text(&Value::Float(1e-5)), "1e-05");
        assert_eq!(text(&Value::Float(100.0)), "100.0");
        assert_eq!(text(&Value::Float(-0.0)), "-0.0");
        assert_eq!(text(&Value::Float(f64::NAN)), "NaN");
        assert_eq!(text(&Value::Float(f64::NEG_INFINITY)), "-Infinity");
        let s = Value::Str("a\"\\\n\r\t\u{8}\u{c}\u{1}\u{1f}\u{7f}é\u{2028}😀".to_owned());
        for (number, python) in [
            (0.1, "0.1"),
            (1e15, "1000000000000000.0"),
            (9999999999999998.0, "9999999999999998.0"),
            (1e-4, "0.0001"),
            (0.00012, "0.00012"),
            (1.5e-5, "1.5e-05"),
            (9.999999999999999e-5, "9.999999999999999e-05"),
            (-123456789.125, "-123456789.125"),
            (-0.31725305, "-0.31725305"),
            (1e300, "1e+300"),
            (5e-324, "5e-324"),
            (1446596859160128.0 + 0.25, "1446596859160128.2"),
            (1446596859160128.0 + 0.75, "1446596859160128.8"),
            (-1e16, "-1e+16"),
            (123.0, "123.0"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
        ] {
            assert_eq!(text(&Value::Float(number)), python);
        }
        assert_eq!(
            text(&s),
            "\"a\\\"\\\\\\n\\r\\t\\b\\f\\u0001\\u001f\u{7f}é\u{2028}😀\""
        );
    }
}
