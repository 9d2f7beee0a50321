//! The `"openai-responses"` adapter (the twin's `_pure/providers/openai_responses/`, whose
//! docstring states the mapping). Function for function the twin's: the same leaves, keys in
//! the same order, the same anomaly and error texts.
//!
//! This file holds the adapter's state, the reading of an event's indexes and its dispatch;
//! `openai_responses/response.rs` reads the response's own events, `items.rs` the output
//! items, `deltas.rs` the streamed texts, `tools.rs` the tool items.

use foldhash::{HashMap, HashSet};

use indexmap::IndexMap;

use crate::engine::providers::common::{
    self, anomaly, get, get_str, is_null, list_value, str_value, Leaves, Obj,
};
use crate::engine::value::{py_repr, Map, Value};

mod deltas;
/// The typed fast path of the delta events (`openai_responses/fast.rs`).
mod fast;
mod items;
mod response;
mod tools;

const NAME: &str = "openai-responses";
/// Part indexes are ints: `output_index * 1000 + content_index` for a content entry,
/// `+ 500 + summary_index` for a reasoning summary, `+ 999` for the item itself.
const STRIDE: i64 = 1000;
const SUMMARY: i64 = 500;
const ITEM: i64 = 999;
const MAX_OUTPUT_INDEX: i64 = 999_999_999_999;
const CONTENT_LIMIT: i64 = SUMMARY;
const SUMMARY_LIMIT: i64 = ITEM - SUMMARY;

/// Python's `type(value).__name__` of a JSON value (a missing key reads as None).
fn type_name(value: Option<&Value>) -> &'static str {
    match value.map(Value::resolved) {
        None | Some(Value::Null) => "NoneType",
        Some(Value::Bool(_)) => "bool",
        Some(Value::Int(_)) => "int",
        Some(Value::Float(_)) => "float",
        Some(Value::Str(_)) => "str",
        Some(Value::List(_)) => "list",
        Some(Value::Dict(_) | Value::Json(_)) => "dict",
    }
}

fn repr_opt(value: &Option<String>) -> String {
    match value {
        None => "None".to_owned(),
        Some(text) => py_repr(&Value::Str(text.clone())),
    }
}

fn is_modeled(kind: &str) -> bool {
    matches!(
        kind,
        "message" | "reasoning" | "function_call" | "custom_tool_call"
    )
}

/// The arguments key of a call item kind (`_CALLS`).
fn call_key(kind: &str) -> Option<&'static str> {
    match kind {
        "function_call" => Some("arguments"),
        "custom_tool_call" => Some("input"),
        _ => None,
    }
}

/// What the adapter knows of the item at one output index.
#[derive(Debug)]
struct Item {
    kind: String,
    item_id: Option<String>,
    call_id: Option<String>,
    added: bool,
    done: bool,
    first_part: Option<i64>,
    raw: Option<Value>,
    reported: bool,
    /// The deltas and statuses of an unmodeled item.
    tool: Option<Box<tools::Tool>>,
}

impl Item {
    fn new(kind: &str) -> Self {
        Item {
            kind: kind.to_owned(),
            item_id: None,
            call_id: None,
            added: false,
            done: false,
            first_part: None,
            raw: None,
            reported: false,
            tool: None,
        }
    }
}

/// `"openai-responses"`: Responses API events -> leaves (choice 0).
#[derive(Debug, Default)]
pub struct Adapter {
    items: IndexMap<i64, Item>,
    ids: HashMap<String, i64>,
    texts: HashMap<String, String>,
    /// the keys of refusal parts, in the order first seen
    refusals: Vec<String>,
    cited: HashSet<String>,
    terminal: bool,
    started: bool,
    /// response.created seen
    created: bool,
    /// The audio's base64 data and transcript pieces, joined.
    audio: (Option<String>, Option<String>),
    /// Their done events seen.
    audio_done: (bool, bool),
    audio_emitted: bool,
    /// The highest `sequence_number` seen.
    top: Option<i64>,
    /// Deltas after a gap in the numbers, waiting for the events before them.
    held: Vec<(i64, Value)>,
    /// the first response.created's response id: a response.created with it again is the
    /// same response (a stream logged twice, spec §6.1), not another one
    created_id: Option<String>,
}

/// A completed response with one of these items finished for tool calls (spec §10.7).
fn is_tool_call(kind: &str) -> bool {
    matches!(kind, "function_call" | "custom_tool_call" | "mcp_call")
}

