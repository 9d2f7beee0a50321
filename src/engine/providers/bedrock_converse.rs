//! The `"bedrock-converse"` adapter (the twin's `_pure/providers/bedrock_converse.py`, whose
//! docstring gives the mapping): Amazon Bedrock ConverseStream events, each wrapped as
//! `{"<eventType>": payload}`, to leaves of choice 0. Function for function with the twin;
//! same leaves, same key order, same anomaly and error texts.

use std::sync::Arc;

use indexmap::IndexMap;

use crate::engine::events::kind_name;
use crate::engine::providers::common::{
    self, anomaly, get, list_value, str_value, text_field, Leaves, Obj,
};
use crate::engine::value::{py_repr, Value};

/// The typed fast path of `contentBlockDelta` events (`bedrock_converse/fast.rs`).
mod fast;

const NAME: &str = "bedrock-converse";
/// The ConverseStream event types (and the exceptions it names), by which a stream is told to
/// be Bedrock's.
pub const EVENT_TYPES: &[&str] = &[
    "messageStart",
    "contentBlockStart",
    "contentBlockDelta",
    "contentBlockStop",
    "messageStop",
    "metadata",
    "internalServerException",
    "modelStreamErrorException",
    "validationException",
    "throttlingException",
    "serviceUnavailableException",
];

/// Bedrock's usage keys and the normalized names the fold reads (spec §5).
fn usage_key(key: &str) -> &str {
    match key {
        "inputTokens" => "input_tokens",
        "outputTokens" => "output_tokens",
        "totalTokens" => "total_tokens",
        "cacheReadInputTokens" => "cache_read_tokens",
        "cacheWriteInputTokens" => "cache_write_tokens",
        other => other,
    }
}

use crate::engine::value::Map;

fn payload(kind: &str, data: &Value) -> Value {
    let mut p = Obj::new();
    p.put("provider", str_value(NAME))
        .put("kind", str_value(kind))
        .put("data", data.clone());
    p.build()
}

fn block_index(kind: &str, payload: &Value) -> Result<i64, String> {
    match get(payload, "contentBlockIndex") {
        Some(Value::Int(i)) => Ok(*i),
        other => Err(format!(
            "{kind}: contentBlockIndex must be an integer, got {}",
            kind_name(other.unwrap_or(&Value::Null))
        )),
    }
}

fn object<'a>(kind: &str, field: &str, value: Option<&'a Value>) -> Result<&'a Map, String> {
    match value {
        Some(Value::Dict(map)) => Ok(map),
        other => Err(format!(
            "{kind}: {field} must be an object, got {}",
            kind_name(other.unwrap_or(&Value::Null))
        )),
    }
}

fn string<'a>(kind: &str, field: &str, value: &'a Value) -> Result<&'a str, String> {
    match value {
        Value::Str(text) => Ok(text),
        other => Err(format!(
            "{kind}: {field} must be a string, got {}",
            kind_name(other)
        )),
    }
}

/// The payload without its `p` padding.
fn unpadded(payload: &Arc<Map>) -> Value {
    if !payload.contains_key("p") {
        return Value::Dict(payload.clone());
    }
    let map: Map = payload
        .iter()
        .filter(|(k, _)| k.as_str() != "p")
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    Value::Dict(Arc::new(map))
}

fn single(key: &str, value: Value) -> Value {
    let mut o = Obj::new();
    o.put(key, value);
    o.build()
}

/// A leaf of `parts` and `anomalies` (each only when non-empty); None when both are empty.
fn parts_leaf(parts: Vec<Value>, anomalies: Vec<Value>) -> Leaves {
    let mut leaf = Obj::new();
    if !parts.is_empty() {
        leaf.put("parts", list_value(parts));
    }
    if !anomalies.is_empty() {
        leaf.put("anomalies", list_value(anomalies));
    }
    if leaf.is_empty() {
        Vec::new()
    } else {
        vec![(0, leaf.build())]
    }
}

fn unknown(kind: &str, raw: &Value, index: Option<i64>) -> Value {
    let mut part = Obj::new();
    part.put("part", str_value("unknown"))
        .put("provider", str_value(NAME))
        .put("kind", str_value(kind))
        .put("raw", raw.clone());
    if let Some(index) = index {
        part.put("index", Value::Int(index));
    }
    part.build()
}

