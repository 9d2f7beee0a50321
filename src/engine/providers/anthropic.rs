//! The `"anthropic"` adapter (the twin's `_pure/providers/anthropic.py`, whose docstring
//! states the mapping): Anthropic Messages streaming events to delta leaves, function for
//! function, the same leaves with the same keys in the same order.

use foldhash::HashMap;
use std::sync::Arc;

use crate::engine::value::Map;

use crate::engine::events::{kind_name, parse};
use crate::engine::providers::common::{
    self, anomaly, arguments_part, get, get_str, is_null, list_value, str_value, text_field,
    text_part, FastLeaves, Leaves, Obj,
};
use crate::engine::value::{py_repr, Value};

/// The typed fast path of `content_block_delta` events (`anthropic/fast.rs`).
mod fast;

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
/// message keys read into message fields; the others go to provider_metadata
const MESSAGE_FIELDS: &[&str] = &[
    "id",
    "type",
    "role",
    "model",
    "content",
    "stop_reason",
    "usage",
];

/// Deltas of a verbatim block whose fields replace the block's (the SDK's rule), where the
/// string fields of another delta append.
const REPLACING: &[&str] = &["compaction_delta"];

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

/// The provider's usage keys in their order, `cache_read_input_tokens` under its normalized
/// name `cache_read_tokens`, then `cache_write_tokens` beside `cache_creation_input_tokens`.
fn usage(value: &Value, place: &str) -> Result<Value, String> {
    let Value::Dict(map) = value else {
        return Err(format!(
            "{place}: 'usage' must be an object, not {}",
            kind_name(value)
        ));
    };
    let mut out: Map = Map::with_capacity_and_hasher(map.len() + 1, Default::default());
    for (key, value) in map.iter() {
        let key = if key == "cache_read_input_tokens" {
            "cache_read_tokens"
        } else {
            key.as_str()
        };
        out.insert(key.to_owned(), value.clone());
    }
    if let Some(write) = map.get("cache_creation_input_tokens") {
        if !matches!(write, Value::Null) {
            out.insert("cache_write_tokens".to_owned(), write.clone());
        }
    }
    Ok(Value::Dict(Arc::new(out)))
}

fn strip_delta(type_: &str) -> &str {
    match type_.strip_suffix("_delta") {
        Some(head) if type_ != "_delta" => head,
        _ => type_,
    }
}

/// The part one text, citation, thinking, signature or input JSON delta gives.
fn delta_part(delta: &Value, type_: &str, index: i64) -> Result<Value, String> {
    if type_ == "citations_delta" {
        let citation = get(delta, "citation").cloned().unwrap_or(Value::Null);
        let mut part = Obj::new();
        part.put("part", str_value("text"))
            .put("text", str_value(""));
        part.put("citations", list_value(vec![citation]));
        part.put("index", Value::Int(index));
        return Ok(part.build());
    }
    let field = delta_field(type_);
    let text = string(get(delta, field), type_, field)?;
    Ok(string_delta_part(type_, text, index))
}

/// The field of a delta type that carries its string (input_json_delta for any other).
fn delta_field(type_: &str) -> &'static str {
    match type_ {
        "text_delta" => "text",
        "thinking_delta" => "thinking",
        "signature_delta" => "signature",
        _ => "partial_json",
    }
}