type Res = Result<(), String>;

fn push_leaf(leaves: &mut Leaves, leaf: Obj) {
    if !leaf.is_empty() {
        leaves.push((0, leaf.build()));
    }
}

/// The end of most handlers: the leaf with its anomalies, pushed unless it holds nothing.
fn emit(leaves: &mut Leaves, mut leaf: Obj, anomalies: Vec<Value>) {
    with_anomalies(&mut leaf, anomalies);
    push_leaf(leaves, leaf);
}

fn with_anomalies(leaf: &mut Obj, anomalies: Vec<Value>) {
    if !anomalies.is_empty() {
        leaf.put("anomalies", list_value(anomalies));
    }
}

fn text_part(kind: &str, text: String, index: i64) -> Value {
    let mut part = Obj::new();
    part.put("part", str_value(kind))
        .put("text", Value::Str(text))
        .put("index", Value::Int(index));
    part.build()
}

fn summary_part(summary: String, index: i64) -> Value {
    let mut part = Obj::new();
    part.put("part", str_value("reasoning"))
        .put("text", str_value(""))
        .put("summary", Value::Str(summary))
        .put("index", Value::Int(index));
    part.build()
}

/// `part` marked `settled`: a done text that replaces the streamed one (spec §6.1).
fn settled(part: Value, settled: bool) -> Value {
    match part {
        Value::Dict(mut map) if settled => {
            std::sync::Arc::make_mut(&mut map).insert("settled".to_owned(), Value::Bool(true));
            Value::Dict(map)
        }
        other => other,
    }
}

fn args_part(index: i64, arguments: String) -> Value {
    let mut part = Obj::new();
    part.put("part", str_value("tool_call"))
        .put("provider_index", Value::Int(index))
        .put("arguments", Value::Str(arguments));
    part.build()
}

fn unknown(raw: &Value, kind: Value, index: i64) -> Value {
    let mut part = Obj::new();
    part.put("part", str_value("unknown"))
        .put("provider", str_value(NAME))
        .put("kind", kind)
        .put("raw", raw.clone())
        .put("index", Value::Int(index));
    part.build()
}

fn mismatched(kind: &str, index: i64, item_kind: &str) -> Value {
    anomaly(
        "mismatched_delta",
        format!("{kind} on a {item_kind} item at output_index {index} ignored"),
    )
}

fn envelope_at(index: i64, envelope: Value) -> Value {
    let mut items = Obj::new();
    items.put(&index.to_string(), envelope);
    let mut meta = Obj::new();
    meta.put("output_items", items.build());
    meta.build()
}

/// A modeled item's fields with placeholders for what its parts hold; None for others.
fn envelope(item: &Map) -> Option<Value> {
    let kind = match item.get("type") {
        Some(Value::Str(kind)) => kind.as_str(),
        _ => return None,
    };
    let placeholder = |key: &str| -> Option<Value> {
        match (kind, key) {
            ("message", "content") => Some(list_value(Vec::new())),
            ("reasoning", "summary") | ("reasoning", "content") => Some(list_value(Vec::new())),
            ("reasoning", "encrypted_content") => Some(Value::Null),
            ("function_call", "arguments") | ("custom_tool_call", "input") => Some(str_value("")),
            _ => None,
        }
    };
    if !is_modeled(kind) {
        return None;
    }
    let mut out = Obj::new();
    for (key, value) in item {
        // a field sent as null stays null [E98]
        let kept = match value {
            Value::Null => None,
            _ => placeholder(key),
        };
        out.put(key, kept.unwrap_or_else(|| value.clone()));
    }
    Some(out.build())
}

/// `item[key]` as a list (missing or null: empty).
fn list_of<'a>(item: &'a Value, key: &str, kind: &str, limit: i64) -> Result<&'a [Value], String> {
    match get(item, key) {
        None | Some(Value::Null) => Ok(&[]),
        Some(Value::List(items)) if items.len() as u64 > limit as u64 => Err(format!(
            "{kind}: 'item.{key}' must have at most {limit} entries"
        )),
        Some(Value::List(items)) => Ok(items),
        other => Err(format!(
            "{kind}: 'item.{key}' must be a list, not {}",
            type_name(other)
        )),
    }
}

fn truthy_list(value: Option<&Value>) -> bool {
    matches!(value, Some(Value::List(items)) if !items.is_empty())
}