/// Bedrock ConverseStream events -> leaves (choice 0: Converse has one choice).
#[derive(Debug, Default)]
pub struct Adapter {
    /// block index -> the kind its contentBlockStart gave ("toolUse", "toolResult", ...)
    started: IndexMap<i64, String>,
    /// blocks with a start or a delta and no stop yet, in the order they opened: their kind
    open: IndexMap<i64, String>,
    /// block index -> toolUseId of its toolUse start
    call_ids: IndexMap<i64, Value>,
    /// block index -> its image block (start and deltas joined), emitted at its stop (E104)
    images: IndexMap<i64, Map>,
    /// block index -> which reasoning its own part holds: "signed" (text, signature) or
    /// "redacted"; the other, when the block carries both, goes to a part of its own
    reasoning: IndexMap<i64, &'static str>,
    /// block index -> that other part's index
    companions: IndexMap<i64, i64>,
    /// the last part index given to such a part (-1, -2, ...: never a block's)
    spare: i64,
    /// messageStop or an exception was seen
    done: bool,
    /// messageStop was seen
    stopped: bool,
}

impl Adapter {
    pub fn new() -> Self {
        Self::default()
    }

    fn start(&mut self, payload: &Value) -> Result<Leaves, String> {
        let index = block_index("contentBlockStart", payload)?;
        let start_value = get(payload, "start");
        let start = object("contentBlockStart", "start", start_value)?;
        let mut anomalies = Vec::new();
        if self.started.contains_key(&index) {
            anomalies.push(anomaly(
                "index_collision",
                format!("content block {index} started a second time"),
            ));
        }
        let mut parts = Vec::new();
        // an image block started again: the first as it came
        if let Some(image) = self.image_part(index) {
            parts.push(image);
        }
        let mut kind = "start".to_owned();
        for (key, value) in start.iter() {
            kind.clone_from(key);
            let joins = key == "image" && start.len() == 1 && !self.stopped;
            if let (true, Value::Dict(image)) = (joins, value) {
                // its deltas complete it (E104); after messageStop each event is a part of its
                // own, refused by its own number (rules §6.1), never held for a later event
                self.images.insert(index, (**image).clone());
            } else if key == "toolUse" {
                let tool = object("contentBlockStart", "start.toolUse", Some(value))?;
                let mut call = Obj::new();
                call.put("part", str_value("tool_call"));
                let call_id = text_field(
                    tool.get("toolUseId"),
                    "contentBlockStart.start.toolUse.toolUseId",
                )?;
                call.put_opt("id", call_id.cloned());
                let name = text_field(tool.get("name"), "contentBlockStart.start.toolUse.name")?;
                call.put_opt("name", name.cloned());
                call.put("provider_index", Value::Int(index));
                let extra: Map = tool
                    .iter()
                    .filter(|(k, _)| k.as_str() != "toolUseId" && k.as_str() != "name")
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                if !extra.is_empty() {
                    call.put("extra", Value::Dict(Arc::new(extra)));
                }
                self.call_ids
                    .insert(index, call_id.cloned().unwrap_or(Value::Null));
                parts.push(call.build());
            } else {
                // the start object is kept whole
                let raw = start_value.cloned().unwrap_or(Value::Null);
                parts.push(unknown(key, &raw, Some(index)));
                break;
            }
        }
        self.started.insert(index, kind.clone());
        self.open.shift_remove(&index);
        self.open.insert(index, kind);
        Ok(parts_leaf(parts, anomalies))
    }

