//! The message-level events of the Messages stream: `message_start` (the message's id, model,
//! usage and any content it opens with), `message_delta` (stop reason, cumulative usage),
//! `message_stop` and `error`.

use super::*;

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

impl Adapter {
    pub(super) fn message_start(&mut self, event: &Value) -> Result<Obj, String> {
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

    pub(super) fn message_delta(&mut self, event: &Value) -> Result<Obj, String> {
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

    pub(super) fn message_stop(&mut self, event: &Value) -> Obj {
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

    pub(super) fn error(&mut self, event: &Value) -> Obj {
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
}
