//! What every adapter shares (the twin's `_pure/providers/_common.py`): the [`Adapter`]
//! trait, and small readers and builders of [`Value`]s.

use std::borrow::Cow;
use std::sync::Arc;

use crate::engine::text::is_absent_text;
use crate::engine::value::Map;

use crate::engine::value::Value;

/// The leaves of one event, each with its choice index, in order.
pub type Leaves = Vec<(i64, Value)>;

/// A leaf of a typed fast path ([`Adapter::fast_event`]): a leaf, or one that would be nothing
/// but one delta (most events of a stream), left unbuilt with its text borrowed from the
/// event's bytes: the fold appends the text without walking a leaf, and copies it once.
#[derive(Debug, Clone)]
pub enum FastLeaf<'a> {
    Leaf(Value),
    /// `{"parts": [{"part": "text" | "reasoning", "text": text, "index"?: index}]}`
    Text {
        text: Cow<'a, str>,
        reasoning: bool,
        index: Option<i64>,
    },
    /// `{"parts": [{"part": "text" | "reasoning", "text": text}], "logprobs": logprobs}`: a
    /// token delta with its logprobs
    TextLogprobs {
        text: Cow<'a, str>,
        reasoning: bool,
        logprobs: Value,
    },
    /// `{"parts": [{"part": "tool_call", "provider_index": index, "arguments": arguments}]}`
    Arguments {
        arguments: Cow<'a, str>,
        index: i64,
    },
}

impl FastLeaf<'_> {
    /// The leaf itself.
    pub fn build(self) -> Value {
        let part = match self {
            FastLeaf::Leaf(leaf) => return leaf,
            FastLeaf::Text {
                text,
                reasoning,
                index,
            } => text_part(&text, reasoning, index),
            FastLeaf::TextLogprobs {
                text,
                reasoning,
                logprobs,
            } => {
                let mut leaf = Obj::new();
                leaf.put("parts", list_value(vec![text_part(&text, reasoning, None)]));
                leaf.put("logprobs", logprobs);
                return leaf.build();
            }
            FastLeaf::Arguments { arguments, index } => arguments_part(&arguments, index),
        };
        let mut leaf = Obj::new();
        leaf.put("parts", list_value(vec![part]));
        leaf.build()
    }
}

/// A text or reasoning delta's part: `{"part": "text" | "reasoning", "text": text, "index"?:
/// index}`.
pub fn text_part(text: &str, reasoning: bool, index: Option<i64>) -> Value {
    let mut part = Obj::new();
    let kind = if reasoning { "reasoning" } else { "text" };
    part.put("part", str_value(kind))
        .put("text", str_value(text));
    if let Some(index) = index {
        part.put("index", Value::Int(index));
    }
    part.build()
}

/// A tool call's arguments fragment: `{"part": "tool_call", "provider_index": index,
/// "arguments": arguments}`.
pub fn arguments_part(arguments: &str, index: i64) -> Value {
    let mut part = Obj::new();
    part.put("part", str_value("tool_call"))
        .put("provider_index", Value::Int(index))
        .put("arguments", str_value(arguments));
    part.build()
}

/// The leaves of a typed fast path, each with its choice index, in order.
pub type FastLeaves<'a> = Vec<(i64, FastLeaf<'a>)>;

/// Sets a typed fast path's `slot` once: a key given twice fails the parse (the generic
/// path's reading of such an event is its own).
pub fn once<T, E: serde::de::Error>(slot: &mut Option<T>, value: T) -> Result<(), E> {
    match slot.replace(value) {
        Some(_) => Err(E::custom("a key twice")),
        None => Ok(()),
    }
}

/// A str of a typed fast path's event, borrowed from its bytes unless it holds an escape.
/// (serde reads an `Option<Cow<str>>` field as an owned copy, whatever `borrow` says; a
/// newtype of a borrowed `Cow` inside the `Option` is read in place.)
#[derive(serde::Deserialize)]
pub struct Str<'a>(#[serde(borrow)] pub Cow<'a, str>);