    fn delta(&mut self, payload: &Value) -> Result<Leaves, String> {
        let index = block_index("contentBlockDelta", payload)?;
        let delta_value = get(payload, "delta");
        let delta = object("contentBlockDelta", "delta", delta_value)?;
        let mut parts = Vec::new();
        let mut anomalies = Vec::new();
        for (key, value) in delta.iter() {
            self.check_kind(index, key, &mut anomalies);
            match key.as_str() {
                "text" => {
                    let text = string("contentBlockDelta", "delta.text", value)?;
                    if !text.is_empty() {
                        let mut part = Obj::new();
                        part.put("part", str_value("text"))
                            .put("text", value.clone())
                            .put("index", Value::Int(index));
                        parts.push(part.build());
                    }
                }
                "toolUse" => {
                    let tool = object("contentBlockDelta", "delta.toolUse", Some(value))?;
                    let arguments = match tool.get("input") {
                        Some(v @ (Value::Str(_) | Value::Dict(_))) => v.clone(),
                        other => {
                            return Err(format!(
                                "contentBlockDelta: delta.toolUse.input must be a string, got {}",
                                kind_name(other.unwrap_or(&Value::Null))
                            ))
                        }
                    };
                    let mut part = Obj::new();
                    part.put("part", str_value("tool_call"))
                        .put("provider_index", Value::Int(index))
                        .put("arguments", arguments);
                    parts.push(part.build());
                }
                "reasoningContent" => self.reasoning(index, value, &mut parts)?,
                "citation" => {
                    let mut part = Obj::new();
                    part.put("part", str_value("text"))
                        .put("text", str_value(""))
                        .put("citations", list_value(vec![value.clone()]))
                        .put("index", Value::Int(index));
                    parts.push(part.build());
                }
                // joined into the image block its start opened (E104)
                "image" if delta.len() == 1 && self.join_image(index, value) => {}
                _ => {
                    // the delta object is kept whole
                    let raw = delta_value.cloned().unwrap_or(Value::Null);
                    parts.push(unknown(key, &raw, None));
                    break;
                }
            }
        }
        Ok(parts_leaf(parts, anomalies))
    }

    fn reasoning(
        &mut self,
        index: i64,
        value: &Value,
        parts: &mut Vec<Value>,
    ) -> Result<(), String> {
        let content = object("contentBlockDelta", "delta.reasoningContent", Some(value))?;
        for (key, item) in content.iter() {
            let mut part = Obj::new();
            match key.as_str() {
                "text" => {
                    let text = string("contentBlockDelta", "delta.reasoningContent.text", item)?;
                    if text.is_empty() {
                        continue;
                    }
                    let at = self.reasoning_index(index, "signed");
                    part.put("part", str_value("reasoning"))
                        .put("text", item.clone())
                        .put("index", Value::Int(at));
                }
                "signature" => {
                    let at = self.reasoning_index(index, "signed");
                    part.put("part", str_value("reasoning"))
                        .put("text", str_value(""))
                        .put("payload", payload("signature", item))
                        .put("index", Value::Int(at));
                }
                "redactedContent" => {
                    let at = self.reasoning_index(index, "redacted");
                    part.put("part", str_value("reasoning"))
                        .put("text", str_value(""))
                        .put("redacted", Value::Bool(true))
                        .put("payload", payload("redacted_content", item))
                        .put("index", Value::Int(at));
                }
                _ => {
                    let raw = single("reasoningContent", single(key, item.clone()));
                    parts.push(unknown(key, &raw, None));
                    continue;
                }
            }
            parts.push(part.build());
        }
        Ok(())
    }

    /// The part index of a `kind` reasoning piece ("signed": text or signature; "redacted")
    /// of block `index` (the twin's `_reasoning_index`): the block's own index for the kind
    /// that came first; a spare index for the other, when a block carries both (its signed
    /// text and a redacted blob are two parts, as Bedrock's own response gives them two
    /// blocks: one part cannot hold two payloads).
    fn reasoning_index(&mut self, index: i64, kind: &'static str) -> i64 {
        let first = *self.reasoning.entry(index).or_insert(kind);
        if first == kind {
            return index;
        }
        if let Some(other) = self.companions.get(&index) {
            return *other;
        }
        self.spare -= 1;
        self.companions.insert(index, self.spare);
        self.spare
    }

    /// An image delta's fields into the image block at `index` (the twin's `_join_image`):
    /// `source` (or `error`) set; a second `bytes` piece appended to the base64 text when the
    /// text so far is whole groups of three bytes (no padding), where the join is exact. False
    /// (the delta is kept as a part of its own) when there is no such block or the join would
    /// not be exact.
    fn join_image(&mut self, index: i64, piece: &Value) -> bool {
        let (Some(image), Value::Dict(piece)) = (self.images.get_mut(&index), piece) else {
            return false;
        };
        let mut piece = (**piece).clone();
        let joined = if let (Some(Value::Dict(source)), Some(Value::Dict(known))) =
            (piece.get("source"), image.get("source"))
        {
            let mut joined = (**known).clone();
            for (key, value) in source.iter() {
                match (key.as_str(), joined.get(key), value) {
                    ("bytes", Some(Value::Str(current)), Value::Str(more)) => {
                        if current.chars().count() % 4 != 0 || current.ends_with('=') {
                            return false;
                        }
                        let text = format!("{current}{more}");
                        joined.insert(key.clone(), Value::Str(text));
                    }
                    ("bytes", Some(Value::Str(_)), _) => return false,
                    _ => {
                        joined.insert(key.clone(), value.clone());
                    }
                }
            }
            Some(joined)
        } else {
            None
        };
        if let Some(joined) = joined {
            piece.insert("source".to_owned(), Value::Dict(Arc::new(joined)));
        }
        for (key, value) in piece {
            image.insert(key, value);
        }
        true
    }

