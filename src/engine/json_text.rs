//! JSON kept as its text: a value the message keeps whole and no rule looks into (a logprobs
//! entry), held as the text it arrived in instead of a tree of `Value`s.
//!
//! A tree costs an allocation per container, key and string, and is walked again to build the
//! caller's objects and to free it: for a stream with logprobs that was most of the work (about
//! forty allocations per entry). Kept as text, an entry is one copy of its bytes; whoever needs
//! its objects reads the text once, with [`read`], straight into them ([`Build`]: the engine's
//! own values here, Python objects in the binding).
//!
//! Only text that reads as [`crate::engine::events::parse`] would read it is kept
//! (`value::JsonText::accept`); anything else is read into values as before, so both give the same
//! result, and the same error.

/// The longest number token kept as text (a longer one, or an exponent of three digits, may
/// overflow a float: the generic reading's error; such text is read into values).
const MAX_NUMBER: usize = 100;

pub(crate) fn acceptable(b: &[u8], room: usize) -> bool {
    let start = skip_space(b, 0);
    scan(b, start, room).is_some_and(|end| skip_space(b, end) == b.len())
}

/// `pos` after the JSON whitespace there.
pub(crate) fn skip_space(b: &[u8], mut pos: usize) -> usize {
    while matches!(b.get(pos), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        pos += 1;
    }
    pos
}

/// The end of the JSON value that starts at `pos` in `b`, if it is valid JSON (as strict as
/// serde_json: no leading zero, no trailing comma, no control character in a string, a known
/// escape; UTF-8 is the caller's to check) that `value::JsonText::accept` keeps: no `\u` escape of
/// a surrogate, no number token longer than [`MAX_NUMBER`] or with an exponent of three
/// digits or more, at most `room` levels of nesting. None for anything else (then the caller
/// reads it the generic way, which also tells invalid JSON).
pub fn scan(b: &[u8], mut pos: usize, room: usize) -> Option<usize> {
    // one bit per open container, 1 for an object (`room` is at most the depth limit)
    let mut objects: u128 = 0;
    let mut depth = 0usize;
    let room = room.min(127);
    loop {
        // a value at `pos`
        match *b.get(pos)? {
            open @ (b'{' | b'[') => {
                depth += 1;
                if depth > room {
                    return None;
                }
                objects = objects << 1 | u128::from(open == b'{');
                let (at, next) = past_space(b, pos + 1)?;
                pos = at;
                let close = if open == b'{' { b'}' } else { b']' };
                if next == close {
                    pos += 1;
                    depth -= 1;
                    objects >>= 1;
                } else {
                    if open == b'{' {
                        pos = scan_key(b, pos)?;
                    }
                    continue;
                }
            }
            b'"' => pos = scan_string(b, pos)?,
            b'-' | b'0'..=b'9' => pos = scan_number(b, pos)?,
            b't' => pos = scan_word(b, pos, b"true")?,
            b'f' => pos = scan_word(b, pos, b"false")?,
            b'n' => pos = scan_word(b, pos, b"null")?,
            _ => return None,
        }
        // after a value: close containers until one goes on
        loop {
            if depth == 0 {
                return Some(pos);
            }
            let (at, next) = past_space(b, pos)?;
            pos = at;
            let in_object = objects & 1 == 1;
            match next {
                b',' => {
                    pos = past_space(b, pos + 1)?.0;
                    if in_object {
                        pos = scan_key(b, pos)?;
                    }
                    break;
                }
                b']' if !in_object => {}
                b'}' if in_object => {}
                _ => return None,
            }
            pos += 1;
            depth -= 1;
            objects >>= 1;
        }
    }
}

/// The first byte at or after `pos` that is not JSON whitespace, and where it is; None at the
/// end of `b`. Compact JSON has no space: one comparison says so, and the byte is read once.
#[inline]
pub(crate) fn past_space(b: &[u8], pos: usize) -> Option<(usize, u8)> {
    let c = *b.get(pos)?;
    if c > b' ' {
        return Some((pos, c));
    }
    let pos = skip_space(b, pos);
    Some((pos, *b.get(pos)?))
}

/// An object's key and its colon at `pos`: where its value starts.
fn scan_key(b: &[u8], pos: usize) -> Option<usize> {
    if b.get(pos) != Some(&b'"') {
        return None;
    }
    let (pos, colon) = past_space(b, scan_string(b, pos)?)?;
    if colon != b':' {
        return None;
    }
    Some(past_space(b, pos + 1)?.0)
}