impl Adapter {
    pub fn new() -> Self {
        Self::default()
    }

    // -- reading events

    fn index(&self, event: &Value, kind: &str) -> Result<i64, String> {
        let index = get(event, "output_index");
        if let Some(Value::Int(i)) = index {
            if !(0..=MAX_OUTPUT_INDEX).contains(i) {
                return Err(format!(
                    "{kind}: 'output_index' must be between 0 and {MAX_OUTPUT_INDEX}, not {i}"
                ));
            }
            return Ok(*i);
        }
        if is_null(index) {
            if let Some(item_id) = get_str(event, "item_id") {
                if let Some(i) = self.ids.get(item_id) {
                    return Ok(*i);
                }
            }
        }
        Err(format!(
            "{kind}: 'output_index' must be an int, not {}",
            type_name(index)
        ))
    }

    fn sub(event: &Value, key: &str, kind: &str, limit: i64) -> Result<i64, String> {
        match get(event, key) {
            None | Some(Value::Null) => Ok(0),
            Some(Value::Int(i)) if (0..limit).contains(i) => Ok(*i),
            Some(Value::Int(i)) => Err(format!(
                "{kind}: '{key}' must be between 0 and {}, not {i}",
                limit - 1
            )),
            other => Err(format!(
                "{kind}: '{key}' must be an int, not {}",
                type_name(other)
            )),
        }
    }

