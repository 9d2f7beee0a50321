//! The engine's own JSON value model, and its [`Host`]: what `cargo test` merges, what Rust
//! callers use without Python, and what the aggregator and the batch engine read provider
//! events from bytes into.

use std::borrow::Cow;
use std::hash::{Hash, Hasher};

use indexmap::IndexMap;
use std::sync::{Arc, OnceLock};

use crate::engine::error::EngineError;
use crate::engine::host::{Class, Host, Kind};
use crate::engine::json_text::{acceptable, read, Build};
use crate::engine::printable::is_printable;

/// The map of a JSON object: keys keep their order; hashed with foldhash, seeded per process
/// (provider events are mostly short keys, where SipHash cost more than the parse itself).
pub type Map = IndexMap<String, Value, foldhash::fast::RandomState>;

/// A JSON value; object keys keep their order. Containers are shared (`Arc`), so a clone is
/// O(1) however deep the value: the merge hands values around, it never copies them.
#[derive(Clone, Debug)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    List(Arc<Vec<Value>>),
    Dict(Arc<Map>),
    /// A value kept as its JSON text (a logprobs entry: see [`JsonText`]); it reads as the
    /// value the text holds ([`Value::resolved`]) wherever a rule looks into it.
    Json(Arc<JsonText>),
}

fn int_of(value: &Value) -> i64 {
    match value {
        Value::Int(i) => *i,
        Value::Bool(b) => i64::from(*b),
        _ => 0,
    }
}

impl Value {
    /// The value itself, or the one its kept text holds (read once).
    pub fn resolved(&self) -> &Value {
        match self {
            Value::Json(text) => text.value(),
            value => value,
        }
    }

    /// Numeric value for Python-style equality across bool / int / float.
    fn number(&self) -> Option<f64> {
        match self {
            Value::Bool(b) => Some(f64::from(u8::from(*b))),
            Value::Int(i) => Some(*i as f64),
            Value::Float(f) => Some(*f),
            _ => None,
        }
    }
}

/// Python's `==`: `1 == 1.0 == True`, NaN is unequal to itself.
impl PartialEq for Value {
    fn eq(&self, other: &Value) -> bool {
        if matches!(self, Value::Json(_)) || matches!(other, Value::Json(_)) {
            return self.resolved() == other.resolved();
        }
        match (self, other) {
            (Value::Null, Value::Null) => true,
            (Value::Int(a), Value::Int(b)) => a == b,
            (Value::Str(a), Value::Str(b)) => a == b,
            (Value::List(a), Value::List(b)) => a == b,
            (Value::Dict(a), Value::Dict(b)) => {
                a.len() == b.len() && a.iter().all(|(k, v)| b.get(k) == Some(v))
            }
            _ => match (self.number(), other.number()) {
                (Some(a), Some(b)) => a == b,
                _ => false,
            },
        }
    }
}

impl From<&str> for Value {
    fn from(text: &str) -> Self {
        Value::Str(text.to_owned())
    }
}

impl From<i64> for Value {
    fn from(value: i64) -> Self {
        Value::Int(value)
    }
}

/// Errors of the native host.
#[derive(Clone, Debug, PartialEq)]
pub enum NativeError {
    Engine(EngineError<Value>),
    /// An operation only Python objects support (subclasses, models); never reached with
    /// JSON values.
    Unsupported(&'static str),
    /// Two ints whose sum is outside 64 bits (usage counts): Python ints have no such limit,
    /// so the aggregator reports it as an event error on both backends.
    IntOverflow,
}

/// The [`Host`] for [`Value`]s.
#[derive(Clone, Copy, Debug, Default)]
pub struct NativeHost;

fn dict(value: &Value) -> Result<&Map, NativeError> {
    match value.resolved() {
        Value::Dict(map) => Ok(map),
        _ => Err(NativeError::Unsupported("a dict operation on a non-dict")),
    }
}

impl Host for NativeHost {
    type Obj = Value;
    type Err = NativeError;