/// The bytes a run of a string's text ends at: its quote, a backslash, a control character.
static STOPS: [bool; 256] = {
    let mut stops = [false; 256];
    let mut c = 0;
    while c < 0x20 {
        stops[c] = true;
        c += 1;
    }
    stops[b'"' as usize] = true;
    stops[b'\\' as usize] = true;
    stops
};

/// Where the run of plain string text from `pos` ends ([`STOPS`]); None at the end of `b`.
/// Eight bytes a step while eight are left (SWAR: keys and tokens are a word or two, too short
/// for a vectorized search to pay), then byte by byte.
pub(crate) fn plain_run(b: &[u8], mut pos: usize) -> Option<usize> {
    while let Some(word) = b.get(pos..pos + 8) {
        let Ok(word) = <[u8; 8]>::try_from(word) else {
            break;
        };
        let stops = word_stops(u64::from_le_bytes(word));
        if stops != 0 {
            return Some(pos + (stops.trailing_zeros() / 8) as usize);
        }
        pos += 8;
    }
    let run = b.get(pos..)?.iter().position(|&c| STOPS[c as usize])?;
    Some(pos + run)
}

/// A byte of 1s, and the high bit of each byte, in a word (the SWAR tests below).
const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// The high bit of each byte of `x` (little-endian) that is a [`STOPS`] byte: a quote, a
/// backslash or a control character, exact up to the first one (each test borrows only into
/// the bytes above a true match, so the lowest bit set is always a true one).
fn word_stops(x: u64) -> u64 {
    let zero = |v: u64| v.wrapping_sub(ONES) & !v;
    let quote = x ^ (ONES * u64::from(b'"'));
    let backslash = x ^ (ONES * u64::from(b'\\'));
    let control = x.wrapping_sub(ONES * 0x20) & !x;
    (zero(quote) | zero(backslash) | control) & HIGH
}

/// The end of the string whose opening quote is at `pos`.
pub(crate) fn scan_string(b: &[u8], mut pos: usize) -> Option<usize> {
    pos += 1;
    loop {
        pos = plain_run(b, pos)?;
        match *b.get(pos)? {
            b'"' => return Some(pos + 1),
            b'\\' => match *b.get(pos + 1)? {
                b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => pos += 2,
                b'u' => {
                    let hex = b.get(pos + 2..pos + 6)?;
                    if !hex.iter().all(u8::is_ascii_hexdigit)
                        || (matches!(hex[0], b'd' | b'D')
                            && matches!(hex[1], b'8'..=b'9' | b'a'..=b'f' | b'A'..=b'F'))
                    {
                        return None;
                    }
                    pos += 6;
                }
                _ => return None,
            },
            0..=0x1f => return None,
            _ => pos += 1,
        }
    }
}

/// The end of the number token at `pos` (JSON's grammar, and the limits above).
fn scan_number(b: &[u8], start: usize) -> Option<usize> {
    let digits = |pos: &mut usize| {
        let run = digits_at(b, *pos);
        *pos += run;
        run
    };
    let mut pos = start + usize::from(b.get(start) == Some(&b'-'));
    match *b.get(pos)? {
        b'0' => pos += 1,
        b'1'..=b'9' => {
            digits(&mut pos);
        }
        _ => return None,
    }
    if b.get(pos) == Some(&b'.') {
        pos += 1;
        if digits(&mut pos) == 0 {
            return None;
        }
    }
    if matches!(b.get(pos), Some(b'e' | b'E')) {
        pos += 1;
        if matches!(b.get(pos), Some(b'+' | b'-')) {
            pos += 1;
        }
        if !(1..=2).contains(&digits(&mut pos)) {
            return None;
        }
    }
    (pos - start <= MAX_NUMBER).then_some(pos)
}

/// How many ASCII digits `b` has from `pos` on: eight bytes a step while eight are left (a
/// logprob's fraction is eight digits), then byte by byte.
#[inline]
fn digits_at(b: &[u8], start: usize) -> usize {
    let mut pos = start;
    while let Some(word) = b.get(pos..pos + 8) {
        let Ok(word) = <[u8; 8]>::try_from(word) else {
            break;
        };
        let stops = word_non_digits(u64::from_le_bytes(word));
        if stops != 0 {
            return pos + (stops.trailing_zeros() / 8) as usize - start;
        }
        pos += 8;
    }
    while matches!(b.get(pos), Some(b'0'..=b'9')) {
        pos += 1;
    }
    pos - start
}

/// The high bit of each byte of `x` (little-endian) that is not an ASCII digit, exact up to the
/// first one: a digit XOR 0x30 is 0..=9, which 0x76 does not carry into the high bit; any
/// other byte gets it (a carry out of a byte of 0x8a or more reaches only the bytes above).
fn word_non_digits(x: u64) -> u64 {
    let t = x ^ (ONES * 0x30);
    (t.wrapping_add(ONES * 0x76) | t) & HIGH
}

