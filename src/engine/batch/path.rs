//! Paths into a record (`group_by`, `event`, `order_by`): a JSON pointer (RFC 6901) when the
//! text starts with `/`, else a dotted path. Values are found in the record's text without
//! building it: each step borrows the raw JSON of the member it descends into.

use std::borrow::Cow;
use std::fmt;

use serde::de::{Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

use crate::engine::value::{py_repr, Value};

/// A parsed path: its segments, and the text the user gave (what messages name).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Path {
    pub text: String,
    pub segments: Vec<String>,
}

impl Path {
    /// `text` as the path of option `name`, or the message of why it is not one.
    pub fn parse(name: &str, text: &str) -> Result<Path, String> {
        if text.is_empty() {
            return Err(format!(
                "{name} is empty: pass a dotted path or a JSON pointer"
            ));
        }
        let quoted = py_repr(&Value::Str(text.to_owned()));
        let segments = if let Some(pointer) = text.strip_prefix('/') {
            pointer
                .split('/')
                .map(unescape)
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| {
                    format!(
                        "{name} {quoted} is not a valid JSON pointer: '~' must be followed by 0 \
                         or 1"
                    )
                })?
        } else {
            let segments: Vec<String> = text.split('.').map(str::to_owned).collect();
            if segments.iter().any(String::is_empty) {
                return Err(format!("{name} {quoted} has an empty segment"));
            }
            segments
        };
        Ok(Path {
            text: text.to_owned(),
            segments,
        })
    }
}

/// A pointer segment's `~1` and `~0` escapes (in that order, as RFC 6901 says).
fn unescape(segment: &str) -> Option<String> {
    let mut out = String::with_capacity(segment.len());
    let mut chars = segment.chars();
    while let Some(c) = chars.next() {
        if c == '~' {
            match chars.next() {
                Some('0') => out.push('~'),
                Some('1') => out.push('/'),
                _ => return None,
            }
        } else {
            out.push(c);
        }
    }
    Some(out)
}

/// The raw JSON of the value at `segments` under `raw` (the text of a valid JSON value), or
/// None when a step is missing.
pub fn lookup<'a>(raw: &'a RawValue, segments: &[String]) -> Option<&'a RawValue> {
    let mut here = raw;
    for segment in segments {
        here = step(here, segment)?;
    }
    Some(here)
}

/// One step down: a member of an object (the last of duplicates, as Python's json keeps), or
/// an element of an array when `segment` is an index (ASCII digits, no leading zero).
pub fn step<'a>(raw: &'a RawValue, segment: &str) -> Option<&'a RawValue> {
    let text = raw.get().trim_start();
    let mut de = serde_json::Deserializer::from_str(text);
    match text.as_bytes().first() {
        Some(b'{') => de.deserialize_map(Member(segment)).ok().flatten(),
        Some(b'[') => {
            let digits = !segment.is_empty() && segment.bytes().all(|b| b.is_ascii_digit());
            if !digits || (segment.len() > 1 && segment.starts_with('0')) {
                return None;
            }
            let index: usize = segment.parse().ok()?;
            de.deserialize_seq(Element(index)).ok().flatten()
        }
        _ => None,
    }
}

/// The top-level members of a record named by `keys` (each the first segment of a path), in
/// one pass; the rest is skipped. `Err` if the text is not JSON.
pub fn members<'a, const N: usize>(
    text: &'a str,
    keys: [Option<&str>; N],
) -> Result<[Option<&'a RawValue>; N], serde_json::Error> {
    let mut de = serde_json::Deserializer::from_str(text);
    let found = de.deserialize_map(Members { keys })?;
    de.end()?;
    Ok(found)
}

/// A key, borrowed when it has no escape.
struct Key<'a>(Cow<'a, str>);

impl<'de> serde::Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Key(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
                Ok(Key(Cow::Owned(v)))
            }
        }
        de.deserialize_str(KeyVisitor)
    }
}

struct Members<'k, const N: usize> {
    keys: [Option<&'k str>; N],
}

impl<'de, const N: usize> Visitor<'de> for Members<'_, N> {
    type Value = [Option<&'de RawValue>; N];
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut found = [None; N];
        while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
            if self.keys.contains(&Some(key.as_ref())) {
                let raw: &'de RawValue = map.next_value()?;
                for (slot, name) in found.iter_mut().zip(self.keys.iter()) {
                    if *name == Some(key.as_ref()) {
                        *slot = Some(raw);
                    }
                }
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(found)
    }
}

struct Member<'s>(&'s str);

impl<'de> Visitor<'de> for Member<'_> {
    type Value = Option<&'de RawValue>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut found = None;
        while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
            if key == self.0 {
                found = Some(map.next_value::<&'de RawValue>()?);
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(found)
    }
}

struct Element(usize);

impl<'de> Visitor<'de> for Element {
    type Value = Option<&'de RawValue>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut found = None;
        let mut i = 0;
        while found.is_none() {
            if i == self.0 {
                match seq.next_element::<&'de RawValue>()? {
                    Some(raw) => found = Some(raw),
                    None => return Ok(None),
                }
            } else if seq.next_element::<IgnoredAny>()?.is_none() {
                return Ok(None);
            }
            i += 1;
        }
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(found)
    }
}
