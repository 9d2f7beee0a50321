//! The Responses adapter on the items it keeps whole (the twin's
//! `_pure/providers/openai_responses/tools.py`, whose docstring states the rules): the deltas
//! and statuses of MCP, code-interpreter, shell, image, search and compaction items, and the
//! response's audio (spec §10.2-10.3). Deltas are collected as strings (appends stay linear)
//! and applied to the item as added only when it is built, at the end of a cut stream.

use std::collections::BTreeMap;

use indexmap::IndexMap;

use crate::engine::providers::common::{anomaly, get, list_value, str_value, Leaves, Obj};
use crate::engine::value::{Map, Value};

use super::*;

const COMMAND_LIMIT: i64 = 500;

/// The status-only events' item kinds (the twin's `STATUS_KINDS`).
const STATUS_KINDS: &[&str] = &[
    "mcp_call",
    "mcp_list_tools",
    "code_interpreter_call",
    "image_generation_call",
    "web_search_call",
    "file_search_call",
    "compaction",
];
const STATUSES: &[&str] = &[
    "in_progress",
    "searching",
    "generating",
    "interpreting",
    "completed",
    "failed",
    "compacting",
];

/// A shell call output's entry: the stdout / stderr deltas, or the done event's list.
#[derive(Debug)]
enum Output {
    Delta(IndexMap<String, String>),
    Done(Vec<Value>),
}

/// What the stream said of a kept item since it was added.
#[derive(Debug, Default)]
pub(super) struct Tool {
    fields: IndexMap<String, String>,
    status: Option<String>,
    image: Option<(i64, String)>,
    commands: BTreeMap<i64, String>,
    outputs: BTreeMap<i64, Output>,
}

/// `value` at `at`, or appended when the list is shorter (no entry is invented).
fn place(entries: &mut Vec<Value>, at: i64, value: Value) {
    match usize::try_from(at) {
        Ok(at) if at < entries.len() => entries[at] = value,
        _ => entries.push(value),
    }
}

fn list_items(value: Option<&Value>) -> Vec<Value> {
    match value {
        Some(Value::List(items)) => items.as_ref().clone(),
        _ => Vec::new(),
    }
}