fn scan_word(b: &[u8], pos: usize, word: &[u8]) -> Option<usize> {
    (b.get(pos..pos + word.len())? == word).then_some(pos + word.len())
}

// ---------------------------------------------------------------------------------------------
// Reading kept text

/// What [`read`] builds a value with: the engine's values (`value::ValueBuilder`) or a binding's
/// objects. Containers are filled in the text's order; a key repeated in an object is set
/// again (its first place, its last value: as the generic reading and Python's dict).
pub trait Build {
    type Out;
    type List;
    type Dict;
    type Err;
    fn null(&mut self) -> Result<Self::Out, Self::Err>;
    fn bool(&mut self, value: bool) -> Result<Self::Out, Self::Err>;
    fn int(&mut self, value: i64) -> Result<Self::Out, Self::Err>;
    fn float(&mut self, value: f64) -> Result<Self::Out, Self::Err>;
    fn str(&mut self, value: &str) -> Result<Self::Out, Self::Err>;
    fn list(&mut self) -> Result<Self::List, Self::Err>;
    fn push(&mut self, list: &mut Self::List, item: Self::Out) -> Result<(), Self::Err>;
    fn end_list(&mut self, list: Self::List) -> Result<Self::Out, Self::Err>;
    fn dict(&mut self) -> Result<Self::Dict, Self::Err>;
    fn set(&mut self, dict: &mut Self::Dict, key: &str, item: Self::Out) -> Result<(), Self::Err>;
    fn end_dict(&mut self, dict: Self::Dict) -> Result<Self::Out, Self::Err>;
    /// A list of integers that fit 64 bits, `text` its JSON text (a logprobs entry's `bytes`):
    /// a builder of immutable lists may hand out one it made from the same text.
    fn ints(&mut self, _text: &str, items: &[i64]) -> Result<Self::Out, Self::Err> {
        int_list(self, items)
    }
    /// The list [`Build::ints`] made earlier from the same `text`, if the builder shares them:
    /// asked before the list is read.
    fn shared_ints(&mut self, _text: &str) -> Option<Self::Out> {
        None
    }
    /// The text is not what `value::JsonText::accept` accepted (never, unless a bug).
    fn broken(&mut self, detail: &'static str) -> Self::Err;
}

/// A list of `items` built by `builder` (what [`Build::ints`] makes unless the builder shares).
pub fn int_list<B: Build + ?Sized>(builder: &mut B, items: &[i64]) -> Result<B::Out, B::Err> {
    let mut list = builder.list()?;
    for &item in items {
        let item = builder.int(item)?;
        builder.push(&mut list, item)?;
    }
    builder.end_list(list)
}

/// The value of `text`, an accepted `value::JsonText`'s, built by `builder`: numbers and strings as
/// the generic reading reads them (an integer that fits 64 bits is an int, any other number
/// the nearest float; `-0` is the int 0).
pub fn read<B: Build>(text: &str, builder: &mut B) -> Result<B::Out, B::Err> {
    let mut reader = Reader {
        text,
        pos: 0,
        scratch: String::new(),
        ints: Vec::new(),
    };
    let value = reader.value(builder)?;
    reader.space();
    if reader.pos != text.len() {
        return Err(builder.broken("text after the value"));
    }
    Ok(value)
}

struct Reader<'t> {
    text: &'t str,
    pos: usize,
    /// a string with escapes, decoded
    scratch: String,
    ints: Vec<i64>,
}