    fn string<'a>(event: &'a Value, key: &str, kind: &str) -> Result<&'a str, String> {
        match get(event, key) {
            Some(Value::Str(text)) => Ok(text),
            other => Err(format!(
                "{kind}: '{key}' must be a str, not {}",
                type_name(other)
            )),
        }
    }

    /// The item a delta belongs to; a delta before its `output_item.added` implies it
    /// (`delta_before_start`, once per item).
    fn item_at(
        &mut self,
        index: i64,
        kind: &str,
        implied: &str,
        anomalies: &mut Vec<Value>,
    ) -> &mut Item {
        let item = self
            .items
            .entry(index)
            .or_insert_with(|| Item::new(implied));
        if !item.added && !item.done && !item.reported {
            item.reported = true;
            anomalies.push(anomaly(
                "delta_before_start",
                format!("{kind} at output_index {index} before its output_item.added"),
            ));
        }
        item
    }

    // -- texts compared with their done events

    fn track(&mut self, key: String, delta: &str) {
        self.texts.entry(key).or_default().push_str(delta);
    }

    fn refusal_key(&mut self, key: String) {
        if !self.refusals.contains(&key) {
            self.refusals.push(key);
        }
    }

    /// The whole refusal as now known: each refusal part's text, in the order first seen.
    fn whole_refusal(&self) -> String {
        let mut out = String::new();
        for key in &self.refusals {
            if let Some(text) = self.texts.get(key) {
                out.push_str(text);
            }
        }
        out
    }

    /// What a done event does to the text streamed for `key`: the text it still adds
    /// (`false`), or, when the two disagree, the text that replaces it (`true`).
    fn settle(
        &mut self,
        key: String,
        text: &str,
        what: &str,
        anomalies: &mut Vec<Value>,
    ) -> (String, bool) {
        let streamed = self.texts.insert(key, text.to_owned()).unwrap_or_default();
        if streamed.is_empty() {
            return (text.to_owned(), false);
        }
        if streamed == text {
            return (String::new(), false);
        }
        if let Some(rest) = text.strip_prefix(streamed.as_str()) {
            anomalies.push(anomaly(
                "mismatched_delta",
                format!(
                    "{what}: the done text extends the streamed deltas ({} of {} characters); \
                     the rest was added",
                    streamed.chars().count(),
                    text.chars().count()
                ),
            ));
            return (rest.to_owned(), false);
        }
        anomalies.push(anomaly(
            "mismatched_delta",
            format!(
                "{what}: the done text differs from the {} streamed characters; \
                 the done text replaces them",
                streamed.chars().count()
            ),
        ));
        (text.to_owned(), true)
    }

    /// The sequence-number-free reading of one event.
    fn one(&mut self, event: &Value, kind: &str, leaves: &mut Leaves) -> Res {
        if let Some(name) = kind.strip_prefix("response.") {
            match name {
                "created" | "in_progress" | "queued" | "completed" | "incomplete" | "failed" => {
                    self.response(event, kind, leaves)?
                }
                "output_item.added" => self.added(event, kind, leaves)?,
                "output_item.done" => self.item_done_event(event, kind, leaves)?,
                "output_text.delta" => self.text_delta(event, kind, leaves)?,
                "output_text.done"
                | "content_part.done"
                | "refusal.done"
                | "reasoning_text.done" => self.text_done(event, kind, leaves)?,
                "refusal.delta" => self.refusal_delta(event, kind, leaves)?,
                "reasoning_text.delta" | "reasoning_summary_text.delta" => {
                    self.reasoning_delta(event, kind, leaves)?
                }
                "reasoning_summary_text.done" | "reasoning_summary_part.done" => {
                    self.summary_done(event, kind, leaves)?
                }
                "function_call_arguments.delta" | "custom_tool_call_input.delta" => {
                    self.args_delta(event, kind, leaves)?
                }
                "function_call_arguments.done" | "custom_tool_call_input.done" => {
                    self.args_done(event, kind, leaves)?
                }
                "output_text.annotation.added" => self.annotation(event, kind, leaves)?,
                "mcp_call_arguments.delta"
                | "mcp_call_arguments.done"
                | "code_interpreter_call_code.delta"
                | "code_interpreter_call_code.done" => self.field_delta(event, kind, leaves)?,
                "shell_call_command.added"
                | "shell_call_command.delta"
                | "shell_call_command.done" => self.command(event, kind, leaves)?,
                "shell_call_output_content.delta" | "shell_call_output_content.done" => {
                    self.output_content(event, kind, leaves)?
                }
                "image_generation_call.partial_image" => self.partial_image(event, kind, leaves)?,
                "audio.delta"
                | "audio.done"
                | "audio.transcript.delta"
                | "audio.transcript.done" => self.audio(event, kind)?,
                _ if tools::is_status(name) => self.status(event, kind, leaves)?,
                _ => {}
            }
        } else if kind == "error" {
            self.error(event, leaves)?;
        }
        Ok(())
    }

    /// Whether the event's item (by `output_index`, else `item_id`) is done.
    fn done_item(&self, event: &Value) -> bool {
        let index = match get(event, "output_index") {
            Some(Value::Int(index)) => Some(*index),
            _ => get_str(event, "item_id").and_then(|id| self.ids.get(id).copied()),
        };
        index
            .and_then(|index| self.items.get(&index))
            .is_some_and(|item| item.done)
    }

    /// The event with the held deltas: after them, but after a done item (or the terminal
    /// response's items), which is authoritative over the held deltas of its item.
    fn read(&mut self, event: &Value, kind: &str, leaves: &mut Leaves) -> Res {
        if matches!(
            kind,
            "response.output_item.done"
                | "response.completed"
                | "response.incomplete"
                | "response.failed"
        ) {
            self.one(event, kind, leaves)?;
            self.drain(leaves)
        } else {
            self.drain(leaves)?;
            self.one(event, kind, leaves)
        }
    }

    /// The held deltas, in the order of their numbers, but those of a done item.
    fn drain(&mut self, leaves: &mut Leaves) -> Res {
        if self.held.is_empty() {
            return Ok(());
        }
        let mut held = std::mem::take(&mut self.held);
        held.sort_by_key(|(seq, _)| *seq);
        for (_, event) in &held {
            if !self.done_item(event) {
                let kind = get_str(event, "type").unwrap_or_default().to_owned();
                self.one(event, &kind, leaves)?;
            }
        }
        Ok(())
    }
}