impl std::ops::Deref for Str<'_> {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

/// Whether the values of keys no step reads (a gateway's, a newer API's), members at level
/// `depth` of the event ([`crate::engine::events::parse_member`]), are read by the generic
/// parse (its limits, its numbers): a typed fast path keeps none of them where the generic
/// path keeps none, but an event the generic parse could not read is left to it.
pub fn read_alike(extra: &[&serde_json::value::RawValue], depth: usize) -> bool {
    extra.iter().all(|raw| {
        let raw = raw.get().as_bytes();
        // a literal, or a string without escapes: read by any parse alike (serde checked it)
        let plain = matches!(raw, b"true" | b"false" | b"null")
            || (raw.first() == Some(&b'"') && !raw.contains(&b'\\'));
        plain || crate::engine::events::parse_member(raw, depth).is_ok()
    })
}

/// A struct of a typed fast path, read from a JSON object only. serde's derived structs also
/// read a JSON array as their fields in order (`[0, {"content": "hi"}, "stop"]` as a choice,
/// `[]` as a choice of defaults), where the generic path finds an array that is not an
/// object (E90): with this the typed parse fails, and the event takes the generic path.
pub struct Object<T>(pub T);

impl<T> std::ops::Deref for Object<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<'de, T: serde::Deserialize<'de>> serde::Deserialize<'de> for Object<T> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Fields<T>(std::marker::PhantomData<T>);
        impl<'de, T: serde::Deserialize<'de>> serde::de::Visitor<'de> for Fields<T> {
            type Value = T;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
                T::deserialize(serde::de::value::MapAccessDeserializer::new(map))
            }
        }
        deserializer
            .deserialize_map(Fields(std::marker::PhantomData))
            .map(Object)
    }
}

/// One wire format: provider events in, delta leaves out (see the module docs of
/// [`crate::engine::providers`]). The twin's adapter classes, method for method.
pub trait Adapter: Send + Sync {
    /// The leaves one event contributes; `Err(detail)` for an event the adapter cannot map
    /// (the twin's `AdapterError(detail)`, same text).
    fn event(&mut self, event: &Value) -> Result<Leaves, String>;
    /// Whether the event has a key (or a `type`) this wire format sends (spec §8): the
    /// aggregator reads no other event, it records it as `unrecognized_event`.
    fn knows(&self, event: &Value) -> bool;
    /// Why the event starts another response, or None (spec §6): the aggregator then merges
    /// none of the events from it on (`new_response`).
    fn new_response(&self, event: &Value) -> Option<String>;
    /// Whether an event with this JSON text may start another response (a cheap look before
    /// [`Self::new_response`], which needs the event parsed): false only when
    /// `new_response` gives None for it whatever it holds. The batch engine asks it of every
    /// record of a stream it splits at `new_response`.
    fn may_start_response(&self, _raw: &[u8]) -> bool {
        true
    }
    /// The leaves of an event read straight from its JSON bytes, when the adapter has a typed
    /// fast path for its shape: then the same leaves [`Self::event`] gives for the parsed
    /// event (which the adapter knows and which starts no other response), with the same
    /// state changes. None, with the adapter untouched, for any other event.
    fn fast_event<'a>(&mut self, _raw: &'a [u8]) -> Option<FastLeaves<'a>> {
        None
    }
    /// [`Self::fast_event`] for an event held as objects whose fields the caller read: a
    /// delta event `{"type": event_type, "index": index, "delta": {"type": delta_type, field:
    /// text}}` with exactly these keys. The same leaves and state changes as
    /// [`Self::fast_event`] gives for that event's JSON text; None, with the adapter untouched,
    /// where it would decline (and by default).
    fn fast_delta<'a>(
        &mut self,
        _event_type: &str,
        _index: i64,
        _delta_type: &str,
        _field: &str,
        _text: &'a str,
    ) -> Option<FastLeaves<'a>> {
        None
    }
    /// Whether the event is the stream's definitive last one (the batch engine emits the
    /// stream there, without waiting for the end of input). None by default (Gemini).
    /// [`Self::fast_event`] reads such an event only where [`Self::fast_ended`] then says so.
    fn ends_stream(&self, _event: &Value) -> bool {
        false
    }
    /// Whether the event [`Self::fast_event`] just read ends the stream ([`Self::ends_stream`]
    /// of its parsed tree), asked once after each event it reads (and reset by asking).
    fn fast_ended(&mut self) -> bool {
        false
    }
    /// The parts of the event just read by [`Self::event`] that could not be read while the
    /// rest of it was (an openai-chat choice that is not an object, E90): for each, the
    /// detail of an `unreadable_event` anomaly (an `EventError` under `strict=True`).
    fn unread(&mut self) -> Vec<String> {
        Vec::new()
    }
    /// Leaves at the end of the stream.
    fn end(&mut self) -> Leaves {
        Vec::new()
    }
}