impl Reader<'_> {
    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.pos).copied()
    }

    fn space(&mut self) {
        self.pos = skip_space(self.text.as_bytes(), self.pos);
    }

    fn value<B: Build>(&mut self, b: &mut B) -> Result<B::Out, B::Err> {
        self.space();
        match self.peek() {
            Some(b'{') => self.dict(b),
            Some(b'[') => self.list(b),
            Some(b'"') => {
                let text = self.string(b)?;
                let out = b.str(text.get(&self.scratch, self.text));
                out
            }
            Some(b't') => self.word("true", b).and_then(|_| b.bool(true)),
            Some(b'f') => self.word("false", b).and_then(|_| b.bool(false)),
            Some(b'n') => self.word("null", b).and_then(|_| b.null()),
            Some(b'-' | b'0'..=b'9') => self.number(b),
            _ => Err(b.broken("not a JSON value")),
        }
    }

    fn word<B: Build>(&mut self, word: &str, b: &mut B) -> Result<(), B::Err> {
        if self.text[self.pos..].starts_with(word) {
            self.pos += word.len();
            Ok(())
        } else {
            Err(b.broken("not a JSON literal"))
        }
    }

    fn number<B: Build>(&mut self, b: &mut B) -> Result<B::Out, B::Err> {
        let (token, is_int) = self.number_token();
        if is_int {
            if let Ok(value) = token.parse::<i64>() {
                return b.int(value);
            }
        }
        match token.parse::<f64>() {
            Ok(value) if value.is_finite() => b.float(value),
            _ => Err(b.broken("a number out of range")),
        }
    }

    /// The number token at `pos` (valid JSON: [`scan`] checked it), and whether it is written
    /// as an integer.
    fn number_token(&mut self) -> (&str, bool) {
        let b = self.text.as_bytes();
        let start = self.pos;
        let mut pos = start + usize::from(b.get(start) == Some(&b'-'));
        pos += digits_at(b, pos);
        let mut is_int = true;
        if b.get(pos) == Some(&b'.') {
            is_int = false;
            pos += 1 + digits_at(b, pos + 1);
        }
        if matches!(b.get(pos), Some(b'e' | b'E')) {
            is_int = false;
            pos += 1 + usize::from(matches!(b.get(pos + 1), Some(b'+' | b'-')));
            pos += digits_at(b, pos);
        }
        self.pos = pos;
        (self.text.get(start..pos).unwrap_or(""), is_int)
    }

    /// The string at `pos` (its opening quote): where it lies, or decoded into `scratch`.
    fn string<B: Build>(&mut self, b: &mut B) -> Result<Str, B::Err> {
        let bytes = self.text.as_bytes();
        let start = self.pos + 1;
        let mut pos = start;
        let mut escaped = false;
        loop {
            let Some(at) = plain_run(bytes, pos) else {
                return Err(b.broken("an unterminated string"));
            };
            if bytes[at] == b'"' {
                if escaped {
                    self.scratch.push_str(&self.text[pos..at]);
                }
                self.pos = at + 1;
                return Ok(if escaped {
                    Str::Scratch
                } else {
                    Str::Text(start, at)
                });
            }
            if bytes[at] != b'\\' {
                return Err(b.broken("a control character in a string"));
            }
            if !escaped {
                self.scratch.clear();
                escaped = true;
            }
            self.scratch.push_str(&self.text[pos..at]);
            let decoded = match bytes.get(at + 1) {
                Some(b'"') => '"',
                Some(b'\\') => '\\',
                Some(b'/') => '/',
                Some(b'b') => '\u{8}',
                Some(b'f') => '\u{c}',
                Some(b'n') => '\n',
                Some(b'r') => '\r',
                Some(b't') => '\t',
                Some(b'u') => {
                    let code = self
                        .text
                        .get(at + 2..at + 6)
                        .and_then(|hex| u32::from_str_radix(hex, 16).ok())
                        .and_then(char::from_u32);
                    match code {
                        Some(c) => {
                            self.scratch.push(c);
                            pos = at + 6;
                            continue;
                        }
                        None => return Err(b.broken("a surrogate or invalid \\u escape")),
                    }
                }
                _ => return Err(b.broken("an invalid escape")),
            };
            self.scratch.push(decoded);
            pos = at + 2;
        }
    }

    fn list<B: Build>(&mut self, b: &mut B) -> Result<B::Out, B::Err> {
        if let Some(out) = self.int_list(b) {
            return out;
        }
        self.pos += 1;
        let mut list = b.list()?;
        self.space();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return b.end_list(list);
        }
        loop {
            let item = self.value(b)?;
            b.push(&mut list, item)?;
            self.space();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return b.end_list(list);
                }
                _ => return Err(b.broken("a list without its ]")),
            }
        }
    }

    /// The list at `pos` if it holds only integers that fit 64 bits ([`Build::ints`]); None,
    /// with nothing read, otherwise.
    fn int_list<B: Build>(&mut self, b: &mut B) -> Option<Result<B::Out, B::Err>> {
        let bytes = self.text.as_bytes();
        let start = self.pos;
        // a list of digits, signs, commas and spaces (valid JSON: integers) is looked up by its
        // text before its numbers are read
        let len = bytes
            .get(start + 1..)?
            .iter()
            .position(|c| !matches!(c, b'0'..=b'9' | b'-' | b',' | b' ' | b'\t' | b'\n' | b'\r'))?;
        if bytes.get(start + 1 + len) == Some(&b']') {
            if let Some(shared) = b.shared_ints(&self.text[start..start + len + 2]) {
                self.pos = start + len + 2;
                return Some(Ok(shared));
            }
        }
        let mut pos = start + 1;
        self.ints.clear();
        pos = skip_space(bytes, pos);
        if bytes.get(pos) != Some(&b']') {
            loop {
                // one integer, summed on the negative side (i64::MIN has no positive twin)
                let negative = bytes.get(pos) == Some(&b'-');
                pos += usize::from(negative);
                let digits = pos;
                let mut value: i64 = 0;
                while let Some(digit @ b'0'..=b'9') = bytes.get(pos) {
                    value = value
                        .checked_mul(10)?
                        .checked_sub(i64::from(digit - b'0'))?;
                    pos += 1;
                }
                if pos == digits {
                    return None; // not an integer (a string, a float, a container...)
                }
                self.ints.push(if negative {
                    value
                } else {
                    value.checked_neg()?
                });
                pos = skip_space(bytes, pos);
                match bytes.get(pos) {
                    Some(b',') => {
                        pos += 1;
                        pos = skip_space(bytes, pos);
                    }
                    Some(b']') => break,
                    _ => return None,
                }
            }
        }
        self.pos = pos + 1;
        let ints = std::mem::take(&mut self.ints);
        let out = b.ints(&self.text[start..self.pos], &ints);
        self.ints = ints;
        Some(out)
    }

    fn dict<B: Build>(&mut self, b: &mut B) -> Result<B::Out, B::Err> {
        self.pos += 1;
        let mut dict = b.dict()?;
        self.space();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return b.end_dict(dict);
        }
        loop {
            self.space();
            if self.peek() != Some(b'"') {
                return Err(b.broken("an object key that is not a string"));
            }
            let key = self.string(b)?;
            // a decoded key leaves `scratch` to the value's own escapes, and comes back after
            let text = self.text;
            let mut decoded = String::new();
            let key = match key {
                Str::Text(start, end) => &text[start..end],
                Str::Scratch => {
                    decoded = std::mem::take(&mut self.scratch);
                    decoded.as_str()
                }
            };
            self.space();
            if self.peek() != Some(b':') {
                return Err(b.broken("an object key without its :"));
            }
            self.pos += 1;
            let item = self.value(b)?;
            b.set(&mut dict, key, item)?;
            if !decoded.is_empty() {
                self.scratch = decoded;
            }
            self.space();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return b.end_dict(dict);
                }
                _ => return Err(b.broken("an object without its }")),
            }
        }
    }
}

