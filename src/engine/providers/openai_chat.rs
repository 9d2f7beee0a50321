//! The `"openai-chat"` adapter (the twin's `_pure/providers/openai_chat.py`, whose docstring
//! gives the mapping): OpenAI Chat Completions chunks (and the servers that copy them) to one
//! leaf per choice entry. Function for function with the twin: same leaves, same key order,
//! same anomaly and error texts.

use foldhash::{HashMap, HashSet};
use std::fmt;
use std::sync::Arc;

use indexmap::IndexMap;

use crate::engine::providers::common::{
    self, anomaly, list_value, str_value, text_field, FinishedId, Leaves, Obj,
};
use crate::engine::text::is_absent_text;
use crate::engine::value::{py_repr, Value};

use crate::engine::value::Map;

mod choice;
mod delta;
mod fast;

const NAME: &str = "openai-chat";
const TOP_METADATA: &[&str] = &["created", "object", "system_fingerprint", "service_tier"];
const TOP_KNOWN: &[&str] = &[
    "id",
    "model",
    "choices",
    "usage",
    "prompt_token_ids",
    "obfuscation",
    "error",
    "created",
    "object",
    "system_fingerprint",
    "service_tier",
];
const CHOICE_KNOWN: &[&str] = &[
    "index",
    "delta",
    "finish_reason",
    "logprobs",
    "token_ids",
    "text",
];
const DELTA_KNOWN: &[&str] = &[
    "role",
    "content",
    "refusal",
    "tool_calls",
    "reasoning_content",
    "reasoning",
    "reasoning_details",
    "token_id",
    "executed_tools",
    "annotations",
    "function_call",
    "audio",
];
/// Keys that make an event a chat chunk (not `model`, which Ollama's objects have, nor
/// `usage`, which Anthropic's message_delta has).
const RECOGNIZED: &[&str] = &[
    "choices",
    "id",
    "object",
    "created",
    "system_fingerprint",
    "prompt_token_ids",
    "error",
];
/// Delta lists whose entries each chunk adds to the message (LiteLLM's and OpenRouter's
/// `images`, LiteLLM's `reasoning_items`): every entry an unknown part of that kind, in order.
const LISTED: &[&str] = &["images", "reasoning_items"];
const CALL_KNOWN: &[&str] = &["index", "id", "type", "function", "custom"];
const DETAIL_OPAQUE: &[&str] = &["text", "summary", "signature", "data", "index"];
const DETAIL_TYPES: &[&str] = &["reasoning.text", "reasoning.summary", "reasoning.encrypted"];

/// `value` when present and not null.
/// An object without its null members (any other value as it is). The API's `logprobs` and
/// audio pieces spell an absent list or field as null, as does an SDK's `model_dump()` for
/// every unset field: read as absent, so a chunk with and without them gives one message.
pub(super) fn without_null_members(value: &Value) -> Value {
    match value {
        Value::Dict(map) if map.values().any(|v| matches!(v, Value::Null)) => {
            Value::Dict(Arc::new(
                map.iter()
                    .filter(|(_, v)| !matches!(v, Value::Null))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect(),
            ))
        }
        other => other.clone(),
    }
}

fn present(value: Option<&Value>) -> Option<&Value> {
    value.filter(|v| !matches!(v, Value::Null))
}

/// `value[key]` of a dict value.
fn field<'a>(value: Option<&'a Value>, key: &str) -> Option<&'a Value> {
    match value {
        Some(Value::Dict(map)) => map.get(key),
        _ => None,
    }
}

/// Spec: None, or a str that is empty, whitespace or "null".
fn absent(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Str(text) => is_absent_text(text),
        _ => false,
    }
}

/// A str value's text, else "".
fn text_of(value: Option<&Value>) -> &str {
    match value {
        Some(Value::Str(text)) => text,
        _ => "",
    }
}

fn is_empty_str(value: &Value) -> bool {
    matches!(value, Value::Str(text) if text.is_empty())
}

fn truthy(value: &Value) -> bool {
    match value.resolved() {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Int(i) => *i != 0,
        Value::Float(f) => *f != 0.0,
        Value::Str(text) => !text.is_empty(),
        Value::List(items) => !items.is_empty(),
        Value::Dict(map) => !map.is_empty(),
        Value::Json(_) => true, // never: resolved
    }
}

fn dict(map: Map) -> Value {
    Value::Dict(Arc::new(map))
}