/// `event.get(key)` of a dict (None for a missing key or a value that is not a dict).
pub fn get<'a>(value: &'a Value, key: &str) -> Option<&'a Value> {
    match value {
        Value::Dict(map) => map.get(key),
        _ => None,
    }
}

/// `value.get(key)` when it is a str.
pub fn get_str<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    match get(value, key) {
        Some(Value::Str(text)) => Some(text),
        _ => None,
    }
}

/// `value.get(key)` when it is an int.
pub fn get_int(value: &Value, key: &str) -> Option<i64> {
    match get(value, key) {
        Some(Value::Int(i)) => Some(*i),
        _ => None,
    }
}

/// The items of a list (empty for anything else).
pub fn items(value: Option<&Value>) -> &[Value] {
    match value {
        Some(Value::List(items)) => items,
        _ => &[],
    }
}

/// `value` when it is missing, null or a str (None for missing and null), else the error
/// "`at` is not a string" (the twin's `text_field`): the check of ids, models, roles, stop
/// reasons and tool names in every adapter (another kind there would fail later, in the fold).
/// `at` is formatted only for the error (pass `format_args!` on a hot path).
pub fn text_field(
    value: Option<&Value>,
    at: impl std::fmt::Display,
) -> Result<Option<&Value>, String> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(text @ Value::Str(_)) => Ok(Some(text)),
        Some(_) => Err(format!("{at} is not a string")),
    }
}

/// Whether a dict value has one of `keys`.
pub fn has_any(value: &Value, keys: &[&str]) -> bool {
    matches!(value, Value::Dict(map) if keys.iter().any(|k| map.contains_key(*k)))
}

/// Missing or null.
pub fn is_null(value: Option<&Value>) -> bool {
    matches!(value, None | Some(Value::Null))
}

/// A str value.
pub fn str_value(text: &str) -> Value {
    Value::Str(text.to_owned())
}

/// A list value.
pub fn list_value(items: Vec<Value>) -> Value {
    Value::List(Arc::new(items))
}

/// Builds a dict in insertion order (the twin's dict literal; key order is part of results).
#[derive(Default, Debug, Clone)]
pub struct Obj(Map);

