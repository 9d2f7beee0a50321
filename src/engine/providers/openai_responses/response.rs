//! The Responses adapter on the response's own events: `response.created` / `in_progress` /
//! `completed` / `incomplete` / `failed` (the response's fields, its usage, the output items
//! as finally reported, the finish reason and status) and `error`.

use crate::engine::providers::common::{get, list_value, str_value, text_field, Leaves, Obj};
use crate::engine::value::{Map, Value};

use super::*;

impl Adapter {
    pub(super) fn response(&mut self, event: &Value, kind: &str, leaves: &mut Leaves) -> Res {
        let response = match get(event, "response") {
            Some(response @ Value::Dict(_)) => response,
            other => {
                return Err(format!(
                    "{kind}: 'response' must be a dict, not {}",
                    type_name(other)
                ))
            }
        };
        let Value::Dict(fields) = response else {
            return Ok(());
        };
        if kind == "response.created" {
            if !self.created {
                self.created_id = common::get_str(response, "id").map(str::to_owned);
            }
            self.created = true;
        }
        let terminal = matches!(
            kind,
            "response.completed" | "response.incomplete" | "response.failed"
        );
        if terminal {
            let output: &[Value] = match fields.get("output") {
                None | Some(Value::Null) => &[],
                Some(Value::List(items)) => items,
                other => {
                    return Err(format!(
                        "{kind}: 'response.output' must be a list, not {}",
                        type_name(other)
                    ))
                }
            };
            for (index, item) in output.iter().enumerate() {
                if !matches!(item, Value::Dict(_)) {
                    return Err(format!(
                        "{kind}: 'response.output[{index}]' must be a dict, not {}",
                        type_name(Some(item))
                    ));
                }
                self.item_done(index as i64, item, kind, leaves)?;
            }
            self.terminal = true;
        }
        let mut leaf = Obj::new();
        if terminal {
            if let Some(audio) = self.audio_part() {
                leaf.put("parts", list_value(vec![audio]));
            }
        }
        if let Some(Value::Dict(usage)) = fields.get("usage") {
            leaf.put("usage", usage_of(usage));
        }
        if kind == "response.incomplete" {
            if let Some(details @ Value::Dict(_)) = fields.get("incomplete_details") {
                let reason = text_field(
                    get(details, "reason"),
                    format_args!("{kind}.response.incomplete_details.reason"),
                )?;
                if let Some(reason) = reason {
                    leaf.put("finish_reason", reason.clone());
                    let normalized = match reason {
                        Value::Str(text) if text == "max_output_tokens" => Some("length"),
                        Value::Str(text) if text == "content_filter" => Some("content_filter"),
                        _ => None,
                    };
                    leaf.put_opt("finish_reason_normalized", normalized.map(str_value));
                }
            }
        } else if kind == "response.completed" {
            let calls = self.items.values().any(|item| is_tool_call(&item.kind));
            leaf.put(
                "finish_reason_normalized",
                str_value(if calls { "tool_calls" } else { "stop" }),
            );
        } else if kind == "response.failed" {
            leaf.put("finish_reason_normalized", str_value("error"));
        }
        let rid = text_field(fields.get("id"), format_args!("{kind}.response.id"))?;
        leaf.put_opt("response_id", rid.cloned());
        let model = text_field(fields.get("model"), format_args!("{kind}.response.model"))?;
        leaf.put_opt("response_model", model.cloned());
        let mut meta = Obj::new();
        for (key, value) in fields.iter() {
            let value = match key.as_str() {
                "output" => list_value(Vec::new()),
                "usage" => Value::Null,
                _ => value.clone(),
            };
            meta.put(key, value);
        }
        let mut metadata = Obj::new();
        metadata.put("response", meta.build());
        if kind == "response.failed" {
            if let Some(error) = fields.get("error").filter(|e| !matches!(e, Value::Null)) {
                metadata.put("error", error.clone());
            }
        }
        leaf.put("provider_metadata", metadata.build());
        if kind == "response.completed" {
            leaf.put("status", str_value("complete"));
        } else if kind == "response.failed" {
            leaf.put("status", str_value("failed"));
        }
        leaves.push((0, leaf.build()));
        Ok(())
    }

    pub(super) fn error(&mut self, event: &Value, leaves: &mut Leaves) -> Res {
        let error = match get(event, "error") {
            Some(error @ Value::Dict(_)) => error.clone(),
            _ => {
                let mut out = Obj::new();
                if let Value::Dict(map) = event {
                    for (key, value) in map.iter() {
                        if key != "type" && key != "sequence_number" {
                            out.put(key, value.clone());
                        }
                    }
                }
                out.build()
            }
        };
        self.terminal = true;
        let mut errors = Obj::new();
        errors.put("error", error);
        let mut leaf = Obj::new();
        if let Some(audio) = self.audio_part() {
            leaf.put("parts", list_value(vec![audio]));
        }
        leaf.put("finish_reason_normalized", str_value("error"))
            .put("provider_metadata", errors.build())
            .put("status", str_value("failed"));
        leaves.push((0, leaf.build()));
        Ok(())
    }
}

/// The provider's usage verbatim, plus the normalized names it does not use.
fn usage_of(usage: &Map) -> Value {
    let mut out: Map = usage.clone();
    if !out.contains_key("input_tokens") {
        if let Some(v) = usage
            .get("prompt_tokens")
            .filter(|v| !matches!(v, Value::Null))
        {
            out.insert("input_tokens".to_owned(), v.clone());
        }
    }
    if !out.contains_key("output_tokens") {
        if let Some(v) = usage
            .get("completion_tokens")
            .filter(|v| !matches!(v, Value::Null))
        {
            out.insert("output_tokens".to_owned(), v.clone());
        }
    }
    if let Some(details @ Value::Dict(_)) = usage.get("input_tokens_details") {
        if let Some(v) = get(details, "cached_tokens").filter(|v| !matches!(v, Value::Null)) {
            out.insert("cache_read_tokens".to_owned(), v.clone());
        }
        if let Some(v) = get(details, "cache_write_tokens").filter(|v| !matches!(v, Value::Null)) {
            out.insert("cache_write_tokens".to_owned(), v.clone());
        }
    }
    if let Some(details @ Value::Dict(_)) = usage.get("output_tokens_details") {
        if let Some(v) = get(details, "reasoning_tokens").filter(|v| !matches!(v, Value::Null)) {
            out.insert("reasoning_tokens".to_owned(), v.clone());
        }
    }
    Value::Dict(std::sync::Arc::new(out))
}