/// The entries of `map` not in `known` and not null, in order.
fn others(map: &Map, known: &[&str]) -> Map {
    map.iter()
        .filter(|(k, v)| !known.contains(&k.as_str()) && !matches!(v, Value::Null))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

fn delta(kind: &str, text: &str) -> Value {
    let mut part = Obj::new();
    part.put("part", str_value(kind))
        .put("text", str_value(text));
    part.build()
}

fn unknown(kind: &str, raw: &Value) -> Value {
    let mut part = Obj::new();
    part.put("part", str_value("unknown"))
        .put("provider", str_value(NAME))
        .put("kind", str_value(kind))
        .put("raw", raw.clone());
    part.build()
}

fn repr_opt(value: &Option<String>) -> String {
    match value {
        Some(text) => py_repr(&Value::Str(text.clone())),
        None => "None".to_owned(),
    }
}

/// Provider usage -> the normalized keys; every other key verbatim (the twin's `_usage`).
fn usage(raw: &Map) -> Value {
    let mut out = Map::default();
    for (key, value) in raw {
        if matches!(value, Value::Null) {
            continue;
        }
        let name = match key.as_str() {
            "prompt_tokens" => "input_tokens",
            "completion_tokens" => "output_tokens",
            other => other,
        };
        out.insert(name.to_owned(), value.clone());
    }
    if let Some(cached) = present(field(raw.get("prompt_tokens_details"), "cached_tokens")) {
        out.insert("cache_read_tokens".to_owned(), cached.clone());
    } else if let Some(hit) = present(raw.get("prompt_cache_hit_tokens")) {
        out.insert("cache_read_tokens".to_owned(), hit.clone());
    }
    if let Some(reasoning) = present(field(
        raw.get("completion_tokens_details"),
        "reasoning_tokens",
    )) {
        out.insert("reasoning_tokens".to_owned(), reasoning.clone());
    }
    dict(out)
}

/// Where a field is in the event, written only into an error message (no formatting on
/// the hot path): `choices[i]`, or `choices[i].delta.<list>[j]`.
#[derive(Clone, Copy)]
struct At {
    choice: usize,
    item: Option<(&'static str, usize)>,
}

impl fmt::Display for At {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "choices[{}]", self.choice)?;
        if let Some((list, j)) = self.item {
            write!(f, ".delta.{list}[{j}]")?;
        }
        Ok(())
    }
}

/// The id and name seen for a call.
type Identity = (Option<String>, Option<String>);

/// What the adapter remembers of one choice (the twin's `_Choice`).
#[derive(Debug, Default)]
struct Choice {
    calls: HashMap<i64, Identity>,
    open_call: Option<Identity>,
    /// indexes whose call in the fold provably has a type (a fragment with a type went to the
    /// call at that index, and no fragment since could have put another call there): a later
    /// type at such an index changes nothing (set once), so the fast path may read it
    typed_calls: HashSet<i64>,
    finished: bool,
    /// the id, model and provider_metadata entries last sent to the fold, but those of
    /// [`TOP_KEYS`]: in `top`, by position
    sent: HashMap<String, Value>,
    /// what was last sent under each of [`TOP_KEYS`]: the fast path checks them on every
    /// chunk, by position rather than by hashing the key
    top: [Option<Value>; TOP_KEYS.len()],
}

/// The slot of `reasoning_field` in [`TOP_KEYS`].
const REASONING_FIELD: usize = 6;

/// The entries every chunk carries, in [`Choice::top`].
const TOP_KEYS: [&str; 7] = [
    "response_id",
    "response_model",
    "created",
    "object",
    "system_fingerprint",
    "service_tier",
    "reasoning_field",
];

impl Choice {
    /// What was last sent under `key`, where it is kept.
    fn sent_at(&mut self, key: &str) -> Option<&mut Option<Value>> {
        let slot = TOP_KEYS.iter().position(|k| *k == key)?;
        self.top.get_mut(slot)
    }

    fn set(&mut self, key: &str, value: &Value) {
        match self.sent_at(key) {
            Some(slot) => *slot = Some(value.clone()),
            None => {
                self.sent.insert(key.to_owned(), value.clone());
            }
        }
    }

    /// Whether `value` differs from what was last sent under `key` (and remember it if so):
    /// the twin's `_Choice.changed`, entry by entry.
    fn fresh(&mut self, key: &str, value: &Value) -> bool {
        if let Some(slot) = TOP_KEYS.iter().position(|k| *k == key) {
            return self.fresh_top(slot, value);
        }
        if self.sent.get(key) == Some(value) {
            return false;
        }
        self.sent.insert(key.to_owned(), value.clone());
        true
    }

    /// [`Self::fresh`] under `TOP_KEYS[slot]`.
    fn fresh_top(&mut self, slot: usize, value: &Value) -> bool {
        match self.top.get_mut(slot) {
            Some(last) if last.as_ref() != Some(value) => {
                *last = Some(value.clone());
                true
            }
            _ => false,
        }
    }

