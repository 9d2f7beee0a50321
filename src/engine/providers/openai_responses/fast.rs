//! The typed fast path: the delta events that are most of a stream (`output_text.delta`
//! without logprobs, `reasoning_text.delta`, `reasoning_summary_text.delta`,
//! `function_call_arguments.delta`, `custom_tool_call_input.delta`), read with a borrowed serde
//! parse straight from the event's bytes, to the leaf the generic handlers (`deltas.rs`) build
//! from the parsed tree, with the same state changes. Keys no step reads (`item_id`,
//! `obfuscation`, a newer API's) are read as the generic parse reads them, and dropped, as the
//! generic path drops them. Any other event or state (another type, an empty delta, logprobs,
//! a delta out of sequence or waiting for a gap, an item not added or of another kind, the
//! stream's first leaf, a duplicate key, invalid text) makes [`fast_event`] answer None, and
//! the event is read the generic way; tests/engine/fastpath_responses.rs runs both on the
//! corpus and on generated events.

use serde::de::{Error as _, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

use super::deltas::Streamed;
use super::{summary_part, Adapter, CONTENT_LIMIT, MAX_OUTPUT_INDEX, SUMMARY_LIMIT};
use crate::engine::providers::common::{
    list_value, once, read_alike, FastLeaf, FastLeaves, Obj, Str,
};

/// The delta event types read here.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    OutputText,
    ReasoningText,
    Summary,
    Arguments,
    CustomInput,
}

impl Kind {
    fn of(name: &str) -> Option<Kind> {
        Some(match name {
            "response.output_text.delta" => Kind::OutputText,
            "response.reasoning_text.delta" => Kind::ReasoningText,
            "response.reasoning_summary_text.delta" => Kind::Summary,
            "response.function_call_arguments.delta" => Kind::Arguments,
            "response.custom_tool_call_input.delta" => Kind::CustomInput,
            _ => return None,
        })
    }

    /// The kind of item the delta belongs to.
    fn item(self) -> &'static str {
        match self {
            Kind::OutputText => "message",
            Kind::ReasoningText | Kind::Summary => "reasoning",
            Kind::Arguments => "function_call",
            Kind::CustomInput => "custom_tool_call",
        }
    }
}

struct Event<'a> {
    kind: Kind,
    sequence: Option<i64>,
    output_index: i64,
    content_index: Option<i64>,
    summary_index: Option<i64>,
    delta: Str<'a>,
    logprobs: Option<&'a RawValue>,
    /// the keys no step reads (members at level 2 of the event), checked by [`read_alike`]
    extra: Vec<&'a RawValue>,
}

impl<'a> Deserialize<'a> for Event<'a> {
    fn deserialize<D: Deserializer<'a>>(deserializer: D) -> Result<Self, D::Error> {
        struct Fields;
        impl<'a> Visitor<'a> for Fields {
            type Value = Event<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a responses delta event")
            }
            fn visit_map<M: MapAccess<'a>>(self, mut map: M) -> Result<Event<'a>, M::Error> {
                let (mut kind, mut sequence, mut output_index) = (None, None, None);
                let (mut content_index, mut summary_index) = (None, None);
                let (mut delta, mut logprobs) = (None, None);
                let mut extra = Vec::new();
                while let Some(key) = map.next_key::<Str<'a>>()? {
                    match &*key {
                        "type" => {
                            let name = map.next_value::<Str<'a>>()?;
                            // another event: no need to read on
                            let of = Kind::of(&name).ok_or_else(|| M::Error::custom("not fast"))?;
                            once(&mut kind, of)?
                        }
                        "sequence_number" => once(&mut sequence, map.next_value::<Option<i64>>()?)?,
                        "output_index" => once(&mut output_index, map.next_value::<i64>()?)?,
                        "content_index" => {
                            once(&mut content_index, map.next_value::<Option<i64>>()?)?
                        }
                        "summary_index" => {
                            once(&mut summary_index, map.next_value::<Option<i64>>()?)?
                        }
                        "delta" => once(&mut delta, map.next_value::<Str<'a>>()?)?,
                        "logprobs" => once(&mut logprobs, map.next_value::<&'a RawValue>()?)?,
                        _ => extra.push(map.next_value::<&'a RawValue>()?),
                    }
                }
                Ok(Event {
                    kind: kind.ok_or_else(|| M::Error::missing_field("type"))?,
                    sequence: sequence.flatten(),
                    output_index: output_index
                        .ok_or_else(|| M::Error::missing_field("output_index"))?,
                    content_index: content_index.flatten(),
                    summary_index: summary_index.flatten(),
                    delta: delta.ok_or_else(|| M::Error::missing_field("delta"))?,
                    logprobs,
                    extra,
                })
            }
        }
        deserializer.deserialize_map(Fields)
    }
}

/// A sub-index as the generic path's `sub` reads it (a missing or null one is 0), where it is
/// in range.
fn sub(value: Option<i64>, limit: i64) -> Option<i64> {
    let value = value.unwrap_or(0);
    (0..limit).contains(&value).then_some(value)
}

pub(super) fn fast_event<'a>(adapter: &mut Adapter, raw: &'a [u8]) -> Option<FastLeaves<'a>> {
    // one UTF-8 check of the whole event, not one per string (invalid text: generic)
    let text = std::str::from_utf8(raw).ok()?;
    let event = serde_json::from_str::<Event<'a>>(text).ok()?;
    let (kind, index, delta) = (event.kind, event.output_index, event.delta.0);
    // the stream's first leaf takes the role (the generic `event`); an empty delta adds no
    // part; logprobs go with the generic path
    let no_logprobs = event
        .logprobs
        .is_none_or(|lp| matches!(lp.get(), "null" | "[]"));
    if !adapter.started
        || delta.is_empty()
        || !no_logprobs
        || !(0..=MAX_OUTPUT_INDEX).contains(&index)
        || !read_alike(&event.extra, 2)
    {
        return None;
    }
    // in sequence: not late, not after a gap, nothing held (else the generic path holds or
    // drains); the item added, of the delta's kind (else an anomaly)
    let in_sequence = match (event.sequence, adapter.top) {
        (Some(seq), Some(top)) => seq >= top && seq <= top.saturating_add(1),
        _ => true,
    };
    let item = adapter.items.get(&index)?;
    let quiet = item.added || item.done || item.reported;
    if !in_sequence || !adapter.held.is_empty() || !quiet || item.kind != kind.item() {
        return None;
    }
    let leaf = match kind {
        Kind::OutputText | Kind::ReasoningText => {
            let ci = sub(event.content_index, CONTENT_LIMIT)?;
            let reasoning = kind == Kind::ReasoningText;
            let of = if reasoning {
                Streamed::Reasoning
            } else {
                Streamed::Output
            };
            let at = adapter.stream_text(index, ci, &delta, of);
            FastLeaf::Text {
                text: delta,
                reasoning,
                index: Some(at),
            }
        }
        Kind::Summary => {
            let si = sub(event.summary_index, SUMMARY_LIMIT)?;
            let at = adapter.stream_text(index, si, &delta, Streamed::Summary);
            let mut leaf = Obj::new();
            leaf.put(
                "parts",
                list_value(vec![summary_part(delta.into_owned(), at)]),
            );
            FastLeaf::Leaf(leaf.build())
        }
        Kind::Arguments | Kind::CustomInput => {
            adapter.track(index.to_string(), &delta);
            FastLeaf::Arguments {
                arguments: delta,
                index,
            }
        }
    };
    if let Some(seq) = event.sequence {
        adapter.top = Some(seq);
    }
    Some(vec![(0, leaf)])
}
