//! The typed fast path: a `content_block_delta` of a text, thinking, signature or input JSON
//! delta for a block already started with the delta's kind, read with a borrowed serde parse
//! straight from the event's bytes, to the leaf [`Adapter::delta`] builds from the parsed
//! tree. Keys no step reads (the generic path keeps none of them) are read as the generic
//! parse reads them, and dropped. Any other event or shape (another type, a block not
//! started or of another kind, a duplicate key, invalid text) makes [`fast_event`] answer
//! None, and the event is read the generic way; tests/engine/fastpath_anthropic.rs runs
//! both on the corpus and on generated events.

use std::borrow::Cow;

use serde::de::{Error as _, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

use super::parts::string_delta_part;
use super::{delta_kind, Adapter};
use crate::engine::providers::common::{
    list_value, once, read_alike, FastLeaf, FastLeaves, Obj, Object, Str,
};

struct Event<'a> {
    type_: Str<'a>,
    index: i64,
    delta: Object<Delta<'a>>,
    /// the keys no step reads (level 2 of the event), checked by [`read_alike`]
    extra: Vec<&'a RawValue>,
}

#[derive(Default)]
struct Delta<'a> {
    type_: Option<Str<'a>>,
    text: Option<Str<'a>>,
    thinking: Option<Str<'a>>,
    signature: Option<Str<'a>>,
    partial_json: Option<Str<'a>>,
    /// the keys no step reads (level 3 of the event), checked by [`read_alike`]
    extra: Vec<&'a RawValue>,
}

impl<'a> Deserialize<'a> for Event<'a> {
    fn deserialize<D: Deserializer<'a>>(deserializer: D) -> Result<Self, D::Error> {
        struct Fields;
        impl<'a> Visitor<'a> for Fields {
            type Value = Event<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an anthropic event")
            }
            fn visit_map<M: MapAccess<'a>>(self, mut map: M) -> Result<Event<'a>, M::Error> {
                let (mut type_, mut index, mut delta) = (None, None, None);
                let mut extra = Vec::new();
                while let Some(Str(key)) = map.next_key::<Str<'a>>()? {
                    match key.as_ref() {
                        "type" => {
                            let kind = map.next_value::<Str<'a>>()?;
                            if kind.0 != "content_block_delta" {
                                // another event: no need to read on
                                return Err(M::Error::custom("not the fast shape"));
                            }
                            once(&mut type_, kind)?
                        }
                        "index" => once(&mut index, map.next_value::<i64>()?)?,
                        "delta" => once(&mut delta, map.next_value::<Object<Delta<'a>>>()?)?,
                        _ => extra.push(map.next_value::<&'a RawValue>()?),
                    }
                }
                Ok(Event {
                    type_: type_.ok_or_else(|| M::Error::missing_field("type"))?,
                    index: index.ok_or_else(|| M::Error::missing_field("index"))?,
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
                f.write_str("an anthropic delta")
            }
            fn visit_map<M: MapAccess<'a>>(self, mut map: M) -> Result<Delta<'a>, M::Error> {
                let mut delta = Delta::default();
                while let Some(Str(key)) = map.next_key::<Str<'a>>()? {
                    let slot = match key.as_ref() {
                        "type" => &mut delta.type_,
                        "text" => &mut delta.text,
                        "thinking" => &mut delta.thinking,
                        "signature" => &mut delta.signature,
                        "partial_json" => &mut delta.partial_json,
                        _ => {
                            delta.extra.push(map.next_value::<&'a RawValue>()?);
                            continue;
                        }
                    };
                    // (null is no string: the generic path's error, or its own reading)
                    once(slot, map.next_value::<Str<'a>>()?)?;
                }
                if delta.type_.is_none() {
                    return Err(M::Error::missing_field("type"));
                }
                Ok(delta)
            }
        }
        deserializer.deserialize_map(Fields)
    }
}

pub(super) fn fast_event<'a>(adapter: &mut Adapter, raw: &'a [u8]) -> Option<FastLeaves<'a>> {
    // one UTF-8 check of the whole event, not one per string (invalid text: generic)
    let text = std::str::from_utf8(raw).ok()?;
    // objects only, as the generic path reads them (an event or delta written as an
    // array is not one)
    let Object(event) = serde_json::from_str::<Object<Event<'a>>>(text).ok()?;
    if event.type_.0 != "content_block_delta" {
        return None;
    }
    let Object(delta) = event.delta;
    if !read_alike(&event.extra, 2) || !read_alike(&delta.extra, 3) {
        return None;
    }
    let type_ = delta.type_.as_ref().map_or("", |t| t.0.as_ref());
    // exactly the field of its type (null is the generic path's error)
    let fields = [
        ("text_delta", delta.text),
        ("thinking_delta", delta.thinking),
        ("signature_delta", delta.signature),
        ("input_json_delta", delta.partial_json),
    ];
    let mut text = None;
    for (of, field) in fields {
        match (of == type_, field) {
            (true, Some(field)) => text = Some(field.0),
            (false, None) => {}
            _ => return None,
        }
    }
    let text = text?;
    leaves(adapter, type_, event.index, text)
}

/// The delta fields of a `content_block_delta` event already read from objects (an exact
/// dict's items: the event's keys exactly `type`, `index`, `delta`, the delta's exactly
/// `type` and `field`): the leaves [`fast_event`] gives for the same event's bytes, with
/// the same state changes; None, with nothing done, where it would decline.
pub(super) fn fast_delta<'a>(
    adapter: &mut Adapter,
    event_type: &str,
    index: i64,
    delta_type: &str,
    field: &str,
    text: &'a str,
) -> Option<FastLeaves<'a>> {
    if event_type != "content_block_delta" {
        return None;
    }
    let of = match delta_type {
        "text_delta" => "text",
        "thinking_delta" => "thinking",
        "signature_delta" => "signature",
        "input_json_delta" => "partial_json",
        _ => return None,
    };
    if field != of {
        return None;
    }
    leaves(adapter, delta_type, index, Cow::Borrowed(text))
}

/// The leaves of a delta of type `type_` (one of the four) to the block at `index`.
fn leaves<'a>(
    adapter: &mut Adapter,
    type_: &str,
    index: i64,
    text: Cow<'a, str>,
) -> Option<FastLeaves<'a>> {
    // a block started with this delta's kind (else: an anomaly, the generic path's)
    let (kind, _) = delta_kind(type_)?;
    let block = adapter.order.get(*adapter.blocks.get(&index)?)?;
    if block.kind != kind {
        return None;
    }
    let index = block.part_index;
    let leaf = match type_ {
        "text_delta" | "thinking_delta" => FastLeaf::Text {
            text,
            reasoning: type_ == "thinking_delta",
            index: Some(index),
        },
        "input_json_delta" => FastLeaf::Arguments {
            arguments: text,
            index,
        },
        _ => {
            let mut leaf = Obj::new();
            let part = string_delta_part(type_, &text, index);
            leaf.put("parts", list_value(vec![part]));
            FastLeaf::Leaf(leaf.build())
        }
    };
    Some(vec![(0, leaf)])
}