    /// [`Self::fresh`] of a str under `TOP_KEYS[slot]`, without building the value unless it
    /// is sent: the value to send, or None.
    fn fresh_top_str(&mut self, slot: usize, text: &str) -> Option<Value> {
        let last = self.top.get_mut(slot)?;
        if matches!(last, Some(Value::Str(sent)) if sent == text) {
            return None;
        }
        let value = str_value(text);
        *last = Some(value.clone());
        Some(value)
    }

    /// Record what a leaf sent whole (a chunk without choices): the twin's `remember`.
    fn remember(&mut self, top: &Top) {
        for (key, value) in top.fields.iter().chain(top.meta.iter()) {
            if *key != "prompt_token_ids" {
                self.set(key, value);
            }
        }
        if let Some(response) = &top.response {
            self.set("response", response);
        }
    }
}

/// The leaf fields of a chunk's top level (the twin's `_top` without the choice's part),
/// borrowed from the event: nothing is copied unless it is sent.
struct Top<'a> {
    usage: Option<Value>,
    /// response_id, response_model, prompt_token_ids
    fields: Vec<(&'static str, &'a Value)>,
    /// created, object, system_fingerprint, service_tier
    meta: Vec<(&'static str, &'a Value)>,
    /// the other top-level keys (provider_metadata["response"])
    response: Option<Value>,
}

/// OpenAI Chat Completions chunks -> leaves.
#[derive(Debug, Default)]
pub struct Adapter {
    /// per choice index, in the order first seen
    choices: IndexMap<i64, Choice>,
    /// the chunk id when a choice first finished
    finished_id: FinishedId,
    /// chunks read by the typed path whose like is read by comparing bytes (fast.rs)
    templates: fast::Templates,
    /// the choices of the last event that are not objects, while others were (`unread`)
    unread: Vec<String>,
    /// the typed path just read the usage chunk, which ends the stream (`fast_ended`)
    ended: bool,
}

impl Adapter {
    pub fn new() -> Self {
        Self::default()
    }

    /// The choices a chunk without choices speaks for: every choice seen, else 0.
    fn targets(&mut self) -> Vec<i64> {
        if self.choices.is_empty() {
            self.choices.insert(0, Choice::default());
        }
        self.choices.keys().copied().collect()
    }

    fn top<'a>(event: &'a Map, usage_value: Option<&Value>) -> Top<'a> {
        let usage = match usage_value {
            Some(Value::Dict(raw)) => Some(usage(raw)),
            _ => None,
        };
        let mut fields: Vec<(&'static str, &'a Value)> = Vec::with_capacity(3);
        for (key, name) in [
            ("id", "response_id"),
            ("model", "response_model"),
            ("prompt_token_ids", "prompt_token_ids"),
        ] {
            if let Some(value) = present(event.get(key)) {
                fields.push((name, value));
            }
        }
        let mut meta: Vec<(&'static str, &'a Value)> = Vec::with_capacity(TOP_METADATA.len());
        for key in TOP_METADATA {
            if let Some(value) = present(event.get(*key)) {
                if !is_empty_str(value) {
                    meta.push((key, value));
                }
            }
        }
        let extra = others(event, TOP_KNOWN);
        let response = (!extra.is_empty()).then(|| dict(extra));
        Top {
            usage,
            fields,
            meta,
            response,
        }
    }

    /// `top` with the choice's own provider_metadata, as leaf entries; with a choice's
    /// state, only the id, model and provider_metadata entries that changed since they were
    /// last sent (the twin's `_Choice.changed`).
    fn put_top(leaf: &mut Obj, top: &Top, pm: Map, mut state: Option<&mut Choice>) {
        if let Some(usage) = &top.usage {
            leaf.put("usage", usage.clone());
        }
        for (key, value) in &top.fields {
            if let Some(state) = state.as_deref_mut() {
                if *key != "prompt_token_ids" && !state.fresh(key, value) {
                    continue;
                }
            }
            leaf.put(key, (*value).clone());
        }
        let mut meta = Map::default();
        let response = top.response.as_ref().map(|value| ("response", value));
        let entries = top.meta.iter().map(|(k, v)| (*k, *v)).chain(response);
        for (key, value) in entries.chain(pm.iter().map(|(k, v)| (k.as_str(), v))) {
            if let Some(state) = state.as_deref_mut() {
                if !state.fresh(key, value) {
                    continue;
                }
            }
            meta.insert(key.to_owned(), value.clone());
        }
        if !meta.is_empty() {
            leaf.put("provider_metadata", dict(meta));
        }
    }
}

