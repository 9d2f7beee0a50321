//! The `"anthropic"` adapter (the twin's `_pure/providers/anthropic.py`, whose docstring
//! states the mapping): Anthropic Messages streaming events to delta leaves, function for
//! function, the same leaves with the same keys in the same order.
//!
//! This file holds the adapter's state and its dispatch by event type; `anthropic/message.rs`
//! reads the message events, `anthropic/blocks.rs` the content-block events, `anthropic/parts.rs`
//! the parts a block gives, `anthropic/fast.rs` the typed fast path.

use foldhash::HashMap;
use std::sync::Arc;

use crate::engine::value::Map;

use crate::engine::events::{kind_name, parse};
use crate::engine::providers::common::{
    self, anomaly, arguments_part, get, get_str, is_null, list_value, str_value, text_field,
    text_part, FastLeaves, Leaves, Obj,
};
use crate::engine::value::{py_repr, Value};

mod blocks;
/// The typed fast path of `content_block_delta` events (`anthropic/fast.rs`).
mod fast;
mod message;
mod parts;

const NAME: &str = "anthropic";
/// The event types of the Messages stream (an event of another `type` is not read: spec §8).
pub const EVENT_TYPES: &[&str] = &[
    "message_start",
    "message_delta",
    "message_stop",
    "content_block_start",
    "content_block_delta",
    "content_block_stop",
    "ping",
    "error",
];
/// What a block is: one of the four mapped types, or kept verbatim.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Kind {
    Text,
    Thinking,
    Redacted,
    ToolUse,
    Unknown,
}

fn kind_of(type_: &str) -> Kind {
    match type_ {
        "text" => Kind::Text,
        "thinking" => Kind::Thinking,
        "redacted_thinking" => Kind::Redacted,
        "tool_use" => Kind::ToolUse,
        _ => Kind::Unknown,
    }
}

/// The block kind a content_block_delta type belongs to (the twin's `_DELTA_KINDS`), and the
/// block type it opens.
fn delta_kind(type_: &str) -> Option<(Kind, &'static str)> {
    match type_ {
        "text_delta" | "citations_delta" => Some((Kind::Text, "text")),
        "thinking_delta" | "signature_delta" => Some((Kind::Thinking, "thinking")),
        "input_json_delta" => Some((Kind::ToolUse, "tool_use")),
        _ => None,
    }
}

/// One content block (the twin's `_Block`).
#[derive(Debug)]
struct Block {
    type_: String,
    kind: Kind,
    index: i64,
    part_index: i64,
    open: bool,
    /// opened by a delta before its start
    implicit: bool,
    /// tool_use: the tool's name (for messages)
    name: Value,
    /// unknown: the block, deltas applied
    raw: Option<Map>,
    /// unknown: input_json_delta strings
    json: Vec<String>,
}

impl Block {
    fn new(type_: String, index: i64, part_index: i64, implicit: bool) -> Self {
        let kind = kind_of(&type_);
        Block {
            type_,
            kind,
            index,
            part_index,
            open: true,
            implicit,
            name: Value::Null,
            raw: None,
            json: Vec::new(),
        }
    }
}

/// Anthropic Messages events -> leaves (choice 0; the API has no `n`).
#[derive(Debug, Default)]
pub struct Adapter {
    /// block index -> its most recent block (a position in `order`)
    blocks: HashMap<i64, usize>,
    /// every block, in start order
    order: Vec<Block>,
    /// part indexes handed out for collisions and mismatches: -1, -2, ...
    spare: i64,
    /// (part index, delta kind) -> the part of its own
    side: HashMap<(i64, Kind), i64>,
    /// message_stop or error seen
    terminal: bool,
    /// message_start seen
    started: bool,
    /// the first message_start's message id: a message_start with it again is the same
    /// response (a stream logged twice, spec §6.1), not another one
    start_id: Option<String>,
}

fn dict(value: Option<&Value>) -> Option<&Arc<Map>> {
    match value {
        Some(Value::Dict(map)) => Some(map),
        _ => None,
    }
}

fn kind_of_value(value: Option<&Value>) -> &'static str {
    kind_name(value.unwrap_or(&Value::Null))
}

fn payload(kind: &str, data: Value) -> Value {
    let mut p = Obj::new();
    p.put("provider", str_value(NAME))
        .put("kind", str_value(kind))
        .put("data", data);
    p.build()
}