    fn error(&self, err: EngineError<Value>) -> NativeError {
        NativeError::Engine(err)
    }
    fn model_rule_swallows(&self, err: &NativeError) -> bool {
        !matches!(
            err,
            NativeError::Engine(EngineError::DepthLimit { .. } | EngineError::Cycle { .. })
        )
    }
    fn class(&self, obj: &Value) -> Class {
        Class::exact(match obj.resolved() {
            Value::Null => Kind::Null,
            Value::Bool(_) => Kind::Bool,
            Value::Int(_) => Kind::Int,
            Value::Float(_) => Kind::Float,
            Value::Str(_) => Kind::Str,
            Value::List(_) => Kind::List,
            Value::Dict(_) | Value::Json(_) => Kind::Dict,
        })
    }
    fn type_name(&self, obj: &Value) -> String {
        match obj.resolved() {
            Value::Null => "NoneType",
            Value::Bool(_) => "bool",
            Value::Int(_) => "int",
            Value::Float(_) => "float",
            Value::Str(_) => "str",
            Value::List(_) => "list",
            Value::Dict(_) | Value::Json(_) => "dict",
        }
        .to_owned()
    }
    fn identity(&self, _obj: &Value) -> Option<usize> {
        None // owned values cannot contain themselves
    }
    fn none(&self) -> Value {
        Value::Null
    }
    fn str_obj(&self, text: &str) -> Value {
        Value::Str(text.to_owned())
    }
    fn str_text<'a>(&self, obj: &'a Value) -> Option<Cow<'a, str>> {
        match obj.resolved() {
            Value::Str(s) => Some(Cow::Borrowed(s)),
            _ => None,
        }
    }
    fn int_i64(&self, obj: &Value) -> Option<i64> {
        match obj.resolved() {
            Value::Int(i) => Some(*i),
            _ => None,
        }
    }
    fn add(&self, a: &Value, b: &Value) -> Result<Value, NativeError> {
        let (a, b) = (a.resolved(), b.resolved());
        match (a, b) {
            (Value::Str(x), Value::Str(y)) => Ok(Value::Str(format!("{x}{y}"))),
            (Value::List(x), Value::List(y)) => Ok(Value::List(Arc::new(
                x.iter().chain(y.iter()).cloned().collect(),
            ))),
            // numbers (usage totals and sums): bool and int add as ints, as in Python
            (Value::Int(_) | Value::Bool(_), Value::Int(_) | Value::Bool(_)) => {
                let (x, y) = (int_of(a), int_of(b));
                x.checked_add(y)
                    .map(Value::Int)
                    .ok_or(NativeError::IntOverflow)
            }
            _ => match (a.number(), b.number()) {
                (Some(x), Some(y)) => Ok(Value::Float(x + y)),
                _ => Err(NativeError::Unsupported(
                    "+ on values other than str, list or numbers",
                )),
            },
        }
    }
    fn try_add(&self, _a: &Value, _b: &Value) -> Result<Option<Value>, NativeError> {
        Ok(None)
    }
    fn eq(&self, a: &Value, b: &Value) -> Result<bool, NativeError> {
        Ok(a == b)
    }
    fn truthy(&self, obj: &Value) -> Result<bool, NativeError> {
        Ok(match obj.resolved() {
            Value::Null => false,
            Value::Bool(b) => *b,
            Value::Int(i) => *i != 0,
            Value::Float(f) => *f != 0.0,
            Value::Str(s) => !s.is_empty(),
            Value::List(l) => !l.is_empty(),
            Value::Dict(d) => !d.is_empty(),
            Value::Json(_) => true,
        })
    }
    fn has_attr(&self, _obj: &Value, _name: &str) -> Result<bool, NativeError> {
        // JSON values have no models, and the same-type `+` rule never applies to them.
        Ok(false)
    }
    fn same_type(&self, a: &Value, b: &Value) -> bool {
        std::mem::discriminant(a.resolved()) == std::mem::discriminant(b.resolved())
    }
    fn repr(&self, obj: &Value) -> Result<Value, NativeError> {
        Ok(Value::Str(py_repr(obj)))
    }
    fn format(&self, obj: &Value) -> Result<Value, NativeError> {
        Ok(match obj.resolved() {
            Value::Str(_) => obj.resolved().clone(),
            other => Value::Str(py_repr(other)),
        })
    }
    fn bool_obj(&self, value: bool) -> Value {
        Value::Bool(value)
    }
    fn int_obj(&self, value: i64) -> Value {
        Value::Int(value)
    }
    fn clone_err(&self, err: &NativeError) -> NativeError {
        err.clone()
    }
    fn iterate(&self, obj: &Value) -> Result<Vec<Value>, NativeError> {
        match obj.resolved() {
            Value::List(items) => Ok(items.as_ref().clone()),
            Value::Dict(map) => Ok(map.keys().map(|k| Value::Str(k.clone())).collect()),
            Value::Str(s) => Ok(s.chars().map(|c| Value::Str(c.to_string())).collect()),
            _ => Err(NativeError::Unsupported("iteration over a scalar")),
        }
    }
    fn call_method(
        &self,
        obj: &Value,
        name: &str,
        _args: Vec<Value>,
    ) -> Result<Value, NativeError> {
        match (obj.resolved(), name) {
            (Value::Dict(_), "items") => Ok(obj.resolved().clone()),
            _ => Err(NativeError::Unsupported("a method call")),
        }
    }
    fn get_item_str(&self, obj: &Value, key: &str) -> Result<Value, NativeError> {
        dict(obj)?
            .get(key)
            .cloned()
            .ok_or(NativeError::Unsupported("a missing key"))
    }
    fn join(&self, pieces: &[Value]) -> Result<Value, NativeError> {
        let mut out = String::new();
        for piece in pieces {
            match piece.resolved() {
                Value::Str(s) => out.push_str(s),
                _ => {
                    return Err(NativeError::Unsupported(
                        "join of a piece that is not a str",
                    ))
                }
            }
        }
        Ok(Value::Str(out))
    }
    fn list_items(&self, list: &Value) -> Result<Vec<Value>, NativeError> {
        match list.resolved() {
            Value::List(items) => Ok(items.as_ref().clone()),
            _ => Err(NativeError::Unsupported("list items of a non-list")),
        }
    }
    fn new_list(&self, items: Vec<Value>) -> Result<Value, NativeError> {
        Ok(Value::List(Arc::new(items)))
    }
    fn dict_items(&self, value: &Value) -> Result<crate::engine::host::Pairs<Value>, NativeError> {
        Ok(dict(value)?
            .iter()
            .map(|(k, v)| (Value::Str(k.clone()), v.clone()))
            .collect())
    }
    fn dict_get_str(&self, value: &Value, key: &str) -> Result<Option<Value>, NativeError> {
        Ok(dict(value)?.get(key).cloned())
    }
    fn new_dict(&self, pairs: Vec<(Value, Value)>) -> Result<Value, NativeError> {
        let mut map = Map::with_capacity_and_hasher(pairs.len(), Default::default());
        for (key, value) in pairs {
            // the key's own String where it has one (no copy: a message's keys are made here)
            let key = match key {
                Value::Str(k) => k,
                other => match other.resolved() {
                    Value::Str(k) => k.clone(),
                    _ => return Err(NativeError::Unsupported("a dict key that is not a string")),
                },
            };
            map.insert(key, value);
        }
        Ok(Value::Dict(Arc::new(map)))
    }
    fn dict_of(&self, value: &Value) -> Result<Value, NativeError> {
        Ok(Value::Dict(Arc::new(dict(value)?.clone())))
    }
    fn key_hash(&self, key: &Value) -> Result<i64, NativeError> {
        // foldhash with its fixed seed, as the maps' own hasher: as predictable as SipHash with
        // zero keys was, and a few times cheaper on short keys
        let mut hasher =
            std::hash::BuildHasher::build_hasher(&foldhash::fast::FixedState::default());
        let key = key.resolved();
        match key {
            Value::Str(s) => s.hash(&mut hasher),
            // equal numbers hash alike, as Python's 1 == 1.0 == True do (Value's == agrees)
            _ => match key.number() {
                Some(n) if n.fract() == 0.0 && n.abs() < 9.0e15 => (n as i64).hash(&mut hasher),
                Some(n) => n.to_bits().hash(&mut hasher),
                None => return Err(NativeError::Unsupported("a dict key that is a container")),
            },
        }
        Ok(hasher.finish() as i64)
    }
    fn call_copy(&self, mapping: &Value) -> Result<Value, NativeError> {
        self.dict_of(mapping)
    }
    fn lookup(&self, mapping: &Value, key: &Value) -> Result<Option<Value>, NativeError> {
        match key.resolved() {
            Value::Str(k) => Ok(dict(mapping)?.get(k).cloned()),
            _ => Ok(None),
        }
    }
    fn get_or_none(&self, _m: &Value, _k: &Value) -> Result<Value, NativeError> {
        Err(NativeError::Unsupported("models"))
    }
    fn set_item(&self, mapping: &mut Value, key: Value, value: Value) -> Result<(), NativeError> {
        if let Value::Json(text) = mapping {
            *mapping = text.value().clone();
        }
        match (mapping, key.resolved().clone()) {
            (Value::Dict(map), Value::Str(k)) => {
                Arc::make_mut(map).insert(k, value);
                Ok(())
            }
            _ => Err(NativeError::Unsupported("a dict key that is not a string")),
        }
    }
    fn model_dump(&self, _obj: &Value) -> Result<Value, NativeError> {
        Err(NativeError::Unsupported("models"))
    }
    fn keys_union(&self, _a: &Value, _b: &Value) -> Result<Vec<Value>, NativeError> {
        Err(NativeError::Unsupported("models"))
    }
    fn construct_like(&self, _like: &Value, _f: Vec<(Value, Value)>) -> Result<Value, NativeError> {
        Err(NativeError::Unsupported("models"))
    }
}

