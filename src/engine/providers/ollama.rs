//! The `"ollama"` adapter (the twin's `_pure/providers/ollama.py`, whose docstring gives the
//! mapping): Ollama's `/api/generate` and `/api/chat` NDJSON objects to leaves of choice 0.
//! Function for function with the twin; same leaves, same key order, same error texts.

use std::sync::Arc;

use crate::engine::events::kind_name;
use crate::engine::providers::common::{self, get, list_value, str_value, text_field, Leaves, Obj};
use crate::engine::value::Value;

use crate::engine::value::Map;

/// Keys of an object the adapter reads itself (everything else goes to provider_metadata).
const READ: &[&str] = &[
    "model",
    "created_at",
    "response",
    "thinking",
    "message",
    "done",
    "done_reason",
    "prompt_eval_count",
    "eval_count",
    "logprobs",
    "error",
];
/// Keys of [`READ`] that other providers' events have too: they do not make an event Ollama's.
const SHARED: &[&str] = &["model", "created_at", "logprobs"];
const MESSAGE_READ: &[&str] = &["role", "content", "thinking", "tool_calls"];

/// `value` when present and not null.
fn present(value: Option<&Value>) -> Option<&Value> {
    value.filter(|v| !matches!(v, Value::Null))
}

/// Whether a present value is a non-empty string (an error if it is not a string).
fn text(field: &str, value: &Value) -> Result<bool, String> {
    match value {
        Value::Str(text) => Ok(!text.is_empty()),
        other => Err(format!(
            "{field} must be a string, got {}",
            kind_name(other)
        )),
    }
}

fn delta(kind: &str, value: &Value) -> Value {
    let mut part = Obj::new();
    part.put("part", str_value(kind)).put("text", value.clone());
    part.build()
}

/// Ollama NDJSON objects -> leaves (choice 0).
#[derive(Debug)]
pub struct Adapter {
    /// "generate" / "chat", once known
    api: Option<&'static str>,
    /// the last model sent to the fold
    model: Option<Value>,
    /// no object read yet
    first: bool,
    /// tool calls so far (their provider_index)
    calls: i64,
    /// the final object (done: true) was read
    done: bool,
    /// every `created_at` read: an object after `done` with one of them is the same
    /// response's (a stream logged twice, spec §6.1), not the start of another
    seen_at: foldhash::HashSet<String>,
}

impl Default for Adapter {
    fn default() -> Self {
        Adapter {
            api: None,
            model: None,
            first: true,
            calls: 0,
            done: false,
            seen_at: foldhash::HashSet::default(),
        }
    }
}

impl Adapter {
    pub fn new() -> Self {
        Self::default()
    }

