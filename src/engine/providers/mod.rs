//! Provider adapters: one per wire format, each a mapping from a provider event to delta
//! *leaves* that the chunk fold ([`crate::engine::chunks`]) merges. The twin's
//! `_pure/providers/`, module for module; its package docstring states the contract:
//!
//! - [`Adapter::event`]: the leaves one event (a JSON object) contributes, with their choice
//!   index, in order; a leaf is the dict the chunk fold reads (`parts` with a part `index`,
//!   `usage`, `finish_reason`, `status`, `provider_metadata`, `anomalies`, ...).
//! - [`Adapter::end`]: leaves at the end of the stream (a call cut mid-arguments is flagged).
//! - [`Adapter::knows`]: whether an event is of this wire format (others are
//!   `unrecognized_event`, spec §8); [`Adapter::new_response`]: why an event starts another
//!   response (`new_response`, spec §6).
//!
//! Adapters keep per-stream state, never a merged value: merging is the fold's.

pub mod anthropic;
pub mod bedrock_converse;
pub mod common;
pub mod gemini;
pub mod ollama;
pub mod openai_chat;
pub mod openai_responses;

pub use common::{Adapter, Leaves};

use crate::engine::value::{Map, Value};

/// The wire formats, in the order of spec/providers.md (the twin's `PROVIDERS`).
pub const PROVIDERS: &[&str] = &[
    "openai-chat",
    "openai-responses",
    "anthropic",
    "gemini",
    "bedrock-converse",
    "ollama",
];

/// A new adapter for the wire format `name`.
pub fn adapter(name: &str) -> Option<Box<dyn Adapter>> {
    Some(match name {
        "openai-chat" => Box::new(openai_chat::Adapter::new()),
        "openai-responses" => Box::new(openai_responses::Adapter::new()),
        "anthropic" => Box::new(anthropic::Adapter::new()),
        "gemini" => Box::new(gemini::Adapter::new()),
        "bedrock-converse" => Box::new(bedrock_converse::Adapter::new()),
        "ollama" => Box::new(ollama::Adapter::new()),
        _ => return None,
    })
}

/// [`detect`] of an event from its JSON text, without parsing it into values: its top-level
/// keys, with the values `detect` reads (`type` and `object` as strs, `error` as an object)
/// and null for the rest. None for text that is not one object of distinct keys, and where
/// `detect` tells nothing: the caller then parses the event and tells it the usual way. (A
/// typed fast path must then take the event, which it does only for events the usual parse
/// reads alike: this reading alone is not the generic parse's.)
pub fn detect_raw(raw: &[u8]) -> Option<&'static str> {
    use serde_json::value::RawValue;
    let text = std::str::from_utf8(raw).ok()?;
    let members: Vec<(common::Str, &RawValue)> = serde_json::from_str::<Members>(text).ok()?.0;
    let mut map = Map::with_capacity_and_hasher(members.len(), Default::default());
    for (key, raw) in members {
        let value = match (&*key.0, raw.get().as_bytes().first()) {
            ("type" | "object", Some(b'"')) => {
                Value::Str(serde_json::from_str::<String>(raw.get()).ok()?)
            }
            ("error", Some(b'{')) => Value::Dict(Default::default()),
            _ => Value::Null,
        };
        if map.insert(key.0.into_owned(), value).is_some() {
            return None; // a key twice: the usual parse decides what it means
        }
    }
    detect(&Value::Dict(std::sync::Arc::new(map)))
}

/// An object's members in order, their values unread.
struct Members<'a>(Vec<(common::Str<'a>, &'a serde_json::value::RawValue)>);

impl<'de> serde::Deserialize<'de> for Members<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Fields;
        impl<'de> serde::de::Visitor<'de> for Fields {
            type Value = Members<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<M: serde::de::MapAccess<'de>>(
                self,
                mut map: M,
            ) -> Result<Members<'de>, M::Error> {
                let mut members = Vec::new();
                while let Some(key) = map.next_key::<common::Str<'de>>()? {
                    members.push((key, map.next_value()?));
                }
                Ok(Members(members))
            }
        }
        deserializer.deserialize_map(Fields)
    }
}

/// The wire format of a stream's first event (the twin's `detect`, same order).
pub fn detect(event: &Value) -> Option<&'static str> {
    let Value::Dict(map) = event else {
        return None;
    };
    if let Some(Value::Str(kind)) = map.get("type") {
        if kind.starts_with("response.") {
            return Some("openai-responses");
        }
        if kind == "error" {
            return Some(if map.contains_key("sequence_number") {
                "openai-responses"
            } else {
                "anthropic"
            });
        }
        if anthropic::EVENT_TYPES.contains(&kind.as_str()) {
            return Some("anthropic");
        }
    }
    if map.len() == 1
        && bedrock_converse::EVENT_TYPES.contains(&map.keys().next().map_or("", |k| k.as_str()))
    {
        return Some("bedrock-converse");
    }
    if map.contains_key("candidates")
        || map.contains_key("usageMetadata")
        || map.contains_key("promptFeedback")
    {
        return Some("gemini");
    }
    if map.contains_key("done") && (map.contains_key("response") || map.contains_key("message")) {
        return Some("ollama");
    }
    if map.contains_key("choices")
        || matches!(map.get("object"), Some(Value::Str(o)) if o == "chat.completion.chunk")
    {
        return Some("openai-chat");
    }
    if map.len() == 1 && matches!(map.get("error"), Some(Value::Dict(_))) {
        return Some("openai-chat"); // an OpenAI-compatible server's error before any chunk
    }
    None
}
