//! The typed fast path: a `content_block_delta` of a text, thinking, signature or input JSON
//! delta for a block already started with the delta's kind, read with a borrowed serde parse
//! straight from the event's bytes, to the leaf [`Adapter::delta`] builds from the parsed
//! tree. Any other event or shape (another key, another type, a block not started or of
//! another kind, a duplicate key, invalid text) makes [`fast_event`] answer None, and
//! the event is read the generic way; tests/engine/fastpath.rs runs both on the corpus.

use std::borrow::Cow;

use serde::Deserialize;

use super::parts::string_delta_part;
use super::{delta_kind, Adapter};
use crate::engine::providers::common::{list_value, FastLeaf, FastLeaves, Obj, Object};

/// A str of the event, borrowed from its bytes unless it holds an escape (a newtype: serde
/// reads a bare `Option<Cow<str>>` as an owned copy).
#[derive(Deserialize)]
struct Str<'a>(#[serde(borrow)] Cow<'a, str>);

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Event<'a> {
    #[serde(borrow, rename = "type")]
    type_: Str<'a>,
    index: i64,
    #[serde(borrow)]
    delta: Object<Delta<'a>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Delta<'a> {
    #[serde(borrow, rename = "type")]
    type_: Str<'a>,
    #[serde(borrow, default)]
    text: Option<Str<'a>>,
    #[serde(borrow, default)]
    thinking: Option<Str<'a>>,
    #[serde(borrow, default)]
    signature: Option<Str<'a>>,
    #[serde(borrow, default)]
    partial_json: Option<Str<'a>>,
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
    let type_ = delta.type_.0.as_ref();
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