    fn message(
        &mut self,
        message: &Map,
        parts: &mut Vec<Value>,
        metadata: &mut Map,
    ) -> Result<(), String> {
        if let Some(thinking) = present(message.get("thinking")) {
            if text("message.thinking", thinking)? {
                parts.push(delta("reasoning", thinking));
            }
        }
        if let Some(content) = present(message.get("content")) {
            if text("message.content", content)? {
                parts.push(delta("text", content));
            }
        }
        if let Some(calls) = present(message.get("tool_calls")) {
            let Value::List(calls) = calls else {
                return Err(format!(
                    "message.tool_calls must be an array, got {}",
                    kind_name(calls)
                ));
            };
            for call in calls.iter() {
                let part = self.call(call)?;
                parts.push(part);
            }
        }
        let other: Map = message
            .iter()
            .filter(|(k, _)| !MESSAGE_READ.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        if !other.is_empty() {
            metadata.insert("message".to_owned(), Value::Dict(Arc::new(other)));
        }
        Ok(())
    }

    fn call(&mut self, call: &Value) -> Result<Value, String> {
        let Value::Dict(call) = call else {
            return Err(format!(
                "message.tool_calls[] must be an object, got {}",
                kind_name(call)
            ));
        };
        let function = match call.get("function") {
            Some(Value::Dict(function)) => function,
            other => {
                return Err(format!(
                    "message.tool_calls[].function must be an object, got {}",
                    kind_name(other.unwrap_or(&Value::Null))
                ))
            }
        };
        let mut part = Obj::new();
        part.put("part", str_value("tool_call"));
        let id = text_field(call.get("id"), "message.tool_calls[].id")?;
        part.put_opt("id", id.cloned());
        let name = text_field(function.get("name"), "message.tool_calls[].function.name")?;
        part.put_opt("name", name.cloned());
        if let Some(arguments) = present(function.get("arguments")) {
            if !matches!(arguments, Value::Dict(_) | Value::Str(_)) {
                return Err(format!(
                    "message.tool_calls[].function.arguments must be an object, got {}",
                    kind_name(arguments)
                ));
            }
            part.put("arguments", arguments.clone());
        }
        part.put("provider_index", Value::Int(self.calls));
        self.calls += 1;
        let mut extra: Map = call
            .iter()
            .filter(|(k, _)| k.as_str() != "id" && k.as_str() != "function")
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let rest: Map = function
            .iter()
            .filter(|(k, _)| k.as_str() != "name" && k.as_str() != "arguments")
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        if !rest.is_empty() {
            extra.insert("function".to_owned(), Value::Dict(Arc::new(rest)));
        }
        if !extra.is_empty() {
            part.put("extra", Value::Dict(Arc::new(extra)));
        }
        Ok(part.build())
    }
}

impl common::Adapter for Adapter {
    fn event(&mut self, event: &Value) -> Result<Leaves, String> {
        let Value::Dict(map) = event else {
            return Err(format!(
                "an event must be an object, got {}",
                kind_name(event)
            ));
        };
        if let Some(Value::Str(at)) = map.get("created_at") {
            if !self.seen_at.contains(at.as_str()) {
                self.seen_at.insert(at.clone());
            }
        }
        let done = match present(map.get("done")) {
            None => false,
            Some(Value::Bool(done)) => *done,
            Some(other) => {
                return Err(format!("done must be a boolean, got {}", kind_name(other)));
            }
        };
        let mut leaf = Obj::new();
        let mut metadata = Map::default();
        let mut parts: Vec<Value> = Vec::new();
        let mut role: Option<Value> = None;
        let mut api: Option<&'static str> = None;
        if let Some(message) = present(map.get("message")) {
            let Value::Dict(message) = message else {
                return Err(format!(
                    "message must be an object, got {}",
                    kind_name(message)
                ));
            };
            api = Some("chat");
            role = text_field(message.get("role"), "message.role")?.cloned();
            self.message(message, &mut parts, &mut metadata)?;
        }
        if map.contains_key("response") || map.contains_key("thinking") {
            if api.is_none() {
                api = Some("generate");
            }
            if let Some(thinking) = present(map.get("thinking")) {
                if text("thinking", thinking)? {
                    parts.push(delta("reasoning", thinking));
                }
            }
            if let Some(response) = present(map.get("response")) {
                if text("response", response)? {
                    parts.push(delta("text", response));
                }
            }
        }
        if self.first {
            leaf.put("role", role.unwrap_or_else(|| str_value("assistant")));
        }
        if !parts.is_empty() {
            leaf.put("parts", list_value(parts));
        }
        if let Some(logprobs) = present(map.get("logprobs")) {
            leaf.put("logprobs", logprobs.clone());
        }
        if let Some(model) = text_field(map.get("model"), "model")? {
            if self.model.as_ref() != Some(model) {
                self.model = Some(model.clone());
                leaf.put("response_model", model.clone());
            }
        }
        if done {
            self.done = true;
            let reason = text_field(map.get("done_reason"), "done_reason")?;
            leaf.put_opt("finish_reason", reason.cloned());
            let mut usage = Obj::new();
            usage.put_opt(
                "input_tokens",
                present(map.get("prompt_eval_count")).cloned(),
            );
            usage.put_opt("output_tokens", present(map.get("eval_count")).cloned());
            if !usage.is_empty() {
                leaf.put("usage", usage.build());
            }
            leaf.put("status", str_value("complete"));
        }
        if let Some(error) = present(map.get("error")) {
            leaf.put("status", str_value("failed"));
            metadata.insert("error".to_owned(), error.clone());
        }
        if let Some(api) = api {
            if self.api != Some(api) {
                self.api = Some(api);
                metadata.insert("api".to_owned(), str_value(api));
            }
        }
        if let Some(created) = present(get(event, "created_at")) {
            if self.first || done {
                metadata.insert("created_at".to_owned(), created.clone());
            }
        }
        for (key, value) in map.iter() {
            if !READ.contains(&key.as_str()) {
                metadata.insert(key.clone(), value.clone());
            }
        }
        if !metadata.is_empty() {
            leaf.put("provider_metadata", Value::Dict(Arc::new(metadata)));
        }
        self.first = false;
        Ok(if leaf.is_empty() {
            Vec::new()
        } else {
            vec![(0, leaf.build())]
        })
    }

    /// The `done: true` object is the last of the stream.
    fn ends_stream(&self, event: &Value) -> bool {
        matches!(
            crate::engine::providers::common::get(event, "done"),
            Some(Value::Bool(true))
        )
    }

    fn knows(&self, event: &Value) -> bool {
        let Value::Dict(map) = event else {
            return false;
        };
        map.keys()
            .any(|k| READ.contains(&k.as_str()) && !SHARED.contains(&k.as_str()))
    }

    /// A response ends with its `done: true` object: any object after it is another's,
    /// unless its `created_at` is one this response's objects had (the same object again).
    fn new_response(&self, event: &Value) -> Option<String> {
        let again =
            common::get_str(event, "created_at").is_some_and(|at| self.seen_at.contains(at));
        (self.done && !again).then(|| "an object after done: true".to_owned())
    }

    fn may_start_response(&self, _raw: &[u8]) -> bool {
        self.done
    }
}
