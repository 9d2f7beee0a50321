//! The `"gemini"` adapter (the twin's `_pure/providers/gemini/`, whose module docstring
//! states the mapping): Gemini `streamGenerateContent` chunks to delta leaves. Function for
//! function the twin's, producing the same leaves (same keys in the same order, same anomaly
//! and error text).
//!
//! This file holds the adapter and the chunk-level reading (shared fields, usage, one
//! candidate's leaf); `gemini/candidate.rs` a candidate's state, `gemini/parts.rs` the reading
//! of a content part, `gemini/partial_args.rs` Vertex AI's streamed arguments.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::engine::value::Map;

use crate::engine::providers::common::{
    self, anomaly, get, list_value, str_value, FinishedId, Leaves, Obj,
};
use crate::engine::text::is_absent_text;
use crate::engine::value::{py_float, py_repr, Value};

mod candidate;
mod partial_args;
mod parts;
use candidate::Candidate;
use partial_args::{cut, Streamed};

const NAME: &str = "gemini";
const CANDIDATE_FIELDS: &[&str] = &["content", "index", "finishReason", "logprobsResult"];
const RESPONSE_FIELDS: &[&str] = &["candidates", "usageMetadata", "modelVersion", "responseId"];
const CALL_FIELDS: &[&str] = &["name", "id", "args", "partialArgs", "willContinue"];
/// Keys that make an event a `GenerateContentResponse` chunk.
const RECOGNIZED: &[&str] = &[
    "candidates",
    "usageMetadata",
    "promptFeedback",
    "modelVersion",
    "responseId",
    "createTime",
    "error",
];
/// The key of a call's `extra` holding the fields of its part beside `functionCall`
/// (`partMetadata`, ...): not a name the API can send (its names are identifiers).
const PART_FIELDS: &str = "@part";
const VALUE_KEYS: &[&str] = &["stringValue", "numberValue", "boolValue", "nullValue"];

type R<T> = Result<T, String>;

/// Where a part is (its path is written only for an error or an anomaly: the hot path makes
/// no strings).
#[derive(Debug, Clone, Copy)]
struct At {
    candidate: usize,
    part: usize,
}

impl At {
    fn part(self) -> String {
        format!(
            "candidates[{}].content.parts[{}]",
            self.candidate, self.part
        )
    }
    fn call(self) -> String {
        format!("{}.functionCall", self.part())
    }
    fn arg(self, item: usize) -> String {
        format!("{}.partialArgs[{item}]", self.call())
    }
}

/// `value.get(key)` that is neither missing nor null (the twin's `x.get(k) is not None`).
fn field<'a>(value: &'a Value, key: &str) -> Option<&'a Value> {
    match get(value, key) {
        None | Some(Value::Null) => None,
        some => some,
    }
}

/// The JSON kind of a value, for error details (the twin's `kind_name`); missing is null.
fn kind(value: Option<&Value>) -> &'static str {
    value.map_or("null", crate::engine::events::kind_name)
}

fn expect(value: Option<&Value>, want: &str, path: impl FnOnce() -> String) -> R<()> {
    let got = kind(value);
    if got != want {
        let path = path();
        let article = if want == "array" || want == "object" {
            "an"
        } else {
            "a"
        };
        return Err(format!("{path} must be {article} {want}, got {got}"));
    }
    Ok(())
}

fn absent(value: Option<&Value>) -> bool {
    match value {
        None | Some(Value::Null) => true,
        Some(Value::Str(text)) => is_absent_text(text),
        _ => false,
    }
}

fn is_true(value: Option<&Value>) -> bool {
    matches!(value, Some(Value::Bool(true)))
}

/// `value` without its null members at every depth, or None when it holds none. The API never
/// sends a null (its JSON omits unset fields); a null in a part is an SDK's unset field
/// (`model_dump()`), read as absent: a part with and without them is the same part.
fn without_nulls(value: &Value) -> Option<Value> {
    if !has_null(value) {
        return None;
    }
    Some(match value {
        Value::Dict(map) => dict(
            map.iter()
                .filter(|(_, v)| !matches!(v, Value::Null))
                .map(|(k, v)| (k.clone(), without_nulls(v).unwrap_or_else(|| v.clone())))
                .collect(),
        ),
        Value::List(items) => Value::List(Arc::new(
            items
                .iter()
                .map(|v| without_nulls(v).unwrap_or_else(|| v.clone()))
                .collect(),
        )),
        other => other.clone(),
    })
}

fn has_null(value: &Value) -> bool {
    match value {
        Value::Dict(map) => map
            .values()
            .any(|v| matches!(v, Value::Null) || has_null(v)),
        Value::List(items) => items.iter().any(has_null),
        _ => false,
    }
}

fn payload(data: &Value) -> Value {
    let mut p = Obj::new();
    p.put("provider", str_value(NAME))
        .put("kind", str_value("thought_signature"))
        .put("data", data.clone());
    p.build()
}