impl common::Adapter for Adapter {
    fn event(&mut self, event: &Value) -> Result<Leaves, String> {
        let kind = match get(event, "type") {
            Some(Value::Str(kind)) => kind.as_str(),
            other => {
                return Err(format!(
                    "an event's 'type' must be a str, not {}",
                    type_name(other)
                ))
            }
        };
        let mut leaves: Leaves = Vec::new();
        match get(event, "sequence_number") {
            Some(Value::Int(seq)) => {
                let seq = *seq;
                match self.top {
                    Some(top) if seq < top => {
                        let late = kind.ends_with(".delta") && self.done_item(event);
                        let mut detail = format!("{kind}: sequence_number {seq} after {top}");
                        if late {
                            detail.push_str("; its item is done, the delta is not merged");
                        }
                        let mut leaf = Obj::new();
                        leaf.put(
                            "anomalies",
                            list_value(vec![anomaly("out_of_order", detail)]),
                        );
                        leaves.push((0, leaf.build()));
                        if !late {
                            // the done item is authoritative over a late delta (spec §6.1)
                            self.one(event, kind, &mut leaves)?;
                        }
                        self.drain(&mut leaves)?;
                    }
                    top => {
                        self.top = Some(seq);
                        let gap = top.is_some_and(|top| seq > top.saturating_add(1));
                        if kind.ends_with(".delta") && (!self.held.is_empty() || gap) {
                            // a delta after a gap waits for the events before it (spec §6.1)
                            self.held.push((seq, event.clone()));
                        } else {
                            self.read(event, kind, &mut leaves)?;
                        }
                    }
                }
            }
            _ => self.read(event, kind, &mut leaves)?,
        }
        if !self.started && !leaves.is_empty() {
            self.started = true;
            if let Some((_, Value::Dict(first))) = leaves.first_mut() {
                let mut with_role: Map =
                    Map::with_capacity_and_hasher(first.len() + 1, Default::default());
                with_role.insert("role".to_owned(), str_value("assistant"));
                for (key, value) in first.iter() {
                    if key != "role" {
                        with_role.insert(key.clone(), value.clone());
                    }
                }
                *first = std::sync::Arc::new(with_role);
            }
        }
        Ok(leaves)
    }

    fn fast_event<'a>(&mut self, raw: &'a [u8]) -> Option<common::FastLeaves<'a>> {
        fast::fast_event(self, raw)
    }

    /// `response.completed`, `response.failed` or `response.incomplete` closes the response.
    fn ends_stream(&self, event: &Value) -> bool {
        matches!(
            crate::engine::providers::common::get_str(event, "type"),
            Some("response.completed" | "response.failed" | "response.incomplete")
        )
    }

    /// A `type` of `response.*` or `error` (a `response.*` type without a handler, such as
    /// `response.content_part.added`, is read and adds nothing).
    fn knows(&self, event: &Value) -> bool {
        matches!(get(event, "type"), Some(Value::Str(kind)) if kind.starts_with("response.") || kind == "error")
    }

    fn new_response(&self, event: &Value) -> Option<String> {
        let created =
            matches!(get(event, "type"), Some(Value::Str(kind)) if kind == "response.created");
        let id = get(event, "response").and_then(|response| common::get_str(response, "id"));
        let same = id.is_some() && id == self.created_id.as_deref();
        (self.created && created && !same).then(|| "a second response.created".to_owned())
    }

    fn may_start_response(&self, raw: &[u8]) -> bool {
        self.created && common::may_hold(raw, b"response.created")
    }

    fn end(&mut self) -> Leaves {
        let mut leaves = Vec::new();
        if let Err(detail) = self.drain(&mut leaves) {
            // a held delta the adapter cannot map
            let mut leaf = Obj::new();
            leaf.put(
                "anomalies",
                list_value(vec![anomaly("unrecognized_event", detail)]),
            );
            leaves.push((0, leaf.build()));
        }
        if self.terminal {
            return leaves;
        }
        let mut parts = Vec::new();
        let mut anomalies = Vec::new();
        for (index, item) in &self.items {
            if item.done {
                continue;
            }
            if !is_modeled(&item.kind)
                && (matches!(item.raw, Some(Value::Dict(_))) || item.tool.is_some())
            {
                let raw = tools::build(
                    item.raw.as_ref(),
                    &item.kind,
                    &item.item_id,
                    item.tool.as_deref(),
                );
                parts.push(unknown(&raw, str_value(&item.kind), index * STRIDE + ITEM));
            }
            let ident = if call_key(&item.kind).is_some() {
                &item.call_id
            } else {
                &item.item_id
            };
            let detail = format!(
                "output_index {index}: {} {} ended before its output_item.done",
                item.kind,
                repr_opt(ident)
            );
            anomalies.push(if call_key(&item.kind).is_some() {
                common::cut_call_anomaly(detail, item.call_id.as_deref(), None, Some(*index))
            } else {
                anomaly("truncated", detail)
            });
        }
        if let Some(audio) = self.audio_part() {
            parts.push(audio);
            self.audio_cut(&mut anomalies);
        }
        let mut leaf = Obj::new();
        if !parts.is_empty() {
            leaf.put("parts", list_value(parts));
        }
        with_anomalies(&mut leaf, anomalies);
        if !leaf.is_empty() {
            leaves.push((0, leaf.build()));
        }
        leaves
    }
}