/// The kept item: as added (or its `type` and `id`) with the deltas and statuses applied.
pub(super) fn build(
    raw: Option<&Value>,
    kind: &str,
    item_id: &Option<String>,
    tool: Option<&Tool>,
) -> Value {
    let mut item: Map = match raw {
        Some(Value::Dict(map)) => map.as_ref().clone(),
        _ => {
            let mut map = Map::default();
            map.insert("type".to_owned(), str_value(kind));
            if let Some(id) = item_id {
                map.insert("id".to_owned(), str_value(id));
            }
            map
        }
    };
    let Some(tool) = tool else {
        return Value::Dict(std::sync::Arc::new(item));
    };
    for (field, text) in &tool.fields {
        item.insert(field.clone(), Value::Str(text.clone()));
    }
    if !tool.commands.is_empty() {
        let mut action: Map = match item.get("action") {
            Some(Value::Dict(map)) => map.as_ref().clone(),
            _ => Map::default(),
        };
        let mut commands = list_items(action.get("commands"));
        for (ci, text) in &tool.commands {
            place(&mut commands, *ci, Value::Str(text.clone()));
        }
        action.insert("commands".to_owned(), list_value(commands));
        item.insert(
            "action".to_owned(),
            Value::Dict(std::sync::Arc::new(action)),
        );
    }
    if !tool.outputs.is_empty() {
        let mut output = list_items(item.get("output"));
        for (ci, entry) in &tool.outputs {
            let value = match entry {
                Output::Done(entries) if entries.len() == 1 => entries[0].clone(),
                Output::Done(entries) => list_value(entries.clone()),
                Output::Delta(pieces) => {
                    let mut out = Obj::new();
                    for (key, text) in pieces {
                        out.put(key, Value::Str(text.clone()));
                    }
                    out.build()
                }
            };
            place(&mut output, *ci, value);
        }
        item.insert("output".to_owned(), list_value(output));
    }
    if let Some((at, data)) = &tool.image {
        item.insert("partial_image_index".to_owned(), Value::Int(*at));
        item.insert("partial_image_b64".to_owned(), Value::Str(data.clone()));
    }
    if let Some(status) = &tool.status {
        item.insert("status".to_owned(), Value::Str(status.clone()));
    }
    Value::Dict(std::sync::Arc::new(item))
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

fn command_index(event: &Value, kind: &str) -> Result<i64, String> {
    match get(event, "command_index") {
        None | Some(Value::Null) => Ok(0),
        Some(Value::Int(i)) if (0..COMMAND_LIMIT).contains(i) => Ok(*i),
        Some(Value::Int(i)) => Err(format!(
            "{kind}: 'command_index' must be between 0 and {}, not {i}",
            COMMAND_LIMIT - 1
        )),
        other => Err(format!(
            "{kind}: 'command_index' must be an int, not {}",
            type_name(other)
        )),
    }
}

fn done(leaves: &mut Leaves, anomalies: Vec<Value>) {
    if !anomalies.is_empty() {
        let mut leaf = Obj::new();
        leaf.put("anomalies", list_value(anomalies));
        leaves.push((0, leaf.build()));
    }
}

/// Whether `name` (after `response.`) is a status-only event.
pub(super) fn is_status(name: &str) -> bool {
    match name.rsplit_once('.') {
        Some((family, value)) => STATUS_KINDS.contains(&family) && STATUSES.contains(&value),
        None => false,
    }
}

impl Adapter {
    /// The kept item an event of `implied`'s family updates: its output index, or None when
    /// it is done or of another kind (`mismatched_delta`).
    fn tool_at(
        &mut self,
        event: &Value,
        kind: &str,
        implied: &str,
        anomalies: &mut Vec<Value>,
    ) -> Result<Option<i64>, String> {
        let index = self.index(event, kind)?;
        let item = self.item_at(index, kind, implied, anomalies);
        if item.kind != implied {
            let found = item.kind.clone();
            anomalies.push(mismatched(kind, index, &found));
            return Ok(None);
        }
        if item.done {
            return Ok(None);
        }
        let mut new_id = None;
        if item.item_id.is_none() {
            if let Some(Value::Str(id)) = get(event, "item_id") {
                item.item_id = Some(id.clone());
                new_id = Some(id.clone());
            }
        }
        if item.tool.is_none() {
            item.tool = Some(Box::default());
        }
        if let Some(id) = new_id {
            self.ids.insert(id, index);
        }
        Ok(Some(index))
    }

    fn tool_mut(&mut self, index: i64) -> Option<&mut Tool> {
        self.items
            .get_mut(&index)
            .and_then(|item| item.tool.as_deref_mut())
    }

    /// `mcp_call_arguments.*` / `code_interpreter_call_code.*`: deltas append, done replaces.
    pub(super) fn field_delta(&mut self, event: &Value, kind: &str, leaves: &mut Leaves) -> Res {
        let name = &kind[9..];
        let (family, what) = name.rsplit_once('.').unwrap_or((name, ""));
        let (implied, field) = if family == "mcp_call_arguments" {
            ("mcp_call", "arguments")
        } else {
            ("code_interpreter_call", "code")
        };
        let value = string(event, if what == "delta" { "delta" } else { field }, kind)?;
        let mut anomalies = Vec::new();
        if let Some(index) = self.tool_at(event, kind, implied, &mut anomalies)? {
            if let Some(item) = self.items.get_mut(&index) {
                let raw = &item.raw;
                if let Some(tool) = item.tool.as_deref_mut() {
                    if what == "delta" {
                        if !value.is_empty() {
                            // the first delta continues the field as added
                            tool.fields
                                .entry(field.to_owned())
                                .or_insert_with(|| match raw.as_ref().and_then(|r| get(r, field)) {
                                    Some(Value::Str(text)) => text.clone(),
                                    _ => String::new(),
                                })
                                .push_str(value);
                        }
                    } else {
                        tool.fields.insert(field.to_owned(), value.to_owned());
                    }
                }
            }
        }
        done(leaves, anomalies);
        Ok(())
    }

    /// A status-only event: the item's `status`.
    pub(super) fn status(&mut self, event: &Value, kind: &str, leaves: &mut Leaves) -> Res {
        let name = &kind[9..];
        let (family, value) = name.rsplit_once('.').unwrap_or((name, ""));
        let mut anomalies = Vec::new();
        if let Some(index) = self.tool_at(event, kind, family, &mut anomalies)? {
            if let Some(tool) = self.tool_mut(index) {
                tool.status = Some(value.to_owned());
            }
        }
        done(leaves, anomalies);
        Ok(())
    }

    /// `shell_call_command.added` / `.done` replace and `.delta` appends a command.
    pub(super) fn command(&mut self, event: &Value, kind: &str, leaves: &mut Leaves) -> Res {
        let ci = command_index(event, kind)?;
        let delta = kind == "response.shell_call_command.delta";
        let value = string(event, if delta { "delta" } else { "command" }, kind)?;
        let mut anomalies = Vec::new();
        if let Some(index) = self.tool_at(event, kind, "shell_call", &mut anomalies)? {
            if let Some(tool) = self.tool_mut(index) {
                if delta {
                    tool.commands.entry(ci).or_default().push_str(value);
                } else {
                    tool.commands.insert(ci, value.to_owned());
                }
            }
        }
        done(leaves, anomalies);
        Ok(())
    }

    /// `shell_call_output_content.delta` (stdout and stderr append) and `.done` (replaces).
    pub(super) fn output_content(&mut self, event: &Value, kind: &str, leaves: &mut Leaves) -> Res {
        let ci = command_index(event, kind)?;
        let delta = kind == "response.shell_call_output_content.delta";
        let value = get(event, if delta { "delta" } else { "output" });
        if delta && !matches!(value, Some(Value::Dict(_))) {
            return Err(format!(
                "{kind}: 'delta' must be a dict, not {}",
                type_name(value)
            ));
        }
        if !delta && !matches!(value, Some(Value::List(_))) {
            return Err(format!(
                "{kind}: 'output' must be a list, not {}",
                type_name(value)
            ));
        }
        let mut anomalies = Vec::new();
        if let Some(index) = self.tool_at(event, kind, "shell_call_output", &mut anomalies)? {
            if let Some(tool) = self.tool_mut(index) {
                match value {
                    Some(Value::List(entries)) => {
                        tool.outputs
                            .insert(ci, Output::Done(entries.as_ref().clone()));
                    }
                    Some(value) => {
                        if !matches!(tool.outputs.get(&ci), Some(Output::Delta(_))) {
                            tool.outputs.insert(ci, Output::Delta(IndexMap::new()));
                        }
                        for key in ["stdout", "stderr"] {
                            let piece = match get(value, key) {
                                None | Some(Value::Null) => continue,
                                Some(Value::Str(text)) => text,
                                other => {
                                    return Err(format!(
                                        "{kind}: 'delta.{key}' must be a str, not {}",
                                        type_name(other)
                                    ))
                                }
                            };
                            if let Some(Output::Delta(pieces)) = tool.outputs.get_mut(&ci) {
                                pieces.entry(key.to_owned()).or_default().push_str(piece);
                            }
                        }
                    }
                    None => {}
                }
            }
        }
        done(leaves, anomalies);
        Ok(())
    }

    /// `image_generation_call.partial_image`: the highest `partial_image_index` wins.
    pub(super) fn partial_image(&mut self, event: &Value, kind: &str, leaves: &mut Leaves) -> Res {
        let data = string(event, "partial_image_b64", kind)?;
        let at = match get(event, "partial_image_index") {
            Some(Value::Int(at)) => *at,
            other => {
                return Err(format!(
                    "{kind}: 'partial_image_index' must be an int, not {}",
                    type_name(other)
                ))
            }
        };
        let mut anomalies = Vec::new();
        if let Some(index) = self.tool_at(event, kind, "image_generation_call", &mut anomalies)? {
            if let Some(tool) = self.tool_mut(index) {
                if tool
                    .image
                    .as_ref()
                    .is_none_or(|(current, _)| at >= *current)
                {
                    tool.image = Some((at, data.to_owned()));
                }
            }
        }
        done(leaves, anomalies);
        Ok(())
    }

    /// `audio.delta` (base64) and `audio.transcript.delta` append; their `.done` mark them
    /// complete.
    pub(super) fn audio(&mut self, event: &Value, kind: &str) -> Res {
        let transcript = kind.starts_with("response.audio.transcript.");
        if kind.ends_with(".done") {
            if transcript {
                self.audio_done.1 = true;
            } else {
                self.audio_done.0 = true;
            }
            return Ok(());
        }
        let delta = string(event, "delta", kind)?;
        let pieces = if transcript {
            &mut self.audio.1
        } else {
            &mut self.audio.0
        };
        pieces.get_or_insert_with(String::new).push_str(delta);
        Ok(())
    }

    /// The response's audio as one `unknown` part (once), or None.
    pub(super) fn audio_part(&mut self) -> Option<Value> {
        if self.audio_emitted || (self.audio.0.is_none() && self.audio.1.is_none()) {
            return None;
        }
        self.audio_emitted = true;
        let mut raw = Obj::new();
        raw.put_opt("data", self.audio.0.as_deref().map(str_value));
        raw.put_opt("transcript", self.audio.1.as_deref().map(str_value));
        let mut part = Obj::new();
        part.put("part", str_value("unknown"))
            .put("provider", str_value(NAME))
            .put("kind", str_value("audio"))
            .put("raw", raw.build());
        Some(part.build())
    }

    /// The truncation anomalies of audio the stream cut.
    pub(super) fn audio_cut(&self, anomalies: &mut Vec<Value>) {
        if self.audio.0.is_some() && !self.audio_done.0 {
            anomalies.push(anomaly(
                "truncated",
                "audio data ended before its response.audio.done".to_owned(),
            ));
        }
        if self.audio.1.is_some() && !self.audio_done.1 {
            anomalies.push(anomaly(
                "truncated",
                "audio transcript ended before its response.audio.transcript.done".to_owned(),
            ));
        }
    }
}
