//! JSON kept as its text: a value the message keeps whole and no rule looks into (a logprobs
//! entry), held as the text it arrived in instead of a tree of [`Value`]s.
//!
//! A tree costs an allocation per container, key and string, and is walked again to build the
//! caller's objects and to free it: for a stream with logprobs that was most of the work (about
//! forty allocations per entry). Kept as text, an entry is one copy of its bytes; whoever needs
//! its objects reads the text once, with [`read`], straight into them ([`Build`]: the engine's
//! own values here, Python objects in the binding).
//!
//! Only text that reads as [`crate::engine::events::parse`] would read it is kept
//! ([`JsonText::accept`]); anything else is read into values as before, so both give the same
//! result, and the same error.

use std::sync::{Arc, OnceLock};

use crate::engine::value::{Map, Value};

/// The longest number token kept as text (a longer one, or an exponent of three digits, may
/// overflow a float: the generic reading's error; such text is read into values).
const MAX_NUMBER: usize = 100;

/// One JSON value as its text (valid JSON, checked by [`JsonText::accept`]), and its tree once
/// something asked for it ([`JsonText::value`]).
#[derive(Debug)]
pub struct JsonText {
    text: Box<str>,
    tree: OnceLock<Value>,
}

impl JsonText {
    /// `text` (one valid JSON value: serde_json read it) kept as text, if reading it with
    /// [`read`] gives what the generic reading gives and no error: no `\u` escape of a
    /// surrogate (a lone one is an error there; pairs are rare), no number token longer than
    /// [`MAX_NUMBER`] or with an exponent of three digits or more (an overflow is an error
    /// there), and at most `room` levels of nesting (the rest of the event's depth limit).
    /// None otherwise: the caller reads it into values.
    pub fn accept(text: &str, room: usize) -> Option<JsonText> {
        acceptable(text.as_bytes(), room).then(|| JsonText {
            text: text.into(),
            tree: OnceLock::new(),
        })
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    /// The value the text holds, read once (the engine's rules and tests look into it; the
    /// binding reads the text itself).
    pub fn value(&self) -> &Value {
        self.tree.get_or_init(|| {
            // accepted text always reads; Null would only stand for a broken invariant
            read(&self.text, &mut ValueBuilder).unwrap_or(Value::Null)
        })
    }
}

fn acceptable(b: &[u8], room: usize) -> bool {
    let mut depth = 0usize;
    let mut pos = 0;
    while pos < b.len() {
        match b[pos] {
            b'"' => {
                pos += 1;
                loop {
                    let Some(at) = memchr::memchr2(b'"', b'\\', &b[pos..]) else {
                        return false;
                    };
                    pos += at;
                    if b[pos] == b'"' {
                        pos += 1;
                        break;
                    }
                    // an escape: `\uD800`-`\uDFFF` is a surrogate
                    if b.get(pos + 1) == Some(&b'u')
                        && matches!(b.get(pos + 2), Some(b'd' | b'D'))
                        && matches!(
                            b.get(pos + 3),
                            Some(b'8'..=b'9' | b'a'..=b'f' | b'A'..=b'F')
                        )
                    {
                        return false;
                    }
                    pos += 2;
                }
            }
            b'[' | b'{' => {
                depth += 1;
                if depth > room {
                    return false;
                }
                pos += 1;
            }
            b']' | b'}' => {
                depth = depth.saturating_sub(1);
                pos += 1;
            }
            b'-' | b'0'..=b'9' => {
                let start = pos;
                let mut exponent = None;
                while pos < b.len() {
                    match b[pos] {
                        b'e' | b'E' => exponent = Some(pos + 1),
                        b'-' | b'+' | b'.' | b'0'..=b'9' => {}
                        _ => break,
                    }
                    pos += 1;
                }
                if pos - start > MAX_NUMBER {
                    return false;
                }
                if let Some(at) = exponent {
                    let digits = b[at..pos].iter().filter(|c| c.is_ascii_digit()).count();
                    if digits > 2 {
                        return false;
                    }
                }
            }
            _ => pos += 1,
        }
    }
    true
}

// ---------------------------------------------------------------------------------------------
// Reading kept text

/// What [`read`] builds a value with: the engine's values ([`ValueBuilder`]) or a binding's
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
        let mut list = self.list()?;
        for &item in items {
            let item = self.int(item)?;
            self.push(&mut list, item)?;
        }
        self.end_list(list)
    }
    /// The text is not what [`JsonText::accept`] accepted (never, unless a bug).
    fn broken(&mut self, detail: &'static str) -> Self::Err;
}