/// Python's `repr(float)` (shortest round-trip digits; exponent form below 1e-4 and from
/// 1e16 on).
pub fn py_float(f: f64) -> String {
    if f.is_nan() {
        return "nan".to_owned();
    }
    if f.is_infinite() {
        return (if f > 0.0 { "inf" } else { "-inf" }).to_owned();
    }
    let mut out = Vec::with_capacity(24);
    push_py_float(&mut out, f);
    // only ASCII digits, signs, points and `e` were written
    String::from_utf8(out).unwrap_or_default()
}

/// `float.__repr__` of a finite `number` appended to `out` (what `json.dumps` writes too):
/// the shortest digits that read back as the same float ([`shortest`], Python's even digit
/// at a tie), without an exponent from 1e-4 to 1e16 and `.0` after an integral value; else
/// `1.5e-05`, `1e+16`.
pub(crate) fn push_py_float(out: &mut Vec<u8>, number: f64) {
    if number.is_sign_negative() {
        out.push(b'-');
    }
    let number = number.abs();
    if number == 0.0 {
        out.extend_from_slice(b"0.0");
        return;
    }
    let (kept, count, exp) = shortest(number);
    let even = even_of_a_tie(number, &kept[..count], exp);
    let digits: &[u8] = even.as_deref().unwrap_or(&kept[..count]);
    let digit = |i: usize| digits.get(i).copied().unwrap_or(b'0');
    if (-4..16).contains(&exp) {
        if exp >= 0 {
            let whole = exp as usize + 1;
            out.extend((0..whole).map(digit));
            out.push(b'.');
            if digits.len() > whole {
                out.extend_from_slice(&digits[whole..]);
            } else {
                out.push(b'0');
            }
        } else {
            out.extend_from_slice(b"0.");
            out.extend(std::iter::repeat_n(b'0', (-exp - 1) as usize));
            out.extend_from_slice(digits);
        }
    } else {
        out.push(digit(0));
        if digits.len() > 1 {
            out.push(b'.');
            out.extend_from_slice(&digits[1..]);
        }
        out.push(b'e');
        out.push(if exp < 0 { b'-' } else { b'+' });
        let power = exp.unsigned_abs();
        if power < 10 {
            out.push(b'0');
        }
        out.extend_from_slice(power.to_string().as_bytes());
    }
}