fn index_of(event: &Value, place: &str) -> Result<i64, String> {
    match get(event, "index") {
        Some(Value::Int(i)) => Ok(*i),
        other => Err(format!(
            "{place}: 'index' must be an integer, not {}",
            kind_of_value(other)
        )),
    }
}

/// An object with a str `type` (the twin's `_typed`): the object and its type.
fn typed<'a>(
    value: Option<&'a Value>,
    place: &str,
    field: &str,
) -> Result<(&'a Value, &'a str), String> {
    if let Some(v @ Value::Dict(map)) = value {
        if let Some(Value::Str(t)) = map.get("type") {
            return Ok((v, t.as_str()));
        }
    }
    Err(format!(
        "{place}: '{field}' must be an object with a string 'type'"
    ))
}

fn string<'a>(value: Option<&'a Value>, place: &str, field: &str) -> Result<&'a str, String> {
    match value {
        Some(Value::Str(text)) => Ok(text),
        other => Err(format!(
            "{place}: '{field}' must be a string, not {}",
            kind_of_value(other)
        )),
    }
}

/// A leaf with `anomalies` first, then the other keys.
fn with_anomalies(anomalies: Vec<Value>, rest: Obj) -> Obj {
    if anomalies.is_empty() {
        return rest;
    }
    let mut leaf = Obj::new();
    leaf.put("anomalies", list_value(anomalies));
    if let Value::Dict(map) = rest.build() {
        for (key, value) in map.iter() {
            leaf.put(key, value.clone());
        }
    }
    leaf
}

impl Adapter {
    pub fn new() -> Self {
        Self::default()
    }

    fn spare(&mut self) -> i64 {
        self.spare -= 1;
        self.spare
    }

    fn push_block(&mut self, block: Block) -> usize {
        let index = block.index;
        self.order.push(block);
        let position = self.order.len() - 1;
        self.blocks.insert(index, position);
        position
    }
}

impl common::Adapter for Adapter {
    fn event(&mut self, event: &Value) -> Result<Leaves, String> {
        let leaf = match get(event, "type") {
            Some(Value::Str(kind)) => match kind.as_str() {
                "content_block_delta" => self.delta(event)?,
                "content_block_start" => self.start(event)?,
                "content_block_stop" => self.stop(event)?,
                "message_start" => self.message_start(event)?,
                "message_delta" => self.message_delta(event)?,
                "message_stop" => self.message_stop(event),
                "error" => self.error(event),
                _ => return Ok(Vec::new()), // ping (the aggregator reads no event of another type)
            },
            other => {
                return Err(format!(
                    "an event needs a string 'type', not {}",
                    kind_of_value(other)
                ))
            }
        };
        Ok(if leaf.is_empty() {
            Vec::new()
        } else {
            vec![(0, leaf.build())]
        })
    }

    fn fast_event<'a>(&mut self, raw: &'a [u8]) -> Option<FastLeaves<'a>> {
        fast::fast_event(self, raw)
    }

    fn fast_delta<'a>(
        &mut self,
        event_type: &str,
        index: i64,
        delta_type: &str,
        field: &str,
        text: &'a str,
    ) -> Option<FastLeaves<'a>> {
        fast::fast_delta(self, event_type, index, delta_type, field, text)
    }

    /// `message_stop` is the last event of a message.
    fn ends_stream(&self, event: &Value) -> bool {
        crate::engine::providers::common::get_str(event, "type") == Some("message_stop")
    }

    fn knows(&self, event: &Value) -> bool {
        matches!(get(event, "type"), Some(Value::Str(kind)) if EVENT_TYPES.contains(&kind.as_str()))
    }

    fn new_response(&self, event: &Value) -> Option<String> {
        let start = matches!(get(event, "type"), Some(Value::Str(kind)) if kind == "message_start");
        let id = get(event, "message").and_then(|message| common::get_str(message, "id"));
        let same = id.is_some() && id == self.start_id.as_deref();
        (self.started && start && !same).then(|| "a second message_start".to_owned())
    }

    fn may_start_response(&self, raw: &[u8]) -> bool {
        self.started && common::may_hold(raw, b"message_start")
    }

    fn end(&mut self) -> Leaves {
        let reason = if self.terminal {
            None
        } else {
            Some("the stream ended")
        };
        let leaf = self.close_open(reason);
        if leaf.is_empty() {
            Vec::new()
        } else {
            vec![(0, leaf.build())]
        }
    }
}