fn dict(map: Map) -> Value {
    Value::Dict(Arc::new(map))
}

fn opt_repr(value: Option<&str>) -> String {
    match value {
        Some(text) => py_repr(&Value::Str(text.to_owned())),
        None => "None".to_owned(),
    }
}

/// `usageMetadata` -> usage: the normalized counts, then every key verbatim.
fn usage(meta: &Value) -> Value {
    let mut out: Map = Map::default();
    let int = |key: &str| match get(meta, key) {
        Some(Value::Int(i)) => Some(*i),
        _ => None,
    };
    let prompt = int("promptTokenCount");
    let tools = int("toolUsePromptTokenCount");
    let candidates = int("candidatesTokenCount");
    let thoughts = field(meta, "thoughtsTokenCount");
    let thought_count = int("thoughtsTokenCount");
    if prompt.is_some() || tools.is_some() {
        out.insert(
            "input_tokens".to_owned(),
            Value::Int(prompt.unwrap_or(0).saturating_add(tools.unwrap_or(0))),
        );
    }
    if candidates.is_some() || thought_count.is_some() {
        out.insert(
            "output_tokens".to_owned(),
            Value::Int(
                candidates
                    .unwrap_or(0)
                    .saturating_add(thought_count.unwrap_or(0)),
            ),
        );
    }
    if let Some(total) = field(meta, "totalTokenCount") {
        out.insert("total_tokens".to_owned(), total.clone());
    }
    if let Some(cached) = field(meta, "cachedContentTokenCount") {
        out.insert("cache_read_tokens".to_owned(), cached.clone());
    }
    if let Some(t) = thoughts {
        out.insert("reasoning_tokens".to_owned(), t.clone());
    }
    if let Value::Dict(map) = meta {
        for (k, v) in map.iter() {
            if !out.contains_key(k) {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    dict(out)
}

/// Gemini `GenerateContentResponse` chunks -> leaves (the twin's `Adapter`).
#[derive(Debug, Default)]
pub struct Adapter {
    candidates: BTreeMap<i64, Candidate>,
    /// the responseId when a candidate first finished
    finished_id: FinishedId,
}

impl Adapter {
    pub fn new() -> Self {
        Self::default()
    }

    /// The fields every candidate leaf of this chunk gets (in leaf order).
    fn shared(event: &Value, usage_meta: Option<&Value>) -> Vec<(&'static str, Value)> {
        let mut shared = Vec::new();
        let mut metadata = Obj::new();
        if let Value::Dict(map) = event {
            for (k, v) in map.iter() {
                if !RESPONSE_FIELDS.contains(&k.as_str()) && !matches!(v, Value::Null) {
                    metadata.put(k, v.clone());
                }
            }
        }
        let error = field(event, "error");
        let blocked = match field(event, "promptFeedback") {
            Some(feedback @ Value::Dict(_)) => !absent(get(feedback, "blockReason")),
            _ => false,
        };
        if error.is_some() || blocked {
            shared.push(("status", str_value("failed")));
        }
        if let Some(u) = usage_meta {
            shared.push(("usage", usage(u)));
        }
        if let Some(id) = field(event, "responseId") {
            shared.push(("response_id", id.clone()));
        }
        if let Some(model) = field(event, "modelVersion") {
            shared.push(("response_model", model.clone()));
        }
        if !metadata.is_empty() {
            shared.push(("provider_metadata", metadata.build()));
        }
        shared
    }

    fn candidate(
        &mut self,
        choice: i64,
        candidate: &Value,
        number: usize,
        shared: &[(&'static str, Value)],
    ) -> R<Value> {
        let state = self.candidates.entry(choice).or_default();
        let mut leaf = Obj::new();
        let mut anomalies: Vec<Value> = Vec::new();
        let mut out = Vec::new();
        leaf.put("role", str_value("assistant"));
        if let Some(content) = field(candidate, "content") {
            expect(Some(content), "object", || {
                format!("candidates[{number}].content")
            })?;
            if let Some(r) = field(content, "role") {
                expect(Some(r), "string", || {
                    format!("candidates[{number}].content.role")
                })?;
            }
            match field(content, "role") {
                None => {}
                Some(Value::Str(r)) if r == "model" => {}
                Some(other) => {
                    leaf.put("role", other.clone());
                }
            }
            if let Some(parts) = field(content, "parts") {
                expect(Some(parts), "array", || {
                    format!("candidates[{number}].content.parts")
                })?;
                for (item, part) in common::items(Some(parts)).iter().enumerate() {
                    let at = At {
                        candidate: number,
                        part: item,
                    };
                    expect(Some(part), "object", || at.part())?;
                    state.part(part, at, &mut out, &mut anomalies)?;
                }
            }
        }
        let moved = match field(candidate, "citationMetadata") {
            Some(citations @ Value::Dict(map)) if !map.is_empty() => {
                state.citations(citations, &mut out);
                true
            }
            _ => false,
        };
        if !out.is_empty() {
            leaf.put("parts", list_value(out));
        }
        let reason = get(candidate, "finishReason");
        if let Some(r) = field(candidate, "finishReason") {
            expect(Some(r), "string", || {
                format!("candidates[{number}].finishReason")
            })?;
        }
        if !absent(reason) {
            if let Some(streamed) = state.streamed.take() {
                anomalies.push(cut(&streamed));
            }
            if let Some(r) = reason {
                leaf.put("finish_reason", r.clone());
            }
            leaf.put("status", str_value("complete"));
            state.finished = true;
        }
        let mut response_metadata: Option<&Value> = None;
        for (key, value) in shared {
            if *key == "provider_metadata" {
                response_metadata = Some(value);
            } else {
                leaf.put(key, value.clone());
            }
        }
        if let Some(logprobs) = field(candidate, "logprobsResult") {
            leaf.put("logprobs", logprobs.clone());
        }
        let mut metadata: Map = match response_metadata {
            Some(Value::Dict(map)) => (**map).clone(),
            _ => Map::default(),
        };
        let mut extra = Obj::new();
        if let Value::Dict(map) = candidate {
            for (k, v) in map.iter() {
                let skip = CANDIDATE_FIELDS.contains(&k.as_str())
                    || matches!(v, Value::Null)
                    || (moved && k == "citationMetadata");
                if !skip {
                    extra.put(k, v.clone());
                }
            }
        }
        if !extra.is_empty() {
            metadata.insert("candidate".to_owned(), extra.build());
        }
        if !metadata.is_empty() {
            leaf.put("provider_metadata", dict(metadata));
        }
        if !anomalies.is_empty() {
            leaf.put("anomalies", list_value(anomalies));
        }
        Ok(leaf.build())
    }
}

impl common::Adapter for Adapter {
    fn event(&mut self, event: &Value) -> R<Leaves> {
        let candidates_value = field(event, "candidates");
        if let Some(c) = candidates_value {
            expect(Some(c), "array", || "candidates".to_owned())?;
        }
        let candidates: &[Value] = common::items(candidates_value);
        let usage_meta = field(event, "usageMetadata");
        if let Some(u) = usage_meta {
            expect(Some(u), "object", || "usageMetadata".to_owned())?;
        }
        for key in ["responseId", "modelVersion"] {
            if let Some(v) = field(event, key) {
                expect(Some(v), "string", || key.to_owned())?;
            }
        }
        let shared = Self::shared(event, usage_meta);
        let mut leaves: Leaves = Vec::new();
        for (number, candidate) in candidates.iter().enumerate() {
            expect(Some(candidate), "object", || {
                format!("candidates[{number}]")
            })?;
            let choice = match get(candidate, "index") {
                None | Some(Value::Null) => 0,
                Some(Value::Int(i)) => *i,
                other => {
                    return Err(format!(
                        "candidates[{number}].index must be an integer, got {}",
                        kind(other)
                    ))
                }
            };
            let leaf = self.candidate(choice, candidate, number, &shared)?;
            leaves.push((choice, leaf));
        }
        if candidates.is_empty() && !shared.is_empty() {
            let mut choices: Vec<i64> = self.candidates.keys().copied().collect();
            if choices.is_empty() {
                choices.push(0);
            }
            for choice in choices {
                let mut leaf = Obj::new();
                for (key, value) in &shared {
                    leaf.put(key, value.clone());
                }
                leaves.push((choice, leaf.build()));
            }
        }
        let candidates = &self.candidates;
        self.finished_id.track(field(event, "responseId"), || {
            candidates.values().any(|c| c.finished)
        });
        Ok(leaves)
    }

    fn knows(&self, event: &Value) -> bool {
        common::has_any(event, RECOGNIZED)
    }

    /// A responseId other than the one a candidate finished with (a chunk after the finish,
    /// such as a last usage chunk, repeats it).
    fn new_response(&self, event: &Value) -> Option<String> {
        let (id, finished) = self.finished_id.other(field(event, "responseId"))?;
        Some(format!(
            "responseId {} after a candidate finished with {}",
            py_repr(&str_value(id)),
            py_repr(&str_value(finished))
        ))
    }

    fn may_start_response(&self, _raw: &[u8]) -> bool {
        self.finished_id.finished().is_some()
    }

    fn end(&mut self) -> Leaves {
        let mut leaves = Vec::new();
        for (choice, state) in self.candidates.iter_mut() {
            if let Some(streamed) = state.streamed.take() {
                let mut leaf = Obj::new();
                leaf.put("anomalies", list_value(vec![cut(&streamed)]));
                leaves.push((*choice, leaf.build()));
            }
        }
        leaves
    }
}
