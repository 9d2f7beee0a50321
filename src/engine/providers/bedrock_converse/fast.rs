//! The typed fast path: a `contentBlockDelta` event of one text, reasoning text or tool input
//! string, for a block whose kind it matches, read with a borrowed serde parse straight from
//! the event's bytes, to the leaf [`Adapter::delta`] builds from the parsed tree. The payload's
//! keys no step reads (its `p` padding, a newer API's) are read as the generic parse reads
//! them, and dropped, as the generic path drops them. Any other event or shape (another event
//! type, a delta of two keys or of another kind, an empty text, a block the delta would flag,
//! a duplicate key, invalid text) makes [`fast_event`] answer None, and the event is read the
//! generic way; tests/engine/fastpath_bedrock.rs runs both on the corpus and on generated
//! events.

use serde::de::{Error as _, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

use super::Adapter;
use crate::engine::providers::common::{once, read_alike, FastLeaf, FastLeaves, Str};

/// The one string a delta carries, by the delta's key.
enum Delta<'a> {
    /// `{"text": text}`
    Text(Str<'a>),
    /// `{"reasoningContent": {"text": text}}`
    Reasoning(Str<'a>),
    /// `{"toolUse": {"input": text}}`
    ToolInput(Str<'a>),
}

/// A `contentBlockDelta` event's payload.
struct Payload<'a> {
    index: i64,
    delta: Delta<'a>,
    /// the keys no step reads (members at level 3 of the event), checked by [`read_alike`]
    extra: Vec<&'a RawValue>,
}

/// `{"contentBlockDelta": payload}`: the event, of one key.
struct Event<'a>(Payload<'a>);

/// An object of exactly one key, `KEY`, whose value is a str.
struct Only<'a, const KEY: char>(Str<'a>);

fn not_fast<E: serde::de::Error>() -> E {
    E::custom("not the fast shape")
}

impl<'a> Deserialize<'a> for Event<'a> {
    fn deserialize<D: Deserializer<'a>>(deserializer: D) -> Result<Self, D::Error> {
        struct Fields;
        impl<'a> Visitor<'a> for Fields {
            type Value = Event<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a bedrock event")
            }
            fn visit_map<M: MapAccess<'a>>(self, mut map: M) -> Result<Event<'a>, M::Error> {
                match map.next_key::<Str<'a>>()? {
                    Some(key) if &*key == "contentBlockDelta" => {}
                    // another event: no need to read on
                    _ => return Err(not_fast()),
                }
                let payload = map.next_value::<Payload<'a>>()?;
                if map.next_key::<Str<'a>>()?.is_some() {
                    return Err(not_fast()); // an event of two keys is the generic path's error
                }
                Ok(Event(payload))
            }
        }
        deserializer.deserialize_map(Fields)
    }
}

impl<'a> Deserialize<'a> for Payload<'a> {
    fn deserialize<D: Deserializer<'a>>(deserializer: D) -> Result<Self, D::Error> {
        struct Fields;
        impl<'a> Visitor<'a> for Fields {
            type Value = Payload<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a contentBlockDelta payload")
            }
            fn visit_map<M: MapAccess<'a>>(self, mut map: M) -> Result<Payload<'a>, M::Error> {
                let (mut index, mut delta) = (None, None);
                let mut extra = Vec::new();
                while let Some(key) = map.next_key::<Str<'a>>()? {
                    match &*key {
                        "contentBlockIndex" => once(&mut index, map.next_value::<i64>()?)?,
                        "delta" => once(&mut delta, map.next_value::<Delta<'a>>()?)?,
                        _ => extra.push(map.next_value::<&'a RawValue>()?),
                    }
                }
                Ok(Payload {
                    index: index.ok_or_else(|| M::Error::missing_field("contentBlockIndex"))?,
                    delta: delta.ok_or_else(|| M::Error::missing_field("delta"))?,
                    extra,
                })
            }
        }
        deserializer.deserialize_map(Fields)
    }
}

impl<'a> Deserialize<'a> for Delta<'a> {
    fn deserialize<D: Deserializer<'a>>(deserializer: D) -> Result<Self, D::Error> {
        struct Fields;
        impl<'a> Visitor<'a> for Fields {
            type Value = Delta<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a contentBlockDelta delta")
            }
            fn visit_map<M: MapAccess<'a>>(self, mut map: M) -> Result<Delta<'a>, M::Error> {
                let key = map.next_key::<Str<'a>>()?.ok_or_else(not_fast)?;
                let delta = match &*key {
                    "text" => Delta::Text(map.next_value()?),
                    "reasoningContent" => Delta::Reasoning(map.next_value::<Only<'t'>>()?.0),
                    "toolUse" => Delta::ToolInput(map.next_value::<Only<'i'>>()?.0),
                    _ => return Err(not_fast()),
                };
                if map.next_key::<Str<'a>>()?.is_some() {
                    return Err(not_fast());
                }
                Ok(delta)
            }
        }
        deserializer.deserialize_map(Fields)
    }
}

impl<'a, const KEY: char> Deserialize<'a> for Only<'a, KEY> {
    fn deserialize<D: Deserializer<'a>>(deserializer: D) -> Result<Self, D::Error> {
        struct Fields<const KEY: char>;
        impl<'a, const KEY: char> Visitor<'a> for Fields<KEY> {
            type Value = Only<'a, KEY>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object of one string")
            }
            fn visit_map<M: MapAccess<'a>>(self, mut map: M) -> Result<Only<'a, KEY>, M::Error> {
                let name = if KEY == 't' { "text" } else { "input" };
                match map.next_key::<Str<'a>>()? {
                    Some(key) if &*key == name => {}
                    _ => return Err(not_fast()),
                }
                let text = map.next_value::<Str<'a>>()?;
                if map.next_key::<Str<'a>>()?.is_some() {
                    return Err(not_fast());
                }
                Ok(Only(text))
            }
        }
        deserializer.deserialize_map(Fields::<KEY>)
    }
}

pub(super) fn fast_event<'a>(adapter: &mut Adapter, raw: &'a [u8]) -> Option<FastLeaves<'a>> {
    // one UTF-8 check of the whole event, not one per string (invalid text: generic)
    let text = std::str::from_utf8(raw).ok()?;
    let Event(payload) = serde_json::from_str::<Event<'a>>(text).ok()?;
    if !read_alike(&payload.extra, 3) {
        return None;
    }
    let index = payload.index;
    let (kind, text) = match payload.delta {
        Delta::Text(text) => ("text", text.0),
        Delta::Reasoning(text) => ("reasoningContent", text.0),
        Delta::ToolInput(text) => ("toolUse", text.0),
    };
    // an empty text adds no part (the generic path reads it), and the block takes the delta
    // without an anomaly
    if text.is_empty() || !adapter.takes_quietly(index, kind) {
        return None;
    }
    adapter.open_for(index, kind);
    let leaf = match kind {
        "text" => FastLeaf::Text {
            text,
            reasoning: false,
            index: Some(index),
        },
        "reasoningContent" => FastLeaf::Text {
            text,
            reasoning: true,
            index: Some(adapter.reasoning_index(index, "signed")),
        },
        _ => FastLeaf::Arguments {
            arguments: text,
            index,
        },
    };
    Some(vec![(0, leaf)])
}