/// The value of `text`, an accepted [`JsonText`]'s, built by `builder`: numbers and strings as
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
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
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

    /// The number token at `pos`, and whether it is written as an integer.
    fn number_token(&mut self) -> (&str, bool) {
        let start = self.pos;
        let mut is_int = true;
        while let Some(c) = self.peek() {
            match c {
                b'.' | b'e' | b'E' => is_int = false,
                b'-' | b'+' | b'0'..=b'9' => {}
                _ => break,
            }
            self.pos += 1;
        }
        (&self.text[start..self.pos], is_int)
    }

    /// The string at `pos` (its opening quote): where it lies, or decoded into `scratch`.
    fn string<B: Build>(&mut self, b: &mut B) -> Result<Str, B::Err> {
        let bytes = self.text.as_bytes();
        let start = self.pos + 1;
        let mut pos = start;
        let mut escaped = false;
        loop {
            let Some(at) = memchr::memchr2(b'"', b'\\', &bytes[pos..]) else {
                return Err(b.broken("an unterminated string"));
            };
            let at = pos + at;
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
        let body = bytes.get(start + 1..)?;
        let len = body
            .iter()
            .take(256)
            .position(|c| !matches!(c, b'0'..=b'9' | b'-' | b',' | b' ' | b'\n' | b'\r' | b'\t'))?;
        if body[len] != b']' {
            return None;
        }
        let inner = &self.text[start + 1..start + 1 + len];
        self.ints.clear();
        if !inner.trim().is_empty() {
            for item in inner.split(',') {
                self.ints.push(item.trim().parse::<i64>().ok()?);
            }
        }
        self.pos = start + len + 2;
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

// ---------------------------------------------------------------------------------------------
// The engine's values

/// [`Build`] for the engine's [`Value`]s ([`JsonText::value`]).
pub struct ValueBuilder;

impl Build for ValueBuilder {
    type Out = Value;
    type List = Vec<Value>;
    type Dict = Map;
    type Err = &'static str;
    fn null(&mut self) -> Result<Value, &'static str> {
        Ok(Value::Null)
    }
    fn bool(&mut self, value: bool) -> Result<Value, &'static str> {
        Ok(Value::Bool(value))
    }
    fn int(&mut self, value: i64) -> Result<Value, &'static str> {
        Ok(Value::Int(value))
    }
    fn float(&mut self, value: f64) -> Result<Value, &'static str> {
        Ok(Value::Float(value))
    }
    fn str(&mut self, value: &str) -> Result<Value, &'static str> {
        Ok(Value::Str(value.to_owned()))
    }
    fn list(&mut self) -> Result<Vec<Value>, &'static str> {
        Ok(Vec::new())
    }
    fn push(&mut self, list: &mut Vec<Value>, item: Value) -> Result<(), &'static str> {
        list.push(item);
        Ok(())
    }
    fn end_list(&mut self, list: Vec<Value>) -> Result<Value, &'static str> {
        Ok(Value::List(Arc::new(list)))
    }
    fn dict(&mut self) -> Result<Map, &'static str> {
        Ok(Map::default())
    }
    fn set(&mut self, dict: &mut Map, key: &str, item: Value) -> Result<(), &'static str> {
        dict.insert(key.to_owned(), item);
        Ok(())
    }
    fn end_dict(&mut self, dict: Map) -> Result<Value, &'static str> {
        Ok(Value::Dict(Arc::new(dict)))
    }
    fn broken(&mut self, detail: &'static str) -> &'static str {
        detail
    }
}