/// The part of a text, thinking, signature or input JSON delta (`type_`) carrying `text`.
fn string_delta_part(type_: &str, text: &str, index: i64) -> Value {
    match type_ {
        "text_delta" => text_part(text, false, Some(index)),
        "thinking_delta" => text_part(text, true, Some(index)),
        "signature_delta" => {
            let mut part = Obj::new();
            part.put("part", str_value("reasoning"))
                .put("text", str_value(""));
            part.put("payload", payload("signature", str_value(text)));
            part.put("index", Value::Int(index));
            part.build()
        }
        _ => arguments_part(text, index),
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

    // -- message events

    fn message_start(&mut self, event: &Value) -> Result<Obj, String> {
        let message = match get(event, "message") {
            Some(m @ Value::Dict(_)) => m,
            other => {
                return Err(format!(
                    "message_start: 'message' must be an object, not {}",
                    kind_of_value(other)
                ))
            }
        };
        if !self.started {
            self.start_id = common::get_str(message, "id").map(str::to_owned);
        }
        self.started = true;
        let mut leaf = Obj::new();
        for (field, key) in [
            ("role", "role"),
            ("id", "response_id"),
            ("model", "response_model"),
        ] {
            let value = get(message, field);
            let value = text_field(value, format_args!("message_start.message.{field}"))?;
            leaf.put_opt(key, value.cloned());
        }
        let content = get(message, "content");
        if !is_null(content) {
            let Some(Value::List(blocks)) = content else {
                return Err(format!(
                    "message_start: 'content' must be an array, not {}",
                    kind_of_value(content)
                ));
            };
            if !blocks.is_empty() {
                let parts = blocks
                    .iter()
                    .map(|b| {
                        let mut part = Obj::new();
                        part.put("part", str_value("unknown"))
                            .put("provider", str_value(NAME));
                        part.put("kind", get(b, "type").cloned().unwrap_or(Value::Null));
                        part.put("raw", b.clone());
                        part.build()
                    })
                    .collect();
                leaf.put("parts", list_value(parts));
            }
        }
        if let Some(u) = get(message, "usage") {
            if !matches!(u, Value::Null) {
                leaf.put("usage", usage(u, "message_start")?);
            }
        }
        let stop = text_field(
            get(message, "stop_reason"),
            "message_start.message.stop_reason",
        )?;
        leaf.put_opt("finish_reason", stop.cloned());
        let mut metadata = Obj::new();
        if let Some(map) = dict(Some(message)) {
            for (key, value) in map.iter() {
                if !MESSAGE_FIELDS.contains(&key.as_str()) && !matches!(value, Value::Null) {
                    metadata.put(key, value.clone());
                }
            }
        }
        if !metadata.is_empty() {
            leaf.put("provider_metadata", metadata.build());
        }
        Ok(leaf)
    }

    fn message_delta(&mut self, event: &Value) -> Result<Obj, String> {
        let delta = get(event, "delta");
        let delta = match delta {
            None | Some(Value::Null) => None,
            Some(Value::Dict(map)) => Some(map),
            Some(other) => {
                return Err(format!(
                    "message_delta: 'delta' must be an object, not {}",
                    kind_name(other)
                ))
            }
        };
        let mut leaf = Obj::new();
        let mut metadata = Obj::new();
        if let Some(map) = delta {
            let stop = text_field(map.get("stop_reason"), "message_delta.delta.stop_reason")?;
            leaf.put_opt("finish_reason", stop.cloned());
            for (key, value) in map.iter() {
                if key != "stop_reason" && !matches!(value, Value::Null) {
                    metadata.put(key, value.clone());
                }
            }
        }
        if let Some(u) = get(event, "usage") {
            if !matches!(u, Value::Null) {
                // cumulative counts: final for every field they carry, zeros included (spec §5)
                leaf.put("final_usage", usage(u, "message_delta")?);
            }
        }
        if let Some(map) = dict(Some(event)) {
            for (key, value) in map.iter() {
                if !matches!(key.as_str(), "type" | "delta" | "usage")
                    && !matches!(value, Value::Null)
                {
                    metadata.put(key, value.clone());
                }
            }
        }
        if !metadata.is_empty() {
            leaf.put("provider_metadata", metadata.build());
        }
        Ok(leaf)
    }

    fn message_stop(&mut self, event: &Value) -> Obj {
        self.terminal = true;
        let mut leaf = self.close_open(Some("message_stop came first"));
        let mut metadata = Obj::new();
        if let Some(map) = dict(Some(event)) {
            for (key, value) in map.iter() {
                if key != "type" && !matches!(value, Value::Null) {
                    metadata.put(key, value.clone());
                }
            }
        }
        if !metadata.is_empty() {
            leaf.put("provider_metadata", metadata.build());
        }
        leaf.put("status", str_value("complete"));
        leaf
    }

    fn error(&mut self, event: &Value) -> Obj {
        self.terminal = true;
        let mut leaf = Obj::new();
        leaf.put("status", str_value("failed"));
        if let Some(error) = get(event, "error") {
            if !matches!(error, Value::Null) {
                let mut metadata = Obj::new();
                metadata.put("error", error.clone());
                leaf.put("provider_metadata", metadata.build());
            }
        }
        leaf
    }

    // -- content blocks

    fn start(&mut self, event: &Value) -> Result<Obj, String> {
        let index = index_of(event, "content_block_start")?;
        let (raw, type_) = typed(
            get(event, "content_block"),
            "content_block_start",
            "content_block",
        )?;
        let mut anomalies = Vec::new();
        let known = self.blocks.get(&index).copied();
        let late = known.and_then(|p| self.order.get(p)).is_some_and(|k| {
            k.implicit && k.raw.is_none() && k.kind != Kind::Unknown && k.type_ == type_
        });
        let position = match known {
            Some(p) if late => {
                if let Some(block) = self.order.get_mut(p) {
                    block.implicit = false;
                }
                p
            }
            _ => {
                let mut part_index = index;
                if let Some(k) = known.and_then(|p| self.order.get(p)) {
                    let old = k.type_.clone();
                    part_index = self.spare();
                    anomalies.push(anomaly(
                        "index_collision",
                        format!(
                            "content_block_start of a {type_} block at index {index}, already \
                             used by a {old} block: kept apart as part index {part_index}"
                        ),
                    ));
                }
                self.push_block(Block::new(type_.to_owned(), index, part_index, false))
            }
        };
        let mut rest = Obj::new();
        if let Some(block) = self.order.get_mut(position) {
            if let Some(part) = start_part(block, raw)? {
                rest.put("parts", list_value(vec![part]));
            }
        }
        if type_ == "fallback" {
            // another model served the reply from here on: the message's model (the SDK's)
            if let Some(model) = get(raw, "to").and_then(|to| get_str(to, "model")) {
                if !model.is_empty() {
                    rest.put("response_model", str_value(model));
                }
            }
        }
        Ok(with_anomalies(anomalies, rest))
    }

    fn delta(&mut self, event: &Value) -> Result<Obj, String> {
        let index = index_of(event, "content_block_delta")?;
        let (delta, type_) = typed(get(event, "delta"), "content_block_delta", "delta")?;
        let kind = delta_kind(type_);
        let mut anomalies = Vec::new();
        let position = match self.blocks.get(&index) {
            Some(p) => *p,
            None => {
                let opened = match kind {
                    Some((_, name)) => name,
                    None => strip_delta(type_),
                };
                let mut block = Block::new(opened.to_owned(), index, index, true);
                if block.kind == Kind::Unknown {
                    let mut raw = Map::default();
                    raw.insert("type".to_owned(), str_value(opened));
                    block.raw = Some(raw);
                }
                anomalies.push(anomaly(
                    "delta_before_start",
                    format!(
                        "{type_} at index {index} before any content_block_start: \
                         kept as a {opened} block"
                    ),
                ));
                self.push_block(block)
            }
        };
        let Some(block) = self.order.get_mut(position) else {
            return Ok(Obj::new());
        };
        let mut rest = Obj::new();
        if block.kind == Kind::Unknown {
            apply(block, delta, type_)?;
        } else if kind.map(|k| k.0) == Some(block.kind) {
            rest.put(
                "parts",
                list_value(vec![delta_part(delta, type_, block.part_index)?]),
            );
        } else {
            let detail = format!(
                "{type_} for the {} block at index {index}: kept as a part of its own",
                block.type_
            );
            match kind {
                None => {
                    anomalies.push(anomaly("mismatched_delta", detail));
                    let mut part = Obj::new();
                    part.put("part", str_value("unknown"))
                        .put("provider", str_value(NAME));
                    part.put("kind", str_value(type_)).put("raw", delta.clone());
                    rest.put("parts", list_value(vec![part.build()]));
                }
                Some((k, _)) => {
                    let key = (block.part_index, k);
                    let side = match self.side.get(&key) {
                        Some(side) => *side,
                        None => {
                            let side = self.spare();
                            self.side.insert(key, side);
                            anomalies.push(anomaly("mismatched_delta", detail));
                            side
                        }
                    };
                    rest.put("parts", list_value(vec![delta_part(delta, type_, side)?]));
                }
            }
        }
        Ok(with_anomalies(anomalies, rest))
    }

    fn stop(&mut self, event: &Value) -> Result<Obj, String> {
        let index = index_of(event, "content_block_stop")?;
        let mut leaf = Obj::new();
        let Some(block) = self
            .blocks
            .get(&index)
            .copied()
            .and_then(|p| self.order.get_mut(p))
        else {
            return Ok(leaf);
        };
        if !block.open {
            return Ok(leaf);
        }
        block.open = false;
        if block.raw.is_some() {
            leaf.put("parts", list_value(vec![unknown_part(block)]));
        }
        Ok(leaf)
    }

    /// Close the blocks still open: a `truncated` anomaly each (when `reason`), and the
    /// unknown blocks emitted as far as they came.
    fn close_open(&mut self, reason: Option<&str>) -> Obj {
        let mut anomalies = Vec::new();
        let mut parts = Vec::new();
        for block in self.order.iter_mut() {
            if !block.open {
                continue;
            }
            block.open = false;
            if let Some(reason) = reason {
                let mut what = format!("the {} block", block.type_);
                if block.kind == Kind::ToolUse {
                    what.push(' ');
                    what.push_str(&py_repr(&block.name));
                }
                let detail = format!(
                    "{what} at index {} had no content_block_stop ({reason})",
                    block.index
                );
                anomalies.push(if block.kind == Kind::ToolUse {
                    common::cut_call_anomaly(
                        detail,
                        None,
                        common::str_of(&block.name),
                        Some(block.index),
                    )
                } else {
                    anomaly("truncated", detail)
                });
            }
            if block.raw.is_some() {
                parts.push(unknown_part(block));
            }
        }
        let mut leaf = Obj::new();
        if !anomalies.is_empty() {
            leaf.put("anomalies", list_value(anomalies));
        }
        if !parts.is_empty() {
            leaf.put("parts", list_value(parts));
        }
        leaf
    }
}

/// The part a content_block_start gives (None for an unknown block, emitted at its stop).
fn start_part(block: &mut Block, raw: &Value) -> Result<Option<Value>, String> {
    let index = Value::Int(block.part_index);
    let mut part = Obj::new();
    let Some(map) = dict(Some(raw)) else {
        return Ok(None);
    };
    match block.kind {
        Kind::Text => {
            let text = match map.get("text") {
                None | Some(Value::Null) => str_value(""),
                other => str_value(string(other, "content_block_start", "text")?),
            };
            part.put("part", str_value("text")).put("text", text);
            if let Some(Value::List(citations)) = map.get("citations") {
                // [] too: kept as sent (E102)
                part.put("citations", Value::List(citations.clone()));
            }
            let mut attributes = Obj::new();
            for (key, value) in map.iter() {
                if !matches!(key.as_str(), "type" | "text" | "citations") {
                    attributes.put(key, value.clone());
                }
            }
            if !attributes.is_empty() {
                part.put("attributes", attributes.build());
            }
            part.put("index", index);
            // a block the stream sent is kept even when empty (E79)
            part.put("opened", Value::Bool(true));
        }
        Kind::Thinking => {
            let text = match map.get("thinking") {
                None | Some(Value::Null) => str_value(""),
                other => str_value(string(other, "content_block_start", "thinking")?),
            };
            part.put("part", str_value("reasoning")).put("text", text);
            match map.get("signature") {
                None | Some(Value::Null) => {}
                Some(Value::Str(sig)) if sig.is_empty() => {}
                Some(sig) => {
                    part.put("payload", payload("signature", sig.clone()));
                }
            }
            part.put("index", index);
        }
        Kind::Redacted => {
            let data = map.get("data").cloned().unwrap_or(Value::Null);
            part.put("part", str_value("reasoning"))
                .put("text", str_value(""));
            part.put("payload", payload("redacted_thinking", data));
            part.put("redacted", Value::Bool(true)).put("index", index);
        }
        Kind::ToolUse => {
            let name = text_field(map.get("name"), "content_block_start.content_block.name")?;
            block.name = name.cloned().unwrap_or(Value::Null);
            let id = text_field(map.get("id"), "content_block_start.content_block.id")?;
            part.put("part", str_value("tool_call"));
            part.put("id", id.cloned().unwrap_or(Value::Null));
            part.put("name", block.name.clone());
            part.put("provider_index", index);
            match map.get("input") {
                Some(given @ Value::Dict(d)) if !d.is_empty() => {
                    part.put("arguments", given.clone());
                }
                Some(given @ Value::Str(t)) if !t.is_empty() => {
                    part.put("arguments", given.clone());
                }
                _ => {}
            }
            let mut extra = Obj::new();
            for (key, value) in map.iter() {
                if !matches!(key.as_str(), "type" | "id" | "name" | "input") {
                    extra.put(key, value.clone());
                }
            }
            if !extra.is_empty() {
                part.put("extra", extra.build());
            }
        }
        Kind::Unknown => {
            block.raw = Some((**map).clone());
            return Ok(None);
        }
    }
    Ok(Some(part.build()))
}

/// A delta of an unknown block: JSON input pieces kept, the fields of a `REPLACING` delta set,
/// string fields appended, other fields set.
fn apply(block: &mut Block, delta: &Value, type_: &str) -> Result<(), String> {
    let Some(map) = dict(Some(delta)) else {
        return Ok(());
    };
    for (key, value) in map.iter() {
        if key == "type" {
            continue;
        }
        if type_ == "input_json_delta" && key == "partial_json" {
            let piece = string(Some(value), type_, key)?;
            block.json.push(piece.to_owned());
            continue;
        }
        let Some(raw) = block.raw.as_mut() else {
            return Ok(());
        };
        if REPLACING.contains(&type_) {
            // the delta holds the block's whole field so far (E101)
            raw.insert(key.clone(), value.clone());
            continue;
        }
        let joined = match (raw.get(key), value) {
            (None | Some(Value::Null), Value::Str(_)) => None,
            (Some(Value::Str(current)), Value::Str(text)) => Some(format!("{current}{text}")),
            _ => None,
        };
        match joined {
            Some(text) => raw.insert(key.clone(), Value::Str(text)),
            None => raw.insert(key.clone(), value.clone()),
        };
    }
    Ok(())
}

/// The unknown part of a block: the block as sent, its deltas applied.
fn unknown_part(block: &Block) -> Value {
    let mut raw = block.raw.clone().unwrap_or_default();
    let text = block.json.concat();
    if !text.is_empty() {
        let input = match parse(text.as_bytes()) {
            Ok(value) => value,
            Err(_) => Value::Str(text),
        };
        raw.insert("input".to_owned(), input);
    }
    let mut part = Obj::new();
    part.put("part", str_value("unknown"))
        .put("provider", str_value(NAME));
    part.put("kind", str_value(&block.type_));
    part.put("raw", Value::Dict(Arc::new(raw)));
    part.put("index", Value::Int(block.part_index));
    part.build()
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