    /// The image block at `index` as one part, once (None when there is none).
    fn image_part(&mut self, index: i64) -> Option<Value> {
        let image = self.images.shift_remove(&index)?;
        let raw = single("image", Value::Dict(Arc::new(image)));
        Some(unknown("image", &raw, Some(index)))
    }

    /// The image blocks still open, each as one part, in the order they started.
    fn open_images(&mut self) -> Vec<Value> {
        let indexes: Vec<i64> = self.images.keys().copied().collect();
        indexes
            .into_iter()
            .filter_map(|i| self.image_part(i))
            .collect()
    }

    /// A delta against what its block is: a tool delta needs its block's start, a block a
    /// start opened takes deltas of its kind (text and reasoning blocks have no start).
    fn check_kind(&mut self, index: i64, kind: &str, anomalies: &mut Vec<Value>) {
        anomalies.extend(self.kind_anomaly(index, kind));
        self.open_for(index, kind);
    }

    /// The anomaly of [`Self::check_kind`], if any.
    fn kind_anomaly(&self, index: i64, kind: &str) -> Option<Value> {
        match self.started.get(&index) {
            None if kind == "toolUse" || kind == "toolResult" => Some(anomaly(
                "delta_before_start",
                format!("content block {index}: {kind} delta before its contentBlockStart"),
            )),
            Some(started) if started != kind && kind != "citation" => Some(anomaly(
                "mismatched_delta",
                format!("content block {index}: {kind} delta in a {started} block"),
            )),
            _ => None,
        }
    }

    /// Whether block `index` takes a `kind` delta without an anomaly (the typed fast path).
    fn takes_quietly(&self, index: i64, kind: &str) -> bool {
        self.kind_anomaly(index, kind).is_none()
    }

    /// Block `index` open, as its start or, without one, its first delta (`kind`) made it.
    fn open_for(&mut self, index: i64, kind: &str) {
        if !self.open.contains_key(&index) {
            let kind = self
                .started
                .get(&index)
                .cloned()
                .unwrap_or_else(|| kind.to_owned());
            self.open.insert(index, kind);
        }
    }

    fn stop(&mut self, payload: &Arc<Map>) -> Result<Leaves, String> {
        self.done = true;
        self.stopped = true;
        let mut leaf = Obj::new();
        let reason = text_field(payload.get("stopReason"), "messageStop.stopReason")?;
        leaf.put_opt("finish_reason", reason.cloned());
        leaf.put("status", str_value("complete"));
        let images = self.open_images();
        if !images.is_empty() {
            leaf.put("parts", list_value(images));
        }
        let metadata: Map = payload
            .iter()
            .filter(|(k, _)| k.as_str() != "stopReason" && k.as_str() != "p")
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        if !metadata.is_empty() {
            leaf.put("provider_metadata", Value::Dict(Arc::new(metadata)));
        }
        Ok(vec![(0, leaf.build())])
    }

    fn metadata(&mut self, payload: &Arc<Map>) -> Result<Leaves, String> {
        let mut leaf = Obj::new();
        let mut metadata = Map::default();
        for (key, value) in payload.iter() {
            if key == "usage" {
                let usage = object("metadata", "usage", Some(value))?;
                let normalized: Map = usage
                    .iter()
                    .map(|(k, v)| (usage_key(k).to_owned(), v.clone()))
                    .collect();
                leaf.put("usage", Value::Dict(Arc::new(normalized)));
            } else if key != "p" {
                metadata.insert(key.clone(), value.clone());
            }
        }
        if !metadata.is_empty() {
            leaf.put("provider_metadata", Value::Dict(Arc::new(metadata)));
        }
        Ok(if leaf.is_empty() {
            Vec::new()
        } else {
            vec![(0, leaf.build())]
        })
    }
}

