//! The parts a content block gives: its start as a text, reasoning or tool-call part (an
//! unknown block kept verbatim, its deltas applied, and emitted at its stop), and each
//! delta's part.

use super::*;

/// Deltas of a verbatim block whose fields replace the block's (the SDK's rule), where the
/// string fields of another delta append.
const REPLACING: &[&str] = &["compaction_delta"];

/// The part a content_block_start gives (None for an unknown block, emitted at its stop).
pub(super) fn start_part(block: &mut Block, raw: &Value) -> Result<Option<Value>, String> {
    let index = Value::Int(block.part_index);
    let mut part = Obj::new();
    let Some(map) = dict(Some(raw)) else {
        return Ok(None);
    };
    match block.kind {
        Kind::Text => {
            let text = match map.get("text") {
                None | Some(Value::Null) => str_value(""),
                other => str_value(string(other, "content_block_start", "text")?),
            };
            part.put("part", str_value("text")).put("text", text);
            if let Some(Value::List(citations)) = map.get("citations") {
                // [] too: kept as sent (E102)
                part.put("citations", Value::List(citations.clone()));
            }
            let mut attributes = Obj::new();
            for (key, value) in map.iter() {
                if !matches!(key.as_str(), "type" | "text" | "citations") {
                    attributes.put(key, value.clone());
                }
            }
            if !attributes.is_empty() {
                part.put("attributes", attributes.build());
            }
            part.put("index", index);
            // a block the stream sent is kept even when empty (E79)
            part.put("opened", Value::Bool(true));
        }
        Kind::Thinking => {
            let text = match map.get("thinking") {
                None | Some(Value::Null) => str_value(""),
                other => str_value(string(other, "content_block_start", "thinking")?),
            };
            part.put("part", str_value("reasoning")).put("text", text);
            match map.get("signature") {
                None | Some(Value::Null) => {}
                Some(Value::Str(sig)) if sig.is_empty() => {}
                Some(sig) => {
                    part.put("payload", payload("signature", sig.clone()));
                }
            }
            part.put("index", index);
        }
        Kind::Redacted => {
            let data = map.get("data").cloned().unwrap_or(Value::Null);
            part.put("part", str_value("reasoning"))
                .put("text", str_value(""));
            part.put("payload", payload("redacted_thinking", data));
            part.put("redacted", Value::Bool(true)).put("index", index);
        }
        Kind::ToolUse => {
            let name = text_field(map.get("name"), "content_block_start.content_block.name")?;
            block.name = name.cloned().unwrap_or(Value::Null);
            let id = text_field(map.get("id"), "content_block_start.content_block.id")?;
            part.put("part", str_value("tool_call"));
            part.put("id", id.cloned().unwrap_or(Value::Null));
            part.put("name", block.name.clone());
            part.put("provider_index", index);
            match map.get("input") {
                Some(given @ Value::Dict(d)) if !d.is_empty() => {
                    part.put("arguments", given.clone());
                }
                Some(given @ Value::Str(t)) if !t.is_empty() => {
                    part.put("arguments", given.clone());
                }
                _ => {}
            }
            let mut extra = Obj::new();
            for (key, value) in map.iter() {
                if !matches!(key.as_str(), "type" | "id" | "name" | "input") {
                    extra.put(key, value.clone());
                }
            }
            if !extra.is_empty() {
                part.put("extra", extra.build());
            }
        }
        Kind::Unknown => {
            block.raw = Some((**map).clone());
            return Ok(None);
        }
    }
    Ok(Some(part.build()))
}

/// A delta of an unknown block: JSON input pieces kept, the fields of a `REPLACING` delta set,
/// string fields appended, other fields set.
pub(super) fn apply(block: &mut Block, delta: &Value, type_: &str) -> Result<(), String> {
    let Some(map) = dict(Some(delta)) else {
        return Ok(());
    };
    for (key, value) in map.iter() {
        if key == "type" {
            continue;
        }
        if type_ == "input_json_delta" && key == "partial_json" {
            let piece = string(Some(value), type_, key)?;
            block.json.push(piece.to_owned());
            continue;
        }
        let Some(raw) = block.raw.as_mut() else {
            return Ok(());
        };
        if REPLACING.contains(&type_) {
            // the delta holds the block's whole field so far (E101)
            raw.insert(key.clone(), value.clone());
            continue;
        }
        let joined = match (raw.get(key), value) {
            (None | Some(Value::Null), Value::Str(_)) => None,
            (Some(Value::Str(current)), Value::Str(text)) => Some(format!("{current}{text}")),
            _ => None,
        };
        match joined {
            Some(text) => raw.insert(key.clone(), Value::Str(text)),
            None => raw.insert(key.clone(), value.clone()),
        };
    }
    Ok(())
}

/// The unknown part of a block: the block as sent, its deltas applied.
pub(super) fn unknown_part(block: &Block) -> Value {
    let mut raw = block.raw.clone().unwrap_or_default();
    let text = block.json.concat();
    if !text.is_empty() {
        let input = match parse(text.as_bytes()) {
            Ok(value) => value,
            Err(_) => Value::Str(text),
        };
        raw.insert("input".to_owned(), input);
    }
    let mut part = Obj::new();
    part.put("part", str_value("unknown"))
        .put("provider", str_value(NAME));
    part.put("kind", str_value(&block.type_));
    part.put("raw", Value::Dict(Arc::new(raw)));
    part.put("index", Value::Int(block.part_index));
    part.build()
}

pub(super) fn strip_delta(type_: &str) -> &str {
    match type_.strip_suffix("_delta") {
        Some(head) if type_ != "_delta" => head,
        _ => type_,
    }
}

/// The part one text, citation, thinking, signature or input JSON delta gives.
pub(super) fn delta_part(delta: &Value, type_: &str, index: i64) -> Result<Value, String> {
    if type_ == "citations_delta" {
        let citation = get(delta, "citation").cloned().unwrap_or(Value::Null);
        let mut part = Obj::new();
        part.put("part", str_value("text"))
            .put("text", str_value(""));
        part.put("citations", list_value(vec![citation]));
        part.put("index", Value::Int(index));
        return Ok(part.build());
    }
    let field = delta_field(type_);
    let text = string(get(delta, field), type_, field)?;
    Ok(string_delta_part(type_, text, index))
}

/// The field of a delta type that carries its string (input_json_delta for any other).
pub(super) fn delta_field(type_: &str) -> &'static str {
    match type_ {
        "text_delta" => "text",
        "thinking_delta" => "thinking",
        "signature_delta" => "signature",
        _ => "partial_json",
    }
}

/// The part of a text, thinking, signature or input JSON delta (`type_`) carrying `text`.
pub(super) fn string_delta_part(type_: &str, text: &str, index: i64) -> Value {
    match type_ {
        "text_delta" => text_part(text, false, Some(index)),
        "thinking_delta" => text_part(text, true, Some(index)),
        "signature_delta" => {
            let mut part = Obj::new();
            part.put("part", str_value("reasoning"))
                .put("text", str_value(""));
            part.put("payload", payload("signature", str_value(text)));
            part.put("index", Value::Int(index));
            part.build()
        }
        _ => arguments_part(text, index),
    }
}