/// The shortest digits that read back as `number` (finite, above 0), without leading or
/// trailing zeros, their count, and the power of ten of the first: `0.00125` is `125`, 3,
/// -3. From zmij (serde_json's float writer, five times `{:e}`'s speed), whose text
/// (`1.25e-7`, `0.00125`, `1e+16`) is read back into those parts.
pub(crate) fn shortest(number: f64) -> ([u8; 17], usize, i32) {
    let mut buffer = zmij::Buffer::new();
    let text = buffer.format_finite(number).as_bytes();
    let (mantissa, exp) = match memchr::memchr(b'e', text) {
        Some(at) => (&text[..at], &text[at + 1..]),
        None => (text, &b"0"[..]),
    };
    let exp: i32 = std::str::from_utf8(exp.strip_prefix(b"+").unwrap_or(exp))
        .ok()
        .and_then(|e| e.parse().ok())
        .unwrap_or(0);
    let point = memchr::memchr(b'.', mantissa).unwrap_or(mantissa.len());
    let mut kept = [0u8; 17];
    let (mut count, mut first) = (0, None);
    for (at, &byte) in mantissa.iter().enumerate() {
        if !byte.is_ascii_digit() || (first.is_none() && byte == b'0') {
            continue;
        }
        // the first significant digit's place from the point
        let place = if at < point { at as i32 } else { at as i32 - 1 };
        first.get_or_insert(place);
        if count < kept.len() {
            kept[count] = byte;
            count += 1;
        }
    }
    while count > 1 && kept[count - 1] == b'0' {
        count -= 1;
    }
    (kept, count, point as i32 - 1 - first.unwrap_or(0) + exp)
}