impl common::Adapter for Adapter {
    fn event(&mut self, event: &Value) -> Result<Leaves, String> {
        self.templates.clear();
        let Value::Dict(map) = event else {
            return Err("the event is not an object".to_owned());
        };
        let choices: &[Value] = match present(map.get("choices")) {
            None => &[],
            Some(Value::List(items)) => items,
            Some(_) => return Err("choices is not a list".to_owned()),
        };
        let mut usage_value = present(map.get("usage"));
        if let Some(value) = usage_value {
            if !matches!(value, Value::Dict(_)) {
                return Err("usage is not an object".to_owned());
            }
        }
        for key in ["id", "model"] {
            text_field(map.get(key), key)?;
        }
        if !matches!(
            present(map.get("prompt_token_ids")),
            None | Some(Value::List(_))
        ) {
            return Err("prompt_token_ids is not a list".to_owned());
        }
        if usage_value.is_none() {
            if let Some(groq_usage @ Value::Dict(_)) = field(map.get("x_groq"), "usage") {
                usage_value = Some(groq_usage);
            }
        }
        let top = Self::top(map, usage_value);
        let mut leaves: Leaves = Vec::with_capacity(choices.len().max(1));
        // a choice that is not an object is not read, the others are (E90); an event with
        // no choice that is an object is not read at all
        self.unread.clear();
        let some_object = choices.iter().any(|c| matches!(c, Value::Dict(_)));
        for (i, choice) in choices.iter().enumerate() {
            if some_object && !matches!(choice, Value::Dict(_)) {
                let at = At {
                    choice: i,
                    item: None,
                };
                self.unread.push(format!("{at} is not an object"));
                continue;
            }
            let leaf = self.choice(&top, i, choice)?;
            leaves.push(leaf);
        }
        let choices_seen = &self.choices;
        self.finished_id
            .track(map.get("id"), || choices_seen.values().any(|c| c.finished));
        if choices.is_empty() {
            let mut leaf = Obj::new();
            Self::put_top(&mut leaf, &top, Map::default(), None);
            if !leaf.is_empty() {
                let leaf = leaf.build();
                for index in self.targets() {
                    if let Some(state) = self.choices.get_mut(&index) {
                        state.remember(&top);
                    }
                    leaves.push((index, leaf.clone()));
                }
            }
        }
        if let Some(error) = present(map.get("error")) {
            let mut meta = Obj::new();
            meta.put("error", error.clone());
            let mut failed = Obj::new();
            failed
                .put("status", str_value("failed"))
                .put("provider_metadata", meta.build());
            let failed = failed.build();
            for index in self.targets() {
                leaves.push((index, failed.clone()));
            }
        }
        Ok(leaves)
    }

    fn fast_event<'a>(&mut self, raw: &'a [u8]) -> Option<common::FastLeaves<'a>> {
        fast::fast_event(self, raw)
    }

    fn fast_ended(&mut self) -> bool {
        std::mem::take(&mut self.ended)
    }

    fn unread(&mut self) -> Vec<String> {
        std::mem::take(&mut self.unread)
    }

    /// The `stream_options.include_usage` chunk (non-null `usage`, `choices: []`) is always
    /// sent last.
    fn ends_stream(&self, event: &Value) -> bool {
        let usage = crate::engine::providers::common::get(event, "usage");
        let choices = crate::engine::providers::common::get(event, "choices");
        !matches!(usage, None | Some(Value::Null))
            && matches!(choices, Some(Value::List(items)) if items.is_empty())
    }

    fn knows(&self, event: &Value) -> bool {
        common::has_any(event, RECOGNIZED)
    }

    /// An id other than the one a choice finished with (Groq compound changes the id on every
    /// chunk before the finish, so ids before it say nothing).
    fn new_response(&self, event: &Value) -> Option<String> {
        let (id, finished) = self.finished_id.other(common::get(event, "id"))?;
        Some(format!(
            "id {} after a choice finished with id {}",
            py_repr(&str_value(id)),
            py_repr(&str_value(finished))
        ))
    }

    fn may_start_response(&self, _raw: &[u8]) -> bool {
        self.finished_id.finished().is_some()
    }

    fn end(&mut self) -> Leaves {
        let mut leaves: Leaves = Vec::new();
        for (index, state) in &self.choices {
            if let (Some((id, name)), false) = (&state.open_call, state.finished) {
                let detail = format!(
                    "choice {index}: the stream ended inside tool call {} ({}) without a \
                     finish_reason; its arguments are kept as streamed",
                    repr_opt(id),
                    repr_opt(name)
                );
                let mut leaf = Obj::new();
                let cut = common::cut_call_anomaly(detail, id.as_deref(), name.as_deref(), None);
                leaf.put("anomalies", list_value(vec![cut]));
                leaves.push((*index, leaf.build()));
            }
        }
        leaves
    }
}