impl common::Adapter for Adapter {
    fn event(&mut self, event: &Value) -> Result<Leaves, String> {
        let Value::Dict(map) = event else {
            return Err(format!(
                "an event is an object with one key, its event type; got {}",
                kind_name(event)
            ));
        };
        let (kind, payload_value) = match map.first() {
            Some(first) if map.len() == 1 => first,
            _ => {
                return Err(format!(
                    "an event is an object with one key, its event type; got {} keys",
                    map.len()
                ))
            }
        };
        let Value::Dict(payload_map) = payload_value else {
            return Err(format!(
                "{kind}: the payload must be an object, got {}",
                kind_name(payload_value)
            ));
        };
        match kind.as_str() {
            "contentBlockDelta" => self.delta(payload_value),
            "contentBlockStart" => self.start(payload_value),
            "contentBlockStop" => {
                let index = block_index(kind, payload_value)?;
                self.open.shift_remove(&index);
                Ok(match self.image_part(index) {
                    Some(image) => vec![(0, single("parts", list_value(vec![image])))],
                    None => Vec::new(),
                })
            }
            "messageStart" => Ok(
                match text_field(payload_map.get("role"), "messageStart.role")? {
                    Some(role) => vec![(0, single("role", role.clone()))],
                    None => Vec::new(),
                },
            ),
            "messageStop" => self.stop(payload_map),
            "metadata" => self.metadata(payload_map),
            _ if kind.ends_with("Exception") => {
                self.done = true;
                let mut error: Map = Map::default();
                error.insert("type".to_owned(), str_value(kind));
                for (k, v) in payload_map.iter() {
                    if k != "p" {
                        error.insert(k.clone(), v.clone());
                    }
                }
                let mut leaf = Obj::new();
                leaf.put("status", str_value("failed")).put(
                    "provider_metadata",
                    single("error", Value::Dict(Arc::new(error))),
                );
                Ok(vec![(0, leaf.build())])
            }
            _ => Ok(vec![(
                0,
                single("provider_metadata", single(kind, unpadded(payload_map))),
            )]),
        }
    }

    fn fast_event<'a>(&mut self, raw: &'a [u8]) -> Option<common::FastLeaves<'a>> {
        fast::fast_event(self, raw)
    }

    /// `metadata` (usage and metrics) comes after `messageStop`, last.
    fn ends_stream(&self, event: &Value) -> bool {
        matches!(event, Value::Dict(map) if map.len() == 1 && map.contains_key("metadata"))
    }

    /// One key, its event type: one of [`EVENT_TYPES`] or an `*Exception`, or another type
    /// whose payload is an object (kept in provider_metadata).
    fn knows(&self, event: &Value) -> bool {
        let Value::Dict(map) = event else {
            return false;
        };
        match map.first() {
            Some((kind, payload)) if map.len() == 1 => {
                EVENT_TYPES.contains(&kind.as_str())
                    || kind.ends_with("Exception")
                    || matches!(payload, Value::Dict(_))
            }
            _ => false,
        }
    }

    fn new_response(&self, event: &Value) -> Option<String> {
        let start = get(event, "messageStart").is_some();
        (self.stopped && start).then(|| "messageStart after messageStop".to_owned())
    }

    fn may_start_response(&self, raw: &[u8]) -> bool {
        self.stopped && common::may_hold(raw, b"messageStart")
    }

    fn end(&mut self) -> Leaves {
        let images = self.open_images();
        if self.done || self.open.is_empty() {
            if images.is_empty() {
                return Vec::new();
            }
            return vec![(0, single("parts", list_value(images)))];
        }
        let anomalies: Vec<Value> = self
            .open
            .iter()
            .map(|(index, kind)| {
                if kind == "toolUse" {
                    let id = self.call_ids.get(index).unwrap_or(&Value::Null);
                    let detail = format!(
                        "the stream ended inside tool call {} (content block {index}); its \
                         arguments are kept as streamed",
                        py_repr(id)
                    );
                    common::cut_call_anomaly(detail, common::str_of(id), None, Some(*index))
                } else {
                    let detail = format!("the stream ended inside content block {index} ({kind})");
                    anomaly("truncated", detail)
                }
            })
            .collect();
        let mut leaf = Obj::new();
        if !images.is_empty() {
            leaf.put("parts", list_value(images));
        }
        leaf.put("anomalies", list_value(anomalies));
        vec![(0, leaf.build())]
    }
}