impl Obj {
    pub fn new() -> Self {
        Obj(Map::default())
    }
    /// `d[key] = value`
    pub fn put(&mut self, key: &str, value: Value) -> &mut Self {
        self.0.insert(key.to_owned(), value);
        self
    }
    /// `d[key] = value` when `value` is Some.
    pub fn put_opt(&mut self, key: &str, value: Option<Value>) -> &mut Self {
        if let Some(value) = value {
            self.0.insert(key.to_owned(), value);
        }
        self
    }
    pub fn contains(&self, key: &str) -> bool {
        self.0.contains_key(key)
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    pub fn build(self) -> Value {
        Value::Dict(Arc::new(self.0))
    }
}

/// `{"code": code, "detail": detail}`, an anomaly a leaf carries (`"anomalies": [...]`).
pub fn anomaly(code: &str, detail: String) -> Value {
    let mut a = Obj::new();
    a.put("code", str_value(code))
        .put("detail", Value::Str(detail));
    a.build()
}

/// A str value's text; None for any other value (an id or a name that is not a str).
pub fn str_of(value: &Value) -> Option<&str> {
    match value {
        Value::Str(text) => Some(text),
        _ => None,
    }
}

/// The `truncated` anomaly of a tool call the stream cut: besides `code` and `detail`, the
/// call as data (`tool_call`: its `id` and / or `name`, as far as the stream named it, and the
/// `provider_index` its tool-call part carries, where the adapter knows it), so that a renderer
/// finds the cut call without reading the detail's text (the twin's `cut_call_anomaly`).
pub fn cut_call_anomaly(
    detail: String,
    id: Option<&str>,
    name: Option<&str>,
    provider_index: Option<i64>,
) -> Value {
    let mut call = Obj::new();
    if let Some(id) = id {
        call.put("id", str_value(id));
    }
    if let Some(name) = name {
        call.put("name", str_value(name));
    }
    if let Some(index) = provider_index {
        call.put("provider_index", Value::Int(index));
    }
    let mut a = Obj::new();
    a.put("code", str_value("truncated"))
        .put("detail", Value::Str(detail));
    if !call.is_empty() {
        a.put("tool_call", call.build());
    }
    a.build()
}

/// The id a response finished with (OpenAI chunk ids, Gemini `responseId`s; the twin's
/// `FinishedId`): a later chunk with another id starts another response (spec §6). Ids before
/// the finish say nothing (Groq compound sends a new id on every chunk), except that a chunk
/// with one of them is this response's (a stream logged twice, spec §6.1).
#[derive(Debug, Default)]
pub struct FinishedId {
    /// the last id before the finish
    last: Option<String>,
    finished: Option<String>,
    /// every id before the finish
    seen: foldhash::HashSet<String>,
}

impl FinishedId {
    /// After a chunk: its id, and whether a choice has finished by now. The id is copied only
    /// when it changes: every chunk repeats it.
    pub fn track(&mut self, value: Option<&Value>, finished: impl FnOnce() -> bool) {
        if self.finished.is_some() {
            return;
        }
        if let Some(Value::Str(id)) = value {
            if !is_absent_text(id) && self.last.as_deref() != Some(id.as_str()) {
                self.last = Some(id.clone());
                self.seen.insert(id.clone());
            }
        }
        if finished() {
            self.finished.clone_from(&self.last);
        }
    }

    /// [`Self::track`] of an id read as a str (the typed fast path).
    pub fn track_str(&mut self, id: Option<&str>, finished: bool) {
        if self.finished.is_some() {
            return;
        }
        if let Some(id) = id {
            if !is_absent_text(id) && self.last.as_deref() != Some(id) {
                self.last = Some(id.to_owned());
                self.seen.insert(id.to_owned());
            }
        }
        if finished {
            self.finished.clone_from(&self.last);
        }
    }

    /// The id a choice finished with, if one has.
    pub fn finished(&self) -> Option<&str> {
        self.finished.as_deref()
    }
}

/// Whether JSON text holds `word`, or an escape that could spell it (`\u`): a cheap look
/// for a member or value that can be read only after parsing.
pub fn may_hold(raw: &[u8], word: &[u8]) -> bool {
    memchr::memmem::find(raw, word).is_some() || memchr::memmem::find(raw, b"\\u").is_some()
}

impl FinishedId {
    /// `value` if it is an id other than the finished one and every one before it, with the
    /// finished one.
    pub fn other<'a>(&'a self, value: Option<&'a Value>) -> Option<(&'a str, &'a str)> {
        let finished = self.finished.as_deref()?;
        match value {
            Some(Value::Str(id))
                if !is_absent_text(id) && id != finished && !self.seen.contains(id.as_str()) =>
            {
                Some((id, finished))
            }
            _ => None,
        }
    }
}