/// Where a read string is: in the text (`start..end`), or decoded in the reader's scratch.
#[derive(Clone, Copy)]
enum Str {
    Text(usize, usize),
    Scratch,
}

impl Str {
    fn get<'a>(self, scratch: &'a str, text: &'a str) -> &'a str {
        match self {
            Str::Text(start, end) => &text[start..end],
            Str::Scratch => scratch,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The word-at-a-time count of digits agrees with the byte loop for runs of every length
    /// followed by every byte, at every offset.
    #[test]
    fn digits_at_counts_as_the_byte_loop() {
        for len in 0..20 {
            for after in 0..=255u8 {
                let mut text: Vec<u8> = (0..len).map(|k| b'0' + (k % 10) as u8).collect();
                text.push(after);
                text.extend_from_slice(b"12345678");
                for from in 0..=len {
                    let slow = text[from..]
                        .iter()
                        .take_while(|c| c.is_ascii_digit())
                        .count();
                    assert_eq!(digits_at(&text, from), slow, "{text:?} {from}");
                }
            }
        }
    }

    /// The word-at-a-time run ends where the byte loop ends, for a stop byte of every kind at
    /// every offset, after every kind of plain byte (ASCII, UTF-8, 0x7f, 0xff).
    #[test]
    fn plain_run_ends_where_the_byte_loop_ends() {
        let plain = [b'a', b' ', 0x7f, 0x80, 0xc3, 0xff, b'!', b'#', b'[', b'~'];
        let stops = [b'"', b'\\', 0x00, 0x01, 0x1f];
        for len in 0..40 {
            for i in 0..plain.len() {
                let mut text: Vec<u8> = (0..len).map(|k| plain[(i + k) % plain.len()]).collect();
                assert_eq!(plain_run(&text, 0), None, "{text:?}");
                for at in 0..len {
                    for &stop in &stops {
                        let saved = text[at];
                        text[at] = stop;
                        let slow = text.iter().position(|&c| STOPS[c as usize]);
                        for from in 0..=at {
                            assert_eq!(plain_run(&text, from), slow.map(|_| at), "{text:?} {from}");
                        }
                        text[at] = saved;
                    }
                }
            }
        }
    }
}