/// Python's digits where Rust's differ: when `number` lies exactly halfway between two
/// shortest candidates (`digits`, Rust's pick, and its neighbour in the last digit), Python
/// takes the one whose last digit is even (`1446596859160128.25` is `...128.2` there, `.3` in
/// Rust). Only a full-precision value (15 digits or more) whose exact value has one digit
/// more, a 5, can be such a tie: its exact digits are those of `m * 5^k` for `m / 2^k`.
pub(crate) fn even_of_a_tie(number: f64, digits: &[u8], exp: i32) -> Option<Vec<u8>> {
    let n = digits.len();
    if !(15..=17).contains(&n) || digits[n - 1] % 2 == 0 {
        return None;
    }
    let bits = number.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i32;
    let fraction = bits & ((1 << 52) - 1);
    let (mut m, mut e2) = if biased == 0 {
        (fraction, -1074)
    } else {
        (fraction | 1 << 52, biased - 1075)
    };
    if m == 0 {
        return None;
    }
    let zeros = m.trailing_zeros();
    m >>= zeros;
    e2 += zeros as i32;
    // an integer has no tie; 5^28 alone has more digits than a tie's 18
    if !(-27..0).contains(&e2) {
        return None;
    }
    let exact = u128::from(m).checked_mul(5u128.checked_pow(e2.unsigned_abs())?)?;
    let floor = 10u128.pow(n as u32);
    if exact < floor || exact >= floor * 10 {
        return None; // not n + 1 digits: no tie at the n-th
    }
    // `exact` ends in 5 (m is odd): halfway between low and low + 1
    let low = exact / 10;
    let even = if low % 2 == 0 { low } else { low + 1 };
    let even = even.to_string().into_bytes();
    if even.len() != n || even == digits {
        return None;
    }
    // the even candidate must read back as the same float (it does whenever Rust's pick
    // does, but at a power of two, where the rounding interval is not symmetric)
    let text = format!(
        "{}.{}e{exp}",
        char::from(even[0]),
        std::str::from_utf8(&even[1..]).ok()?
    );
    (text.parse::<f64>().ok()? == number).then_some(even)
}

/// Python's `repr()` of a JSON value.
pub fn py_repr(value: &Value) -> String {
    match value.resolved() {
        Value::Null => "None".to_owned(),
        Value::Bool(true) => "True".to_owned(),
        Value::Bool(false) => "False".to_owned(),
        Value::Int(i) => i.to_string(),
        Value::Float(f) => py_float(*f),
        Value::Str(s) => {
            let quote = if s.contains('\'') && !s.contains('"') {
                '"'
            } else {
                '\''
            };
            let mut out = String::with_capacity(s.len() + 2);
            out.push(quote);
            for c in s.chars() {
                match c {
                    '\\' => out.push_str("\\\\"),
                    '\n' => out.push_str("\\n"),
                    '\r' => out.push_str("\\r"),
                    '\t' => out.push_str("\\t"),
                    c if c == quote => {
                        out.push('\\');
                        out.push(c);
                    }
                    // what `repr` escapes: every character `str.isprintable` refuses
                    c if !is_printable(c) => {
                        let code = c as u32;
                        if code < 0x100 {
                            out.push_str(&format!("\\x{code:02x}"));
                        } else if code < 0x10000 {
                            out.push_str(&format!("\\u{code:04x}"));
                        } else {
                            out.push_str(&format!("\\U{code:08x}"));
                        }
                    }
                    c => out.push(c),
                }
            }
            out.push(quote);
            out
        }
        Value::List(items) => {
            let inner: Vec<String> = items.iter().map(py_repr).collect();
            format!("[{}]", inner.join(", "))
        }
        Value::Dict(map) => {
            let inner: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{}: {}", py_repr(&Value::Str(k.clone())), py_repr(v)))
                .collect();
            format!("{{{}}}", inner.join(", "))
        }
        Value::Json(text) => text.text().to_owned(), // never: resolved
    }
}

// ---------------------------------------------------------------------------------------------
// JSON kept as its text (`json_text` reads it): the value, and the builder of the engine's values

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
    /// `json_text`'s longest or with an exponent of three digits or more (an overflow is an
    /// error there), and at most `room` levels of nesting (the rest of the event's depth limit).
    /// None otherwise: the caller reads it into values.
    pub fn accept(text: &str, room: usize) -> Option<JsonText> {
        acceptable(text.as_bytes(), room).then(|| JsonText::kept(text))
    }

    /// `text` as [`scan`] found it: one whole value it keeps (see [`JsonText::accept`]).
    pub(crate) fn kept(text: &str) -> JsonText {
        JsonText {
            text: text.into(),
            tree: OnceLock::new(),
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The digits `{:e}` gives (Rust's shortest, as `py_float` took them before zmij).
    fn shortest_by_fmt(number: f64) -> (Vec<u8>, i32) {
        let sci = format!("{number:e}");
        let (mantissa, exp) = sci.split_once('e').unwrap();
        let digits = mantissa.bytes().filter(u8::is_ascii_digit).collect();
        (digits, exp.parse().unwrap())
    }

    #[test]
    fn shortest_digits_are_those_of_rust_s_own_formatting() {
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut numbers = vec![
            1e16,
            1e15,
            1e-4,
            1e-5,
            0.1,
            100.0,
            5e-324,
            f64::MAX,
            1.5e300,
        ];
        // 1446596859160128.25, a tie: Python and zmij take the even digit
        numbers.push(5786387436640513.0 / 4.0);
        for _ in 0..1_000_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let number = f64::from_bits(state >> 1); // every positive pattern
            if number.is_finite() && number > 0.0 {
                numbers.push(number);
            }
            numbers.push(((state >> 11) as f64) / (1u64 << 53) as f64 * 9.0);
        }
        for number in numbers {
            let (kept, count, exp) = shortest(number);
            let (mut digits, fmt_exp) = shortest_by_fmt(number);
            assert_eq!(exp, fmt_exp, "{number:e}");
            if let Some(even) = crate::engine::value::even_of_a_tie(number, &digits, fmt_exp) {
                digits = even;
            }
            let ours = crate::engine::value::even_of_a_tie(number, &kept[..count], exp)
                .unwrap_or_else(|| kept[..count].to_vec());
            assert_eq!(ours, digits, "{number:e}");
        }
    }
}
